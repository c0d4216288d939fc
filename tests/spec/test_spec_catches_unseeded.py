"""Bugs nobody seeded (issue 13), each put into impl/ with a patch for one test: the spec must report it
through a claim whose expectation the spec computes itself. Every test first shows the claim holds
without the bug, so a pass is not vacuous."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

from zcspec.checks.faults.variant import swap
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.observe import observe_model_file, observe_plan
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.runtime.user_buffers import alloc_outputs, stage_inputs
from zcspec.impl.runtime.v1 import LoadOptions, load
from zcspec.impl.runtime.v1.observe import observe_execution
from zcspec.spec.check import check
from tests.helpers.runtime_v1 import device, mlp, passthrough
from tests.helpers.unseeded_bugs import attribute, installed


def _bug(name: str):
    """The bug ``name`` of tests/helpers/unseeded_bugs.py, as a context-manager factory."""
    return lambda: installed(name)


_lifetime_one_step_early = _bug("lifetime-one-step-early")
_align_one_unit_up = _bug("align-one-unit-up")
_refreshable_any_for_all = _bug("refreshable-any-for-all")
_disable_zero_copy_ignored = _bug("disable-zero-copy-ignored")
_every_output_copy_only = _bug("every-output-copy-only")

NO_BUG = contextlib.nullcontext


def _chain():
    """x -> Relu -> Neg -> Abs -> y, plus an atomic ReduceSum writing a graph output."""
    b = GraphBuilder("chain")
    x = b.input("x", (8, 16))
    b.output(b.op("Abs", [b.op("Neg", [b.op("Relu", [x])])]),
             b.op("ReduceSum", [x], shape=(8, 1), axes=(1,), keepdims=1))
    return b.build()


def _plan_violations(bug, soc="ascend910b") -> set[str]:
    with bug():
        st = compile_stages(_chain(), CompileOptions(soc=soc))
        return {v.invariant_id for v in check(observe_plan(st.graph, st.plan, soc=soc)).violations}


_zero_copy_units_take_freed_blocks = _bug("zero-copy-takes-freed-blocks")


def _zero_copy_flag_dropped():
    """The planner forgets that graph inputs are zero copy: they then take feature-map memory, and every
    claim that starts from the plan's own zero_copy flag is satisfied."""
    def make(zero_copy):
        return lambda self, r: None if zero_copy(self, r) == "input" else zero_copy(self, r)
    from zcspec.impl.compiler.memory import unit_facts
    return attribute(unit_facts.Facts, "zero_copy", make)


@pytest.mark.parametrize("bug, claim", [
    (_lifetime_one_step_early, "LAYOUT-LIFETIME-COVERS-USES"),
    (_align_one_unit_up, "LAYOUT-TENSOR-SIZE"),
    (_zero_copy_units_take_freed_blocks, "MEM-ZC-NOREUSE"),
    (_zero_copy_units_take_freed_blocks, "MEM-ZC-IO"),
    (_zero_copy_flag_dropped, "MEM-ZC-IO"),
])
def test_planner_bugs_are_caught(bug, claim):
    assert _plan_violations(NO_BUG) == set()
    assert claim in _plan_violations(bug)


def test_any_for_all_in_the_memcpy_addr_async_refresh_test_is_caught():
    """On ascend310p an atomic node's memset cannot be refreshed, its kernel can: ``any`` says the node can,
    the pass leaves its graph output bound to the memset, and the spec's own SoC table says otherwise."""
    def violations(bug):
        with bug():
            st = compile_stages(_chain(), CompileOptions(soc="ascend310p"))
            report = check(observe_model_file(encode(st.model), st.graph))
        assert "PASS-LAYOUT-CONFLICT" in report.exercised
        return [v for v in report.violations if v.invariant_id == "PASS-LAYOUT-CONFLICT"]
    assert violations(NO_BUG) == []
    (v,) = violations(_refreshable_any_for_all)
    assert "memset" in v.message and "reducesum" in v.culprit


def _run_v1(model, bug, *, inputs):
    dev = device()
    with bug():
        lm = load(dev, model, LoadOptions())
        rec = lm.execute(stage_inputs(dev, model, inputs), alloc_outputs(dev, model))
        return check(observe_execution(lm, rec))


def test_disable_zero_copy_ignored_for_io_sharing_an_address_is_caught():
    """Data -> NetOutput: input y and output y share their bytes; GE copies both (DisableZeroCopy)."""
    inputs = {"x": np.arange(4, dtype=np.float32), "y": -np.ones((2, 3), np.float32)}
    assert _run_v1(passthrough(), NO_BUG, inputs=inputs).ok
    report = _run_v1(passthrough(), _disable_zero_copy_ignored, inputs=inputs)
    assert "V1-COPY-ONLY-ONCE" in {v.invariant_id for v in report.violations}


def test_every_output_made_copy_only_is_caught():
    inputs = {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}
    good = _run_v1(mlp(), NO_BUG, inputs=inputs)
    assert good.ok and "V1-ZERO-COPY-WHEN-ELIGIBLE" in good.exercised
    report = _run_v1(mlp(), _every_output_copy_only, inputs=inputs)
    found = [v for v in report.violations if v.invariant_id == "V1-ZERO-COPY-WHEN-ELIGIBLE"]
    assert {v.culprit for v in found} == {"buffer 'relu:0'", "buffer 'neg:0'"}


def test_hccl_rule_forgotten_is_caught_where_hccl_is_the_one_reason():
    """The catalogue's v1-hccl-disable-zero-copy-forgotten, on a model whose HCCL tasks declare no zero-copy
    support, loaded for GE's legacy path (the broadcast's output is then copied for that reason alone)."""
    from zcspec.checks.execution import MODEL_EDITS
    from zcspec.checks.faults.runtime_v1 import _hccl_disable_zero_copy_forgotten
    from zcspec.checks.zoo import load as zoo_load
    model = MODEL_EDITS["hccl_zero_copy_off"](compile_stages(zoo_load("builtin:collectives"),
                                                             CompileOptions(soc="ascend910b")).model)
    x = np.ones((4, 32), np.float32)

    def report(bug):
        dev = device()
        with bug():
            lm = load(dev, model, LoadOptions(legacy_copy_only_addrs=True))
            rec = lm.execute(stage_inputs(dev, model, {"x": x, "y": x}), alloc_outputs(dev, model))
            return check(observe_execution(lm, rec))
    good = report(NO_BUG)
    assert "V1-HCCL-COPY" in good.exercised and not [v for v in good.violations if v.invariant_id.startswith("V1-")]
    bad = report(_hccl_disable_zero_copy_forgotten)
    assert {v.culprit for v in bad.violations if v.invariant_id == "V1-HCCL-COPY"} == {"buffer 'hcombroadcast_5:0'"}
