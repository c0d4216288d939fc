"""DEVICE-KERNEL-ORACLE: a probe's oracle steps run reductions (float32 and int32, negative axes, keepdims),
ConvTransposes (grouped, strided, padded, with and without a bias) and LSTM/GRU nodes (forward, reverse,
bidirectional, either layout) on the device, and the checker runs onnxruntime on the same input bytes; the
spec holds the device's outputs, or its refusal, to onnxruntime's. verify's models reached few of these
kernels' branches, so a reverse LSTM run forwards, or a ConvTranspose that dropped its bias, passed verify.

Each breakage is installed with monkeypatch on the kernel registry (impl/device/kernels) or a kernel module's
helper; the real device must pass the same probes clean."""
from __future__ import annotations

import json

import attrs
import numpy as np
import pytest

from zcspec.checks.errors import ScenarioError
from zcspec.checks.device_probe_run import run_probe
from zcspec.checks.strategies.device_probes import fixed_programs
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.impl.device import KERNELS, KernelError
from zcspec.impl.device.kernels import recurrent
from zcspec.spec.observables import dumps, loads
from zcspec.spec.observables.device import DeviceObservation
from zcspec.spec.registry import get
from tests.helpers.device_probes import probe_reports, violated, violations_of

CLAIM = "DEVICE-KERNEL-ORACLE"


def io(shape, dtype="float32", index=None):
    return {"shape": list(shape), "dtype": dtype, **({} if index is None else {"index": index})}


def step(kernel, inputs, outs, opset=13, **attrs_):
    return {"op": "oracle", "kernel": kernel, "inputs": inputs, "outs": outs, "attrs": attrs_, "opset": opset}


REDUCE = step("ReduceMax", [io((2, 3), "int32")], [io((3,), "int32")], axes=[-2], keepdims=0)
REDUCE_WRONG = step("ReduceMean", [io((2, 3))], [io((1, 3))], axes=[0], keepdims=0)
CONV_T = step("ConvTranspose", [io((1, 2, 2, 2)), io((2, 1, 2, 2)), io((2,))], [io((1, 2, 3, 3))], group=2,
              strides=[1, 1], pads=[0, 0, 0, 0], kernel_shape=[2, 2])
LSTM_REVERSE = step("LSTM", [io((2, 1, 2), index=0), io((1, 8, 2), index=1), io((1, 8, 2), index=2)],
                    [io((2, 1, 1, 2)), io((1, 1, 2)), io((1, 1, 2))], opset=14, hidden_size=2, direction="reverse",
                    layout=0, _present_inputs=[0, 1, 2])
GRU_BATCH_FIRST = step("GRU", [io((1, 3, 2), index=0), io((1, 6, 2), index=1), io((1, 6, 2), index=2),
                               io((1, 1, 2), index=5)],
                       [io((1, 3, 1, 2)), io((1, 1, 2))], opset=14, hidden_size=2, layout=1, linear_before_reset=1,
                       _present_inputs=[0, 1, 2, 5])


def test_the_real_device_passes_every_fixed_probe_and_each_exercises_the_claim():
    reports = probe_reports(fixed_programs(8))
    assert all(r.ok for r in reports), [str(v) for r in reports for v in r.violations]
    assert all(CLAIM in r.exercised for r in reports)
    runs = [r for p in fixed_programs(8) for r in run_probe(p).oracle_runs]
    assert {r.op_type for r in runs} >= {"ReduceMax", "ReduceMin", "ReduceMean", "ConvTranspose", "LSTM", "GRU"}
    assert {json.loads(r.attrs)["layout"] for r in runs if r.op_type in ("LSTM", "GRU")} == {0, 1}


def test_each_oracle_step_is_recorded_with_onnxruntimes_outputs():
    run = run_probe([REDUCE, REDUCE_WRONG, CONV_T, LSTM_REVERSE, GRU_BATCH_FIRST])
    reduce, wrong, conv, lstm, gru = run.oracle_runs
    x = np.frombuffer(bytes.fromhex(reduce.inputs[0].data), "<i4").reshape(2, 3)
    assert reduce.refused is None and bytes.fromhex(reduce.after[0]) == x.max(axis=0).astype("<i4").tobytes()
    assert (reduce.oracle[0].shape, reduce.oracle[0].dtype) == ((3,), "int32")
    assert reduce.oracle[0].data == reduce.after[0]
    assert wrong.refused == "KernelError" and wrong.oracle[0].shape == (3,) and wrong.after == wrong.before
    assert all(r.refused is None and not r.oracle_error for r in (conv, lstm, gru))
    onnx_attrs = json.loads(gru.onnx_attrs)
    assert onnx_attrs["layout"] == 1 and "_present_inputs" not in onnx_attrs
    obs = DeviceObservation("probe", (), oracle_runs=run.oracle_runs)
    assert not get(CLAIM).violations(obs) and get(CLAIM).exercised(obs)
    assert loads(DeviceObservation, dumps(obs)) == obs


