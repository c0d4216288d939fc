"""kernel_steps: every kernel onnxruntime can run reaches DEVICE-KERNEL-ORACLE in every probe program, with the
edge attributes of the kernels' unit tests, and the nodes onnxruntime refuses are refused on the device
(through the executor's numpy-refusal branch for some of them).

Bugs the mutation benchmark planted that only tests/device/test_kernels_ort_*.py caught before (a negative
Pad end that grows instead of crops, a dropped LRN rank check, the executor's KernelError re-raise replaced
by ``pass``) are planted here on the kernel registry or the executor, and the probes must notice."""
from __future__ import annotations

import json
import random

import attrs
import numpy as np
import pytest
from hypothesis import find, given, settings, strategies as st

from zcspec.checks.device_probe_run import run_probe
from zcspec.checks.errors import ScenarioError
from zcspec.checks.strategies.device_probes import fixed_programs, programs
from zcspec.checks.strategies.kernel_step_form import io, step
from zcspec.checks.strategies import kernel_steps as kernel_steps_module
from zcspec.checks.strategies.kernel_steps import DRAWN_ELSEWHERE, NOT_ONNX, covered, kernel_steps
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.impl.device import KERNELS, KernelError, executor, operands
from zcspec.spec.observables.device import DeviceObservation
from zcspec.spec.registry import get
from tests.helpers.device_probes import violated, violations_of

pytest.importorskip("onnxruntime")
CLAIM = "DEVICE-KERNEL-ORACLE"
FLOAT_ONLY = kernel_steps_module._FLOAT_ONLY
PROGRAMS = fixed_programs(8)


def _oracle_steps(program):
    return [s for s in program if s["op"] == "oracle"]


def test_every_kernel_onnxruntime_runs_is_in_every_fixed_program():
    assert set(NOT_ONNX) <= set(KERNELS), "NOT_ONNX names an op the kernel registry no longer has"
    assert covered() | set(DRAWN_ELSEWHERE) == set(KERNELS) - set(NOT_ONNX)
    for program in PROGRAMS:
        assert {s["kernel"] for s in _oracle_steps(program)} == set(KERNELS) - set(NOT_ONNX)


