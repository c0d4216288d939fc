"""DEVICE-KERNEL-REFUSAL: a probe's compute steps run exactly when their shapes broadcast to the output,
and ``zcspec verify`` notices a device that swallows a kernel's refusal (impl/device/executor.py
``run_kernel`` re-raising KernelError is what it tests).

Each breakage is installed with monkeypatch on impl/device/executor.py's runner table (or a kernel of the
registry); the real device must pass the same probes clean."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zcspec.checks.errors import ScenarioError
from zcspec.checks.device_probe_run import run_probe
from zcspec.checks.strategies.device_probes import fixed_programs, programs
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.impl.device import KERNELS, KernelError, executor, operands
from zcspec.impl.device.observe import observe_device
from zcspec.spec.check import check
from zcspec.spec.invariants.device_kernels import broadcast
from zcspec.spec.observables import dumps, loads
from zcspec.spec.observables.device import DeviceObservation, KernelRun
from zcspec.spec.registry import get

CLAIM = "DEVICE-KERNEL-REFUSAL"
BASE = [{"op": "malloc", "size": 64, "read_only": False}]
LEGAL = {"op": "compute", "kernel": "Add", "a": [2, 3], "b": [3], "out": [2, 3], "dtype": "float32"}
NO_BROADCAST = {"op": "compute", "kernel": "Mul", "a": [2, 3], "b": [2], "out": [2, 3], "dtype": "int32"}
WRONG_OUT = {"op": "compute", "kernel": "Sub", "a": [2, 1], "b": [1, 3], "out": [2, 1], "dtype": "float16"}


def observation(program) -> DeviceObservation:
    run = run_probe(program)
    dev = run.device
    return observe_device(dev.trace, memory=(dev.mem.base, dev.mem.capacity), kernel_runs=run.kernel_runs)


def claim_violations(programs_) -> list:
    return [v for p in programs_ for v in get(CLAIM).violations(observation(p))]


def test_the_real_device_passes_every_fixed_probe_and_each_exercises_the_claim():
    for program in fixed_programs(8):
        report = check(observation(program))
        assert report.ok, str(report)
        assert CLAIM in report.exercised


@settings(max_examples=25, deadline=None)
@given(programs(max_steps=8))
def test_the_real_device_passes_random_probes(program):
    report = check(observation(program))
    assert report.ok, str(report)
    assert CLAIM in report.exercised


def test_each_compute_step_is_recorded_with_what_the_device_raised_and_the_bytes():
    obs = observation(BASE + [LEGAL, NO_BROADCAST, WRONG_OUT])
    legal, no_broadcast, wrong_out = obs.kernel_runs
    assert [r.step for r in obs.kernel_runs] == [1, 2, 3]
    assert legal.refused is None and legal.out_after != legal.out_before
    a = np.frombuffer(bytes.fromhex(legal.a_bytes), np.float32).reshape(2, 3)
    b = np.frombuffer(bytes.fromhex(legal.b_bytes), np.float32)
    assert bytes.fromhex(legal.out_after) == (a + b).tobytes()
    for r in (no_broadcast, wrong_out):
        assert r.refused == "KernelError" and r.task in r.message and r.out_after == r.out_before
    assert loads(DeviceObservation, dumps(obs)) == obs
    assert check(obs).ok and CLAIM in check(obs).exercised


@pytest.mark.parametrize("program", [
    BASE + [{"op": "read", "via": "kernel", "handle": 0, "offset": 0, "nbytes": 8}],   # no compute step
    BASE + [LEGAL, dict(LEGAL, kernel="Mul")],                                          # legal ones only
    BASE + [NO_BROADCAST, WRONG_OUT],                                                   # illegal ones only
])
def test_the_claim_is_not_exercised_without_a_legal_and_an_illegal_kernel(program):
    report = check(observation(program))
    assert report.ok and CLAIM not in report.exercised


def _run_kernel(refusal: str):
    """executor.run_kernel with a refusal mishandled: ``swallowed`` (nothing written, no error),
    ``garbage`` (swallowed, zeros written), ``written first`` (zeros written, then re-raised). A refusal is a
    KernelError or numpy rejecting the operands, as for the real one (the oracle steps' Gemm, Conv and
    BatchNormalization with a bias or scale that does not fit)."""

    def run_kernel(dev, task, token, sid):
        bound = operands.bind(dev, task, sid)
        try:
            results = operands.check_results(task, bound, KERNELS[task.op_type](task, bound.ins, bound.outs))
        except (KernelError, ValueError, TypeError, IndexError, ArithmeticError) as e:
            if refusal == "swallowed":
                return
            operands.commit(dev, task, bound, [np.zeros(o.shape, o.dtype) for o in bound.outs], sid)
            if refusal == "written first":
                raise KernelError(task.name, task.op_type, str(e)) from e
            return
        operands.commit(dev, task, bound, results, sid)

    return run_kernel


@pytest.mark.parametrize("refusal, says", [("swallowed", "ran, although"), ("garbage", "ran, although"),
                                           ("written first", "output bytes changed")])
def test_a_mishandled_refusal_violates_the_claim(monkeypatch, refusal, says):
    monkeypatch.setitem(executor.RUNNERS, "kernel", _run_kernel(refusal))
    bad = claim_violations(fixed_programs(4))
    assert bad and any(says in v.message for v in bad), [str(v) for v in bad]


def test_a_kernel_computing_the_wrong_values_violates_the_claim(monkeypatch):
    for op in ("Add", "Sub", "Mul"):
        monkeypatch.setitem(KERNELS, op, lambda task, ins, outs: (np.zeros_like(np.add(*ins)),))
    bad = claim_violations(fixed_programs(4))
    assert bad and all("its output differs from" in v.message for v in bad), [str(v) for v in bad]


def test_an_exception_that_is_no_device_refusal_crashes_the_probe(monkeypatch):
    def broken(task, ins, outs):
        raise RuntimeError("a bug in the kernel")

    monkeypatch.setitem(KERNELS, "Add", broken)
    with pytest.raises(RuntimeError, match="a bug in the kernel"):
        run_probe(BASE + [LEGAL])


def test_verify_catches_a_device_that_swallows_a_kernel_refusal(monkeypatch):
    """Plain ``zcspec verify`` (here its device cases) fails when executor.run_kernel swallows KernelError."""
    config = VerifyConfig(models=(), kinds=("device",), examples=0, proofs=False, corpus=False)
    clean = verify(config)
    assert clean.ok([CLAIM]) and clean.tally.distinct_count(CLAIM) >= 3
    monkeypatch.setitem(executor.RUNNERS, "kernel", _run_kernel("swallowed"))
    broken = verify(config)
    assert CLAIM in {f.violation.invariant_id for f in broken.findings}
    assert not broken.ok([CLAIM])


def _run(refused, message="", out_after="00", legal=False) -> KernelRun:
    shapes = ((2,), (2,), (2,)) if legal else ((2,), (3,), (2,))
    a = b = np.ones(2, np.float32).tobytes().hex()
    return KernelRun(0, "probe 0 Add", "Add", "float32", *shapes, a_bytes=a, b_bytes=b, out_before="00",
                     out_after=out_after, refused=refused, message=message)


@pytest.mark.parametrize("run, says", [
    (_run("DeviceFault", "task 'probe 0 Add': out of bounds"), "not KernelError"),
    (_run("KernelError", "shapes (2,) and (3,) do not broadcast"), "does not name the task"),
    (_run("KernelError", "task 'probe 0 Add': no", out_after="01"), "output bytes changed"),
    (_run("KernelError", "task 'probe 0 Add': no", legal=True), "was refused"),
    (_run(None, out_after=np.full(2, 3, np.float32).tobytes().hex(), legal=True), "its output differs"),
    (_run(None, out_after="zz", legal=True), "not tensors of its shapes"),
])
def test_the_claim_names_what_is_wrong_with_a_kernel_run(run, says):
    (v,) = get(CLAIM).violations(DeviceObservation("probe", (), None, (run,)))
    assert v.culprit == "compute step 0 (task 'probe 0 Add')" and says in v.message, str(v)


_SHAPES = st.lists(st.integers(-1, 3), max_size=3).map(tuple)
_BYTES = st.one_of(st.binary(max_size=40).map(bytes.hex), st.text("0123456789abxz", max_size=12))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.builds(KernelRun, st.integers(0, 9), st.sampled_from(["t", "probe 1 Add"]),
                          st.sampled_from(["Add", "Sub", "Mul", "Div"]), st.sampled_from(["float32", "int8", "x"]),
                          _SHAPES, _SHAPES, _SHAPES, _BYTES, _BYTES, _BYTES, _BYTES,
                          st.sampled_from([None, "KernelError", "DeviceFault"]), st.text(max_size=12)), max_size=4))
def test_the_claim_copes_with_any_kernel_run_it_judges(runs):
    obs = DeviceObservation("probe", (), None, tuple(runs))
    assert all(v.invariant_id == CLAIM for v in check(obs).violations)


@pytest.mark.parametrize("a, b", [((2, 3), (3,)), ((1,), ()), ((2, 1), (1, 3)), ((0,), (1,)), ((2,), (3,)),
                                  ((0,), (3,)), ((4, 1, 2), (3, 1)), ((), ())])
def test_the_spec_broadcast_rule_agrees_with_numpy(a, b):
    try:
        want = np.broadcast_shapes(a, b)
    except ValueError:
        want = None
    assert broadcast(a, b) == want


@pytest.mark.parametrize("change", [{"a": "2x3"}, {"out": [2, -1]}, {"dtype": "float99"}, {"kernel": None}])
def test_a_bad_compute_step_is_an_error_naming_it(change):
    with pytest.raises(ScenarioError) as e:
        run_probe([dict(LEGAL, **change)])
    assert e.value.key == "runtime.program[0]"


def test_an_expand_that_stops_checking_its_target_is_caught(monkeypatch):
    """impl/device/kernels/indexing.py expand without its broadcast check: it wraps the input around."""
    monkeypatch.setitem(KERNELS, "Expand", lambda task, ins, outs: (np.resize(ins[0], outs[0].shape),))
    legal = {"op": "compute", "kernel": "Expand", "a": [1, 3], "out": [2, 3], "dtype": "float32"}
    illegal = {"op": "compute", "kernel": "Expand", "a": [2, 3], "out": [1, 3], "dtype": "float32"}
    found = claim_violations([BASE + [legal, illegal]])
    assert {v.culprit for v in found} == {"compute step 2 (task 'probe 2 Expand')"}
    assert "ran, although its input [2, 3] does not broadcast to its output shape" in found[0].message


def test_expand_steps_run_or_are_refused_by_their_shapes():
    runs = [r for p in fixed_programs(8) for r in run_probe(p).kernel_runs if r.op_type == "Expand"]
    assert {r.refused is None for r in runs} == {True, False}
    assert all((r.refused is None) == (broadcast(r.a, r.out) == r.out) for r in runs)
    assert not claim_violations(fixed_programs(8))