def _swallowing(real):
    """A kernel that, instead of refusing, returns zeros of its output slots' shapes."""
    def run(task, ins, outs):
        try:
            return real(task, ins, outs)
        except KernelError:
            return tuple(np.zeros(o.shape, o.dtype) for o in outs)
    return run


def _without_bias(real):
    return lambda task, ins, outs: real(task, ins[:2], outs)


def _forwards(task):
    d = task.attr("direction", "forward")
    return ("forward", "forward") if d == "bidirectional" else ("forward",)


@pytest.mark.parametrize("breakage, program", [
    ("a reduction that swallows its shape check", [REDUCE_WRONG]),
    ("a ConvTranspose that drops its bias", [CONV_T]),
    ("an LSTM that runs reverse as forward", [LSTM_REVERSE]),
])
def test_a_broken_kernel_violates_the_claim(monkeypatch, breakage, program):
    if "swallows" in breakage:
        monkeypatch.setitem(KERNELS, "ReduceMean", _swallowing(KERNELS["ReduceMean"]))
    elif "bias" in breakage:
        monkeypatch.setitem(KERNELS, "ConvTranspose", _without_bias(KERNELS["ConvTranspose"]))
    else:
        monkeypatch.setattr(recurrent, "_directions", _forwards)
    assert violated([program]) == {CLAIM}, breakage
    assert violated([program + [REDUCE]]) == {CLAIM}
    monkeypatch.undo()
    assert violated([program]) == set()


def test_the_fixed_probes_catch_a_reverse_lstm_run_forwards_and_a_swallowed_refusal(monkeypatch):
    monkeypatch.setattr(recurrent, "_directions", _forwards)
    for op in ("ReduceMax", "ReduceMin", "ReduceMean", "ConvTranspose"):
        monkeypatch.setitem(KERNELS, op, _swallowing(KERNELS[op]))
    messages = [v.message for v in violations_of(CLAIM, fixed_programs(8))]
    assert any("differs from onnxruntime" in m for m in messages)
    assert any("the device must refuse it" in m for m in messages)


def test_the_claim_flags_a_refusal_that_changed_the_output_and_a_malformed_record():
    (run,) = run_probe([REDUCE_WRONG]).oracle_runs
    obs = DeviceObservation("probe", (), oracle_runs=(attrs.evolve(run, after=("00" * 12,)),))
    assert "output bytes changed" in get(CLAIM).violations(obs)[0].message
    obs = DeviceObservation("probe", (), oracle_runs=(attrs.evolve(run, after=()),))
    assert "does not hold each output's bytes" in get(CLAIM).violations(obs)[0].message


@pytest.mark.parametrize("bad, why", [({"inputs": "x"}, "needs inputs and outs"),
                                      ({"attrs": []}, "attrs \\(a dict\\)"),
                                      ({"inputs": [io((2,), index=0), io((2,), index=0)]}, "must be distinct")])
def test_a_malformed_oracle_step_names_itself(bad, why):
    with pytest.raises(ScenarioError, match=rf"device probe step 0: .*{why}"):
        run_probe([{**REDUCE, **bad}])


def test_verify_catches_a_reverse_lstm_run_forwards(monkeypatch):
    config = VerifyConfig(models=(), kinds=("device",), examples=0, proofs=False, corpus=False)
    clean = verify(config)
    assert clean.ok([CLAIM]) and clean.tally.distinct_count(CLAIM) >= 3
    monkeypatch.setattr(recurrent, "_directions", _forwards)
    broken = verify(config)
    assert CLAIM in {f.violation.invariant_id for f in broken.findings} and not broken.ok([CLAIM])


def test_pads_that_crop_an_axis_to_nothing_are_refused_as_onnxruntime_refuses_them():
    # the step verify's campaign drew at 6be5455: full extent (2-1)*1 + 3 = 4 along H, pads 2 + 2 leave 0
    crop_all = step("ConvTranspose", [io((1, 2, 2, 3)), io((2, 2, 3, 2)), io((2,))], [io((1, 2, 0, 2))], group=1,
                    strides=[1, 1], pads=[2, 1, 2, 1], kernel_shape=[3, 2])
    (run,) = run_probe([crop_all]).oracle_runs
    assert run.refused == "KernelError" and "no output is left" in run.message
    assert run.oracle_error and violated([[crop_all]]) == set()
