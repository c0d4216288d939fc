"""Whole models through runtime v2: bitwise equal to runtime v1, close to onnxruntime / an independent executor.

Light models: all nine (about 45 s in total on a shared core). Random executable graphs (checks/strategies/graphs.py): v2 with
every output mode equals v1 bitwise and the naive executor (checks/naive_executor.py:
one allocation per tensor, no planning) exactly, since all run the same kernels.
"""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import given, reject, settings

from zcspec.checks.naive_executor import run as naive_run
from zcspec.checks.zoo import LIGHT
from zcspec.checks.models import load_graph, zoo_path
from zcspec.checks.strategies.graphs import FAMILIES, graphs
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import LoadOptions, RuntimeV1Error, load
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.runner import run, run_counted, to_tensor
from tests.helpers.runtime_v2 import compiled

OPTIONS = {
    "default": LoweringOptions(), "always_zero_copy": LoweringOptions(always_zero_copy=True),
    "no_zero_copy": LoweringOptions(zero_copy=False), "ge_compat": LoweringOptions(ge_compat=True),
    "trusted_single_stream": LoweringOptions(always_zero_copy=True, trust_shape_on_out_tensor=True,
                                            enable_single_stream=True),
}


def _arrays(model, seed=0):
    rng = np.random.default_rng(seed)
    return {io.tensor: rng.standard_normal(io.shape).astype(np.float32) for io in model.tasks.inputs}


def run_v1(model, arrays) -> dict:
    dev = Device(model.soc)
    ins, outs = stage_inputs(dev, model, arrays), alloc_outputs(dev, model)
    lm = load(dev, model, LoadOptions(zero_copy=True))
    lm.execute(ins, outs)
    result = read_outputs(dev, model, outs)
    lm.unload()
    free_buffers(dev, ins + outs)
    return result


def run_v2(model, arrays, options=LoweringOptions()) -> dict:
    dev = Device(model.soc)
    ins, outs = stage_inputs(dev, model, arrays), alloc_outputs(dev, model)
    with StreamExecutor(model, dev, options) as exe:
        exe.execute([to_tensor(b) for b in ins], [to_tensor(b) for b in outs])
        result = read_outputs(dev, model, outs)
    free_buffers(dev, ins + outs)
    assert dev.counters.allocated_bytes == 0 and dev.counters.faults == 0   # unload left nothing behind
    return result


def assert_bitwise(a: dict, b: dict, what: str) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert a[name].tobytes() == b[name].tobytes(), f"{what}: output {name!r} differs"


def check_light_model(name: str) -> None:
    graph = load_graph(f"zoo:{name}")
    model = build_model(graph)
    arrays = _arrays(model)
    v2 = run_v2(model, arrays)
    assert_bitwise(v2, run_v1(model, arrays), f"{name} v2 vs v1")
    ref = ort.InferenceSession(zoo_path(name), providers=["CPUExecutionProvider"]).run(list(graph.outputs), arrays)
    for t, want in zip(graph.outputs, ref):
        np.testing.assert_allclose(v2[t], want, rtol=1e-4, atol=1e-5, err_msg=f"{name} output {t}")


@pytest.mark.parametrize("name", LIGHT)
def test_light_model_equals_v1_and_onnxruntime(name):
    check_light_model(name)


def test_runner_run_with_and_without_zero_copy():
    model = build_model(load_graph("zoo:squeezenet"))
    arrays = _arrays(model, 1)
    results = []
    for zero_copy in (True, False):
        dev = Device(model.soc)
        ins, outs = stage_inputs(dev, model, arrays), alloc_outputs(dev, model)
        delta = run_counted(model, dev, ins, outs, zero_copy=zero_copy)
        assert delta.d2d_bytes == (0 if zero_copy else model.tasks.outputs[0].nbytes)
        assert delta.alloc_calls == 2 and delta.free_calls == 0     # the allocator's first span(s), no more
        run(model, dev, ins, outs, zero_copy=zero_copy)
        results.append(read_outputs(dev, model, outs))
        free_buffers(dev, ins + outs)
        assert dev.counters.allocated_bytes == 0
    assert_bitwise(results[0], results[1], "zero copy on vs off")


@settings(max_examples=25)
@given(graphs(max_nodes=7))
def test_random_graphs_v2_equals_v1_bitwise(graph):
    model = compiled(graph)
    arrays = _arrays(model, 7)
    try:
        expected = run_v1(model, arrays)
    except RuntimeV1Error:  # v1 faults on some view-piece outputs (reported); the naive test covers v2 there
        reject()
    for label, options in OPTIONS.items():
        assert_bitwise(run_v2(model, arrays, options), expected, f"v2 ({label}) vs v1")


# The naive executor has no collectives and treats a concat view as an alias of its first input.
_NAIVE_FAMILIES = tuple(f for f in FAMILIES if f not in ("allreduce", "broadcast", "phony_concat", "fused_allreduce"))


@settings(max_examples=25)
@given(graphs(max_nodes=7, families=_NAIVE_FAMILIES))
def test_random_graphs_v2_equals_the_naive_executor(graph):
    model = compiled(graph)
    arrays = _arrays(model, 3)
    naive, _ = naive_run(Device(model.soc), graph, arrays)
    assert_bitwise(run_v2(model, arrays), {t: naive[t] for t in graph.outputs}, "v2 vs naive executor")
