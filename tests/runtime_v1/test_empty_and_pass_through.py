"""Two buffers GE runs and runtime v1 used to refuse (docs/ge-deviations.md, rows V9 and V6 before):

- a null 0-byte buffer for an I/O of 0 raw bytes (``davinci_model.cc`` ``CopyInputData`` skips a buffer of
  length 0: GE's ``copy_input_data_null_tensor``): it runs, nothing is read, written or copied through it;
  every other null buffer is still refused;
- an output given the very buffer of an input the model file places at the same logical address with the
  same size (a pass-through, GE's ``zero_copy_ok_when_input_directly_connected_to_output_with_same_addr``):
  it runs and the buffer keeps the input's bytes, in every copy mode; any other buffer an output shares
  with another I/O is still refused.

Each call is also judged by the spec's claims (V1-VALID-CALL-SUCCEEDS for the valid ones,
CALL-INVALID-REFUSED for the refused ones), and a runtime that lets the refused ones through fails there.
"""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.checks.scenario import Scenario, evaluate
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.runtime.user_buffers import UserBuffer, alloc_outputs, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import InvalidParam, LoadOptions, ParamInvalid, bind, load
from zcspec.impl.runtime.v1.observe import observe_execution
from zcspec.spec.check import check
from tests.helpers.runtime_v1 import device, passthrough

MODES = {
    "zero copy": LoadOptions(),
    "zero copy off": LoadOptions(zero_copy=False),
    "legacy copy-only addresses": LoadOptions(legacy_copy_only_addrs=True),
    "refreshable feature map": LoadOptions(feature_base_refreshable=True),
}
VALID, REFUSED = "V1-VALID-CALL-SUCCEEDS", "CALL-INVALID-REFUSED"


def _empty_input_model():
    """data, float (0,) -> Relu -> output: every I/O has 0 raw bytes."""
    b = GraphBuilder("empty_input")
    b.output(b.op("Relu", [b.input("data", (0,))], name="relu"))
    return build_model(b.build())


def _pass_and_relu():
    """x (2x8 float) -> NetOutput as output 0, and Relu(x) as output 1: output 0 is input 0's bytes."""
    b = GraphBuilder("pass_and_relu")
    x = b.input("x", (2, 8))
    b.output(x, b.op("Relu", [x], name="relu"))
    return b.build()


def _data_to_netoutput(offline: bool = False):
    """GE's BuildInputDirectlyConnectedToOutputGraph: data1 (int32 1x2x3x4) -> NetOutput; offline, a
    MemcpyAddrAsync copies it into an output of its own."""
    b = GraphBuilder("data_netoutput")
    b.output(b.input("data1", (1, 2, 3, 4), "int32"))
    return build_model(b.build(), CompileOptions(offline=offline))


def _judged(lm, rec=None):
    report = check(observe_execution(lm, rec))
    assert report.ok, str(report)
    return report.exercised


def _refused(lm, dev, ins, outs, exc, match) -> None:
    before = dev.counters
    with pytest.raises(exc, match=match):
        lm.execute(ins, outs)
    c = dev.counters - before
    assert c.copy_bytes() == 0 and c.args_refreshed == 0 and c.tasks_executed == 0
    assert REFUSED in _judged(lm)


# -- null 0-byte buffers --------------------------------------------------------------------------

@pytest.mark.parametrize("opts", MODES.values(), ids=MODES.keys())
@pytest.mark.parametrize("null_output", [False, True], ids=["output buffer", "null output"])
def test_a_null_zero_byte_buffer_for_an_empty_io_runs_and_moves_nothing(opts, null_output):
    m = _empty_input_model()
    assert [d.nbytes for d in m.tasks.inputs + m.tasks.outputs] == [0, 0]
    dev = device()
    lm = load(dev, m, opts)
    outs = [UserBuffer("relu:0", 0, 0)] if null_output else alloc_outputs(dev, m)
    rec = lm.execute([UserBuffer("data", 0, 0)], outs)
    assert rec.ok and rec.counters.copy_bytes() == 0
    exercised = _judged(lm, rec)
    assert VALID in exercised and REFUSED not in exercised


def test_any_other_null_buffer_is_still_refused():
    dev = device()
    empty = load(dev, _empty_input_model())
    out = alloc_outputs(dev, empty.model)
    _refused(empty, dev, [UserBuffer("data", 0, 4)], out, InvalidParam, r"'data'.*null address.*this one is 4 bytes, the input has 0")
    m = _data_to_netoutput()
    lm = load(dev, m)
    ins, outs = stage_inputs(dev, m, {"data1": np.zeros((1, 2, 3, 4), np.int32)}), alloc_outputs(dev, m)
    _refused(lm, dev, [UserBuffer("data1", 0, 0)], outs, InvalidParam, r"'data1:input0'.*null address.*this one is 0 bytes, the input has 96")
    _refused(lm, dev, ins, [UserBuffer("data1", 0, 96)], InvalidParam, r"'data1:output0'.*null address")


def test_a_runtime_that_lets_a_sized_null_buffer_through_is_caught(monkeypatch):
    """Planted: every null buffer allowed. A 96-byte null input then reaches the device: the call fails
    after the run began, and CALL-INVALID-REFUSED says it should have been refused up front."""
    monkeypatch.setattr(bind, "null_allowed", lambda b, d: True)
    m = _data_to_netoutput()
    dev = device()
    lm = load(dev, m, LoadOptions(zero_copy=False))
    with pytest.raises(Exception):
        lm.execute([UserBuffer("data1", 0, 96)], alloc_outputs(dev, m))
    report = check(observe_execution(lm))
    assert REFUSED in report.violated(), str(report)


