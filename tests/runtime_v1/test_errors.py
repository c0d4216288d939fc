"""Bad buffers are refused before anything happens, each error naming the buffer; a failed call
writes nothing to user buffers and leaves device accounting at its baseline."""
import numpy as np
import pytest

from zcspec.impl.runtime.user_buffers import UserBuffer, read_outputs
from zcspec.impl.runtime.v1 import (
    InternalError, InvalidParam, LoadOptions, MemoryAllocationError, ModelUnloadedError, ParamInvalid, load, query_size,
)
from zcspec.impl.runtime.v1.observe import observe_execution
from zcspec.spec.check import check
from zcspec.spec.invariants.execution import FAILED_CALL_NO_CHANGE, NO_FAULT


def failed_call_ok(lm) -> bool:
    # V1-SLOT-REFRESH has no "the call succeeded" precondition, so a call refused before
    # binding is checked against the invariants about failed calls only.
    report = check(observe_execution(lm), invariants=[FAILED_CALL_NO_CHANGE])
    return report.ok and "EXEC-FAILED-CALL-NO-CHANGE" in report.exercised
from tests.helpers.runtime_v1 import buffers, device, mlp


@pytest.fixture
def setup():
    dev, m = device(), mlp()
    lm = load(dev, m)
    ins, outs = buffers(dev, m)
    return dev, m, lm, ins, outs


def refused(lm, dev, ins, outs, exc, match):
    before = dev.counters
    with pytest.raises(exc, match=match) as e:
        lm.execute(ins, outs)
    c = dev.counters - before
    assert c.copy_bytes() == 0 and c.args_refreshed == 0 and c.tasks_executed == 0 and c.allocated_bytes == 0
    assert failed_call_ok(lm)
    return e.value


def test_wrong_number_of_buffers(setup):
    dev, m, lm, ins, outs = setup
    e = refused(lm, dev, ins, outs[:1], ParamInvalid, "number of outputs provided by the user")
    assert e.code == 145000 and e.message_id == "E13025"


def test_undersized_by_more_than_64_bytes_and_under_raw_size(setup):
    dev, m, lm, ins, outs = setup
    from zcspec.impl.compiler.builder import GraphBuilder
    from zcspec.impl.compiler.compile import build_model

    b = GraphBuilder("big")
    b.output(b.op("Relu", [b.input("x", (64, 64))], name="r"))
    big = build_model(b.build())
    lb = load(dev, big)
    x, y = dev.malloc(64 * 64 * 4), dev.malloc(64 * 64 * 4)
    e = refused(lb, dev, [UserBuffer("x", x, 4096)], [UserBuffer("r:0", y, 16384)], ParamInvalid,
                r"'x'.*provided 4096 bytes of buffer size plus the aligned 64 bytes.*16416 bytes")
    assert e.message_id == "E13025"
    # Within GE's 64-byte slack but below the raw tensor bytes: refused too (a kernel would overrun it).
    m2 = load(device(), m)
    assert m.tasks.outputs[0].size - 64 <= 20 < m.tasks.outputs[0].nbytes
    refused(lm, dev, ins, [UserBuffer("relu:0", outs[0].addr, 20), outs[1]], ParamInvalid, "access past its end")
    m2.unload()


def test_null_misaligned_and_not_allocated(setup):
    dev, m, lm, ins, outs = setup
    e = refused(lm, dev, [UserBuffer("x", 0, 24)], outs, InvalidParam, "'x'.*null")
    assert e.code == 100000
    big = dev.malloc(64)
    refused(lm, dev, [UserBuffer("x", big + 2, 24)], outs, ParamInvalid, "'x'.*not aligned to 4 bytes")
    refused(lm, dev, [UserBuffer("x", big + 48, 24)], outs, ParamInvalid, "'x'.*not inside one live device allocation")
    dev.free(big)
    refused(lm, dev, [UserBuffer("x", big, 24)], outs, ParamInvalid, "'x'.*no live allocation")