def test_the_fixed_programs_draw_the_unit_tests_edge_attributes():
    steps = [s for p in PROGRAMS for s in _oracle_steps(p)]
    pads = [s for s in steps if s["kernel"] == "Pad"]
    # every mode (kernel_steps_refused's steps add modes ONNX does not define)
    assert {s["attrs"].get("mode", "constant") for s in pads} >= {"constant", "reflect", "edge", "wrap"}
    for program in PROGRAMS:   # a constant Pad that crops an end, in every program
        assert any(s["attrs"].get("mode") == "constant" and min(s["attrs"]["pads"][len(s["attrs"]["pads"]) // 2:]) < 0
                   for s in _oracle_steps(program) if s["kernel"] == "Pad")
    slice_steps = [v for s in steps if s["kernel"] == "Slice" and len(s["inputs"]) == 5 for v in s["inputs"][4]["values"]]
    assert min(slice_steps) < 0 < max(slice_steps)
    keepdims = {s["attrs"].get("keepdims", 1) for s in steps if s["kernel"].startswith("Reduce")}
    assert keepdims == {0, 1}
    assert any(a < 0 for s in steps if s["kernel"] == "Concat" for a in [s["attrs"]["axis"]])
    assert {s["opset"] for s in steps if s["kernel"] == "Resize"} >= {11, 13, 18}
    assert any(s["attrs"].get("noop_with_empty_axes") == 1 for s in steps if s["kernel"].startswith("Reduce"))


@settings(max_examples=12, deadline=None)
@given(st.randoms(use_true_random=False))
def test_kernel_steps_of_any_seed_run_clean_and_only_the_refused_nodes_are_refused(rng):
    """Random seeds (the random campaign's probes leave kernel steps out: a quarter of a second each)."""
    runs = run_probe(kernel_steps(rng)).oracle_runs
    assert not get(CLAIM).violations(DeviceObservation("probe", (), oracle_runs=runs))
    refused = [r for r in runs if r.refused is not None]
    fixed = {"Gather", "LRN", "BatchNormalization", "Gemm", "Conv", "MatMul"}
    assert fixed <= {r.op_type for r in refused} <= fixed | FLOAT_ONLY
    assert all(r.oracle_error for r in refused)
    assert all(r.op_type in fixed or r.inputs[0].dtype == "int32" for r in refused)


def _int32_unary(op: str) -> list[dict]:
    rng = random.Random(0)
    while True:
        drawn = kernel_steps_module._unary(op)(rng)
        if drawn[0]["inputs"][0]["dtype"] == "int32":
            return drawn


def test_the_float_only_unary_ops_are_drawn_with_integer_inputs_onnxruntime_refuses():
    """ONNX's schemas take floating types only for these: an int32 input is a node onnxruntime refuses."""
    assert FLOAT_ONLY == {"Erf", "Exp", "Floor", "LeakyRelu", "Log", "Reciprocal", "Sigmoid", "Sqrt", "Tanh"}
    runs = run_probe([s for op in sorted(FLOAT_ONLY) for s in _int32_unary(op)]).oracle_runs
    assert [r.refused for r in runs] == ["KernelError"] * len(FLOAT_ONLY) and all(r.oracle_error for r in runs)
    assert not get(CLAIM).violations(DeviceObservation("probe", (), oracle_runs=runs))


def test_a_float_only_check_that_lost_reciprocal_fails(monkeypatch):
    """The mutation run's elementwise.py:42 survivor: Reciprocal dropped from the kernel's float-only set, so an
    integer Reciprocal ran (onnxruntime refuses the node); no probe gave it an integer input."""
    from zcspec.impl.device.kernels import elementwise
    monkeypatch.setattr(elementwise, "_FLOAT_ONLY", elementwise._FLOAT_ONLY - {"Reciprocal"})
    runs = run_probe(_int32_unary("Reciprocal")).oracle_runs
    found = get(CLAIM).violations(DeviceObservation("probe", (), oracle_runs=runs))
    assert found and "the device must refuse it" in found[0].message


def test_the_random_campaigns_probes_leave_kernel_steps_out():
    program = find(programs(), lambda p: True)
    assert not {s["kernel"] for s in program if s["op"] == "oracle"} & {"Pad", "Gemm", "Where"}


def test_numpy_refusing_a_kernels_operands_is_the_executors_kernel_error():
    """Gemm with a bias that does not broadcast, Conv with a bias of the wrong length, BatchNormalization with
    a scale of the wrong length: the kernels do not check these, numpy refuses, and run_kernel turns it into
    a KernelError naming the task (so the probe records a refusal, not a crash)."""
    for program in PROGRAMS:
        runs = run_probe(program).oracle_runs
        through_numpy = {r.op_type for r in runs if r.refused == "KernelError" and "ValueError:" in r.message}
        assert through_numpy == {"Gemm", "Conv", "BatchNormalization"}
        assert all(r.task in r.message for r in runs if r.refused)


def _swallowing_executor(dev, task, token, sid):
    """run_kernel with its numpy-refusal branch's ``raise`` replaced by ``pass`` (the mutant): ``raw`` unbound."""
    bound = operands.bind(dev, task, sid)
    try:
        raw = KERNELS[task.op_type](task, bound.ins, bound.outs)
    except KernelError:
        raise
    except (ValueError, TypeError, IndexError, ArithmeticError):
        pass
    operands.commit(dev, task, bound, operands.check_results(task, bound, raw), sid)  # noqa: F821


def test_a_swallowed_numpy_refusal_crashes_the_probe(monkeypatch):
    monkeypatch.setitem(executor.RUNNERS, "kernel", _swallowing_executor)
    gemm = [s for s in kernel_steps(random.Random(0)) if s["kernel"] == "Gemm"][1]
    with pytest.raises(UnboundLocalError):
        run_probe([gemm])


def _pad_without_end_crops(real):
    """indexing.pad with its negative end pads ignored (the crop at the end lost, as when ``(d + e)`` became
    ``(d - e)``): its result is longer than onnxruntime's."""
    def pad(task, ins, outs):
        pads = list(task.attr("pads"))
        half = len(pads) // 2
        kept = tuple(pads[:half] + [max(p, 0) for p in pads[half:]])
        return real(attrs.evolve(task, attrs=tuple((k, kept if k == "pads" else v) for k, v in task.attrs)), ins, outs)
    return pad


def test_a_pad_that_loses_its_end_crop_is_caught(monkeypatch):
    monkeypatch.setitem(KERNELS, "Pad", _pad_without_end_crops(KERNELS["Pad"]))
    for program in PROGRAMS[:2]:
        found = violations_of(CLAIM, [program])
        assert found and all("Pad" in v.culprit for v in found)


def test_an_lrn_without_its_rank_check_is_caught(monkeypatch):
    """nn.py's LRN without ``x.ndim < 3`` runs a rank-2 input (normalising over axis 1), which onnxruntime refuses."""
    real = KERNELS["LRN"]

    def unchecked(task, ins, outs):
        if ins[0].ndim == 2:
            return tuple(r[:, :, 0] for r in real(task, [ins[0][:, :, None]], [o[:, :, None] for o in outs]))
        return real(task, ins, outs)

    monkeypatch.setitem(KERNELS, "LRN", unchecked)
    found = violations_of(CLAIM, PROGRAMS[:1])
    assert found and all("LRN" in v.culprit and ("must refuse it" in v.message or "changed" in v.message)
                         for v in found)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_a_pool_that_takes_only_images_is_caught(monkeypatch, op):
    """pool.py's ``_setup`` with ``x.ndim < 4`` for ``< 3`` refuses every 1-D pool, which onnxruntime runs: before the
    oracle steps drew pools of one spatial axis as well as two, only crashes of the ONNX node tests and shipped
    cases with 1-D pools showed it, and no claim."""
    real = KERNELS[op]

    def images_only(task, ins, outs):
        if ins[0].ndim < 4:
            raise KernelError(task.name, op, f"needs an N x C x spatial input, got shape {ins[0].shape}")
        return real(task, ins, outs)

    monkeypatch.setitem(KERNELS, op, images_only)
    found = violations_of(CLAIM, PROGRAMS[:2])
    assert found and all(op in v.culprit and "was refused" in v.message for v in found
                         if "must refuse it" not in v.message)


def test_verify_catches_a_comparison_kernel_that_drops_equality(monkeypatch):
    """Plain ``zcspec verify`` (its device cases) fails when GreaterOrEqual computes Greater: no verify model
    has a GreaterOrEqual, only the oracle steps run it."""
    monkeypatch.setitem(KERNELS, "GreaterOrEqual", lambda task, ins, outs: (np.greater(*ins),))
    broken = verify(VerifyConfig(models=(), kinds=("device",), examples=0, proofs=False, corpus=False))
    bad = [f.violation for f in broken.findings if f.violation.invariant_id == CLAIM]
    assert bad and all("GreaterOrEqual" in v.culprit for v in bad) and not broken.ok([CLAIM])


def test_an_accumulating_kernels_outputs_are_cleaned_first():
    x = io([2, 3], "float32", [0.5, 1, 1.5, 2, 2.5, 3])
    (run,) = run_probe([step("ReduceSum", [x, io([1], "int64", [-1])], {"keepdims": 0})]).oracle_runs
    assert set(run.before[0]) == {"0"} and run.refused is None
    assert np.frombuffer(bytes.fromhex(run.after[0]), np.float32).tolist() == [3.0, 7.5]


def test_onnx_only_inputs_and_attrs_reach_onnxruntime_alone():
    tile = step("Tile", [io([2], "float32", [1, 2]), io([1], "int64", [3], index=1, onnx_only=True)],
                {"repeats": [3]}, onnx_attrs={})
    (run,) = run_probe([tile]).oracle_runs
    assert len(run.inputs) == 1 and json.loads(run.attrs) == {"repeats": [3]} and json.loads(run.onnx_attrs) == {}
    assert run.refused is None and run.oracle[0].data == run.after[0]
    assert violated([[tile]]) == set()


@pytest.mark.parametrize("bad, why", [
    ({"values": [1, 2, 3]}, "must be a flat list of 2 numbers"),
    ({"values": ["a", "b"]}, "must be a flat list"),
    ({"onnx_only": True, "index": 1}, "onnx_only input needs its values"),
])
def test_a_malformed_input_of_an_oracle_step_names_itself(bad, why):
    x = {"shape": [2], "dtype": "float32", **bad}
    with pytest.raises(ScenarioError, match=rf"device probe step 0: .*{why}"):
        run_probe([step("Relu", [x], {}, outs=[io([2])])])