# -- an output given its input's buffer -----------------------------------------------------------

@pytest.mark.parametrize("opts", MODES.values(), ids=MODES.keys())
@pytest.mark.parametrize("placement", ["device", "host"])
def test_an_output_given_the_buffer_of_the_input_it_passes_through_keeps_its_bytes(opts, placement):
    """GE's zero_copy_ok_when_input_directly_connected_to_output_with_same_addr with nonzero data: the
    buffer is input 0 and output 0. Zero copy on a device buffer moves nothing (the copy of the output out
    of the input's place is a copy onto itself, skipped); a copying mode carries the bytes through the
    model's region and back; either way the buffer ends as it began."""
    m = _data_to_netoutput()
    dev = device()
    lm = load(dev, m, opts)
    x = np.arange(24, dtype=np.int32).reshape(1, 2, 3, 4) - 7
    ins = stage_inputs(dev, m, {"data1": x}, placement)
    same = [UserBuffer("data1", ins[0].addr, ins[0].size, placement)]
    rec = lm.execute(ins, same)
    np.testing.assert_array_equal(read_outputs(dev, m, same)["data1"], x)
    moved = rec.counters.copy_bytes()
    if placement == "device" and opts.zero_copy and not opts.legacy_copy_only_addrs:
        assert moved == 0
    else:
        assert moved == 2 * 96   # in and back out, through the model's region or a staging buffer
    assert VALID in _judged(lm, rec)


@pytest.mark.parametrize("run", [
    {}, {"zero_copy": False}, {"legacy_copy_only_addrs": True}, {"placement": "host"}, {"api": "acl"},
    {"reuse_zero_copy_memory": 1}, {"calls": 3, "rebind": [False, True]},
], ids=["zero copy", "zero copy off", "legacy", "host", "acl", "reuse", "rebinding"])
def test_a_pass_through_beside_a_kernel_holds_every_execution_claim(run):
    """x is input 0, output 0 (a pass-through) and read by Relu (output 1); the caller gives x's buffer as
    output 0. Every claim the spec applies holds, the oracle's among them, and the copy-only claim judges
    the output's copy (none onto itself)."""
    reports = evaluate(Scenario("execution", _pass_and_relu(),
                                runtime={"runs": [{"runtime": "v1", "share": [["x", "x"]], **run}]}))
    assert [str(v) for r in reports for v in r.violations] == []
    exercised = set().union(*(r.exercised for r in reports))
    assert {VALID, "EXEC-ORACLE", "V1-COPY-ONLY-ONCE"} <= exercised and REFUSED not in exercised


def test_any_other_buffer_an_output_shares_is_still_refused():
    dev = device()
    m = _data_to_netoutput()
    lm = load(dev, m)
    big = dev.malloc(128)
    _refused(lm, dev, [UserBuffer("data1", big, 96)], [UserBuffer("data1", big, 128)], ParamInvalid,
             r"'data1:output0'.*overlaps the buffer of input 'data1:input0'")          # not the very buffer: another size
    off = _data_to_netoutput(offline=True)      # the output is a MemcpyAddrAsync's copy, not the input's bytes
    lo = load(dev, off)
    ins = stage_inputs(dev, off, {"data1": np.zeros((1, 2, 3, 4), np.int32)})
    _refused(lo, dev, ins, [UserBuffer(off.tasks.outputs[0].name, ins[0].addr, 96)], ParamInvalid,
             "overlaps the buffer of input")
    pt = passthrough()                          # outputs y and fl:0 (a view of y) both pass y through
    lp = load(dev, pt)
    ins, outs = stage_inputs(dev, pt, {"x": np.ones(4, np.float32), "y": np.ones((2, 3), np.float32)}), \
        alloc_outputs(dev, pt)
    y = ins[1]
    one = [outs[0], UserBuffer("y", y.addr, y.size), outs[2], outs[3]]
    assert VALID in _judged(lp, lp.execute(ins, one))                    # one pass-through output: runs
    _refused(lp, dev, ins, [outs[0], UserBuffer("y", y.addr, y.size), UserBuffer("fl:0", y.addr, y.size), outs[3]],
             ParamInvalid, r"'fl:0'.*overlaps the buffer of output 'y:output1'")   # two outputs on one buffer
    _refused(lp, dev, ins, [outs[0], outs[1], outs[2], UserBuffer("r:0", y.addr, y.size)], ParamInvalid,
             r"'r:0'.*overlaps the buffer of input 'y:input1'")                   # a kernel's output on an input


def test_a_runtime_that_lets_any_same_buffer_through_is_caught(monkeypatch):
    """Planted: every output may share any input's buffer. Relu then writes its output over the input it
    reads, and CALL-INVALID-REFUSED says the call should have been refused."""
    monkeypatch.setattr(bind, "pass_through", lambda x, y: True)
    pt = passthrough()
    dev = device()
    lp = load(dev, pt)
    ins, outs = stage_inputs(dev, pt, {"x": np.ones(4, np.float32), "y": np.ones((2, 3), np.float32)}), \
        alloc_outputs(dev, pt)
    lp.execute(ins, [outs[0], outs[1], outs[2], UserBuffer("r:0", ins[1].addr, ins[1].size)])
    report = check(observe_execution(lp))
    assert REFUSED in report.violated(), str(report)