def test_overlaps(setup):
    dev, m, lm, ins, outs = setup
    o0 = outs[0]
    refused(lm, dev, ins, [o0, UserBuffer("neg:0", o0.addr, 24)], ParamInvalid, "'neg:0'.*overlaps the buffer of output")
    refused(lm, dev, [UserBuffer("x", o0.addr, 24)], outs, ParamInvalid, "'relu:0'.*overlaps the buffer of input 'x'")
    weights = lm.base("weight")
    refused(lm, dev, [UserBuffer("x", weights, 24)], outs, ParamInvalid, "'x'.*overlaps the model's model allocation 'v1 model weights'")


def test_two_inputs_may_share_one_buffer():
    from zcspec.impl.compiler.builder import GraphBuilder
    from zcspec.impl.compiler.compile import build_model

    b = GraphBuilder("two")
    x, y = b.input("x", (4,)), b.input("y", (4,))
    b.output(b.op("Add", [x, y], name="add"))
    m = build_model(b.build())
    dev = device()
    lm = load(dev, m)
    buf = dev.upload(np.arange(4, dtype=np.float32))
    out = dev.malloc(16)
    lm.execute([UserBuffer("x", buf, 16), UserBuffer("y", buf, 16)], [UserBuffer("add:0", out, 16)])
    np.testing.assert_array_equal(dev.peek(out, (4,), np.float32), 2 * np.arange(4, dtype=np.float32))


def test_execute_after_unload(setup):
    dev, m, lm, ins, outs = setup
    lm.unload()
    with pytest.raises(ModelUnloadedError, match="unloaded"):
        lm.execute(ins, outs)
    assert not any(a.tag.startswith("v1 model") for a in dev.allocations())


def test_device_fault_mid_run_is_internal_error_and_copied_outputs_stay_untouched():
    dev, m = device(), mlp()
    lm = load(dev, m, LoadOptions(zero_copy=False))   # every output is copied after the run
    ins, outs = buffers(dev, m)
    dev.memcpy(outs[0].addr, dev.upload(np.full(6, 7, np.float32)), 24)
    snapshot = [dev.peek(o.addr, (6,), np.float32) for o in outs]
    # Corrupt the last task's argument table (as a runtime bug would): its input slot dangles.
    last = lm.tasks[-1]
    dev.write_args(last, [0x10, *dev.read_args(last)[1:]])
    base = dev.counters.allocated_bytes
    with pytest.raises(InternalError, match="device failed") as e:
        lm.execute(ins, outs)
    assert e.value.code == 545000 and e.value.task == last.name
    for o, s in zip(outs, snapshot):
        np.testing.assert_array_equal(dev.peek(o.addr, (6,), np.float32), s)
    assert dev.counters.allocated_bytes == base
    assert failed_call_ok(lm)
    assert not check(observe_execution(lm), invariants=[NO_FAULT]).ok   # the fault is visible to the spec


def test_load_memory_rules():
    m = mlp()
    work, weight = query_size(m)
    assert (work, weight) == (m.memory_size, m.regions["weight"])
    dev = device()
    w = dev.malloc(weight)
    with pytest.raises(ParamInvalid, match="weight size of model") as e:
        load(dev, m, weight=(w, weight - 1))
    assert e.value.code == 145000
    with pytest.raises(ParamInvalid, match="Invalid mem param") as e:
        load(dev, m, work=(dev.malloc(64), m.regions["feature_map"] - 1))
    assert e.value.message_id == "E19999"
    fm = dev.malloc(m.regions["feature_map"])
    lm = load(dev, m, work=(fm, m.regions["feature_map"]), weight=(w, weight))
    assert lm.base("feature_map") == fm and lm.base("weight") == w and not lm.bases.zero_copy_backed
    ins, outs = buffers(dev, m)
    lm.execute(ins, outs)
    assert read_outputs(dev, m, outs)["neg:0"].shape == (2, 3)


def test_failed_load_frees_what_it_allocated():
    m = mlp()
    dev = device(capacity=m.regions["weight"] + 512)  # room for weights and feature map, not the argument tables
    with pytest.raises(MemoryAllocationError, match="argument tables") as e:
        load(dev, m)
    assert e.value.code == 245000 and dev.counters.allocated_bytes == 0


@pytest.mark.parametrize("value", [2, -1, True, "1"])
def test_reuse_option_values(value):
    with pytest.raises(InvalidParam, match="reuse_zero_copy_memory"):
        LoadOptions(reuse_zero_copy_memory=value)
