"""Execution scenarios: run a compiled model through the runtimes and observe each call.

A scenario's ``runtime`` dict picks the run:

- ``{"runtime": "v1", ...}`` / ``{"runtime": "v2", ...}``: one runtime, with its own
  options and buffer choices (impl/runtime/v1/scenario.py, impl/runtime/v2/scenario.py);
- ``{"runtime": "differential", "zero_copy": bool, "inputs": "normal" | "ones", "seed": n}``:
  the same inputs through v1 and v2; each output carries the other runtime's digest and
  its distance to the oracle (onnx.reference on the graph, or a light model's shipped
  reference when the inputs are ones), so EXEC-V1-EQ-V2 and EXEC-ORACLE can judge;
- ``{"runs": [dict, ...]}``: several of the above, observations concatenated.

Any run may carry ``"model_edits": [name, ...]`` (``MODEL_EDITS``): changes to the compiled
model before it runs, as a crafted or foreign model file would have them, so the runtime's own
defences (which the compiler normally makes redundant) are exercised too.
"""
from __future__ import annotations

import contextlib

import hashlib

import numpy as np

from zcspec.checks.oracle import OracleUnavailable, light_reference, oracle_outputs
from zcspec.impl.compiler import dtypes


def default_runtimes(graph) -> list[dict]:
    """What ``zcspec verify`` runs each zoo model with. A light model: both runtimes against each
    other and its shipped reference (input all ones), zero copy on. A built-in graph (small, and
    built to reach every rule): also zero copy off, v1 re-bound to fresh buffers, with
    reuseZeroCopyMemory, with an undersized output, and v2's strict and default modes with an
    undersized output (the first output at half its size)."""
    if graph.name in _LIGHT:
        return [{"runtime": "differential", "zero_copy": True, "inputs": "ones"}]
    out0 = graph.outputs[0]
    half = max(graph.desc[out0].nbytes // 2, 1)
    return [
        {"runtime": "differential", "zero_copy": True},
        {"runtime": "differential", "zero_copy": False},
        {"runtime": "v1", "calls": 2},
        {"runtime": "v1", "reuse_zero_copy_memory": 1},
        {"runtime": "v1", "output_sizes": {out0: half}},
        {"runtime": "v2", "always_zero_copy": True, "output_sizes": {out0: half}},
        {"runtime": "v2", "output_sizes": {out0: half}},
    ]


_LIGHT = {"bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet",
          "squeezenet", "vgg19", "zfnet512"}


def _digest(array) -> str:
    return "sha1:" + hashlib.sha1(np.ascontiguousarray(array).tobytes()).hexdigest()


def _inputs(model, runtime: dict) -> dict:
    rng = np.random.default_rng(runtime.get("seed", 0))
    out = {}
    for io in model.tasks.inputs:
        dt = dtypes.numpy_dtype(io.dtype)
        out[io.tensor] = (np.ones(io.shape, dt) if runtime.get("inputs") == "ones"
                          else rng.standard_normal(io.shape).astype(dt))
    return out


def _run_v1(model, arrays: dict, zero_copy: bool):
    from zcspec.impl.device import Device
    from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
    from zcspec.impl.runtime.v1.config import LoadOptions
    from zcspec.impl.runtime.v1.errors import RuntimeV1Error
    from zcspec.impl.runtime.v1.load import load
    from zcspec.impl.runtime.v1.observe import observe_execution

    dev = Device(model.soc)
    lm = load(dev, model, LoadOptions(zero_copy=zero_copy))
    ins, outs = stage_inputs(dev, model, arrays), alloc_outputs(dev, model)
    got = {}
    with contextlib.suppress(RuntimeV1Error):   # a refused call is observed through its record
        lm.execute(ins, outs)
        got = read_outputs(dev, model, outs)
    record = lm.last_call
    lm.unload()
    free_buffers(dev, ins + outs)
    names = [z.name for z in lm.io if z.role == "output"]
    return got, names, lambda results: observe_execution(lm, record, outputs=results)


def _run_v2(model, arrays: dict, zero_copy: bool):
    from zcspec.impl.device import Device, DeviceFault
    from zcspec.impl.runtime.v2.errors import RuntimeV2Error
    from zcspec.impl.runtime.v2.executor import StreamExecutor
    from zcspec.impl.runtime.v2.observe import io_names, observe_execution
    from zcspec.impl.runtime.v2.options import LoweringOption
    from zcspec.impl.runtime.v2.tensors import Tensor

    dev = Device(model.soc)
    ins = [Tensor(dev.upload(arrays[io.tensor], tag=f"user input {io.tensor}"), io.nbytes, name=io.tensor)
           for io in model.tasks.inputs]
    outs = [Tensor(dev.malloc(max(io.nbytes, 1), tag=f"user output {io.tensor}"), io.nbytes, name=io.tensor)
            for io in model.tasks.outputs]
    exe = StreamExecutor(model, dev, LoweringOption(zero_copy=zero_copy))
    got = {}
    with contextlib.suppress(RuntimeV2Error, DeviceFault):   # a failed call is observed through its record
        result = exe.execute(ins, outs)
        for io, t, given in zip(model.tasks.outputs, result, outs):
            read = dev.peek if t.placement == "device" else dev.host_read
            got[io.tensor] = read(t.addr, io.shape, dtypes.numpy_dtype(io.dtype))
            if t.addr != given.addr:   # a fallback allocation handed to the caller: give it back
                t.release()
    exe.unload()
    record = exe.records[-1]
    names = [io_names(model)[("output", io.index)] for io in model.tasks.outputs]
    return got, names, lambda results: observe_execution(exe, record, outputs=results)


def _oracle(graph, arrays: dict, runtime: dict) -> dict | None:
    if runtime.get("inputs") == "ones" and graph.name in _LIGHT:
        return light_reference(graph.name)
    try:
        return oracle_outputs(graph, arrays)
    except OracleUnavailable:
        return None


def _results(model, names, got: dict, peer: dict, oracle: dict | None, graph) -> tuple:
    from zcspec.spec.observables import OutputResult

    out = []
    for io, name, gname in zip(model.tasks.outputs, names, graph.outputs):
        if io.tensor not in got:
            continue
        mine, other = got[io.tensor], peer.get(io.tensor)
        diff = None
        if oracle is not None and gname in oracle:
            want = np.asarray(oracle[gname], np.float64).reshape(mine.shape)
            scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
            diff = float(np.max(np.abs(mine.astype(np.float64) - want), initial=0.0)) / scale
        out.append(OutputResult(name, _digest(mine), None if other is None else _digest(other), diff))
    return tuple(out)


def _differential(graph, model, runtime: dict) -> list:
    arrays = _inputs(model, runtime)
    zc = bool(runtime.get("zero_copy", True))
    got1, names1, obs1 = _run_v1(model, arrays, zc)
    got2, names2, obs2 = _run_v2(model, arrays, zc)
    oracle = _oracle(graph, arrays, runtime)
    return [obs1(_results(model, names1, got1, got2, oracle, graph)),
            obs2(_results(model, names2, got2, got1, oracle, graph))]


def observe_execution(scenario) -> list:
    from zcspec.impl.compiler.compile import build_model

    model = build_model(scenario.graph, scenario.compile)
    runs = scenario.runtime.get("runs", [scenario.runtime])
    return [o for runtime in runs for o in _observe_run(scenario, model, runtime)]


def _hccl_zero_copy_off(model):
    """Every HCCL task declares no zero-copy support for any buffer (ge-facts.md 6.8.1-6.8.2)."""
    import attrs

    tasks = tuple(attrs.evolve(t, zero_copy_in=(False,) * len(t.zero_copy_in),
                               zero_copy_out=(False,) * len(t.zero_copy_out)) if t.kind == "hccl" else t
                  for t in model.tasks.tasks)
    return attrs.evolve(model, tasks=attrs.evolve(model.tasks, tasks=tasks))


MODEL_EDITS = {"hccl_zero_copy_off": _hccl_zero_copy_off}


def _observe_run(scenario, model, runtime: dict) -> list:
    edits = runtime.get("model_edits", ())
    if unknown := sorted(set(edits) - set(MODEL_EDITS)):
        raise ValueError(f"execution scenario: unknown model_edits {unknown}; known: {sorted(MODEL_EDITS)}")
    for name in edits:
        model = MODEL_EDITS[name](model)
    runtime = {k: v for k, v in runtime.items() if k != "model_edits"}
    kind = runtime.get("runtime", "v1")
    if kind == "differential":
        return _differential(scenario.graph, model, runtime)
    if kind == "v2":
        from zcspec.impl.runtime.v2.scenario import observe_scenario
    elif kind == "v1":
        from zcspec.impl.runtime.v1.scenario import observe_scenario
    else:
        raise ValueError(f"execution scenario: runtime {kind!r} is not v1, v2 or differential")
    return observe_scenario(model, runtime)
