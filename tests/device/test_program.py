"""Hand-built programs: argument tables that are (or are not) refreshed, atomic clean, counters, trace."""
from __future__ import annotations

import attrs
import numpy as np
import pytest

from zcspec.impl.device import Device, KernelTask, MemsetTask, RefreshError, Slot
from zcspec.impl.device import trace as tr

F4 = (4,)


def three_kernel_program(dev):
    """x -> Relu -> Mul(., w) -> Add(., w) -> y, every operand through an argument table."""
    w = dev.upload(np.full(F4, 2.0, np.float32), tag="w", read_only=True)
    t1, t2 = dev.malloc(16, tag="t1"), dev.malloc(16, tag="t2")
    args = [dev.malloc(24, tag=f"args{i}") for i in range(3)]
    relu = KernelTask("relu", "Relu", args[0], (Slot("in", F4), Slot("out", F4)))
    mul = KernelTask("mul", "Mul", args[1], (Slot("in", F4), Slot("in", F4), Slot("out", F4)))
    add = KernelTask("add", "Add", args[2], (Slot("in", F4), Slot("in", F4), Slot("out", F4)))
    return (relu, mul, add), w, t1, t2


def test_rewritten_slot_makes_the_kernel_read_the_new_buffer():
    dev = Device()
    (relu, mul, add), w, t1, t2 = three_kernel_program(dev)
    x1 = dev.upload(np.array([-1, 1, 2, 3], np.float32), tag="x1")
    x2 = dev.upload(np.array([5, -5, 6, 7], np.float32), tag="x2")
    y = dev.malloc(16, tag="y")
    dev.write_args(relu, [x1, t1])
    dev.write_args(mul, [t1, w, t2])
    dev.write_args(add, [t2, w, y])

    dev.launch_all((relu, mul, add))
    dev.synchronize()
    np.testing.assert_array_equal(dev.peek(y, F4, np.float32), [2, 4, 6, 8])

    before = dev.counters
    dev.refresh_arg(relu, 0, x2)            # the user's new input buffer, zero copy
    dev.launch_all((relu, mul, add))
    dev.synchronize()
    np.testing.assert_array_equal(dev.peek(y, F4, np.float32), [12, 2, 14, 16])
    delta = dev.counters - before
    assert delta.args_refreshed == 1 and delta.kernel_launches == 3 and delta.copy_bytes() == 0
    assert dev.read_args(relu) == (x2, t1)


def test_a_slot_nobody_refreshed_really_reads_the_old_buffer():
    dev = Device()
    (relu, mul, add), w, t1, t2 = three_kernel_program(dev)
    x1 = dev.upload(np.array([1, 1, 1, 1], np.float32), tag="x1")
    x2 = dev.upload(np.array([3, 3, 3, 3], np.float32), tag="x2")
    y = dev.malloc(16, tag="y")
    for task, addrs in ((relu, [x1, t1]), (mul, [t1, w, t2]), (add, [t2, w, y])):
        dev.write_args(task, addrs)
    # A runtime that forgot the refresh: the task object is the same, the table still says x1.
    dev.launch_all((relu, mul, add))
    dev.synchronize()
    np.testing.assert_array_equal(dev.peek(y, F4, np.float32), [4, 4, 4, 4])
    assert x2 not in {a for e in dev.trace.of_type(tr.Launch) for a, _ in e.reads}


def test_launch_trace_records_ranges_read_and_written():
    dev = Device()
    (relu, mul, add), w, t1, t2 = three_kernel_program(dev)
    x, y = dev.upload(np.ones(F4, np.float32), tag="x"), dev.malloc(16, tag="y")
    for task, addrs in ((relu, [x, t1]), (mul, [t1, w, t2]), (add, [t2, w, y])):
        dev.write_args(task, addrs)
    mark = dev.trace.mark()
    dev.launch_all((relu, mul, add))
    dev.synchronize()
    launches = dev.trace.of_type(tr.Launch, mark)
    assert [e.task for e in launches] == ["relu", "mul", "add"]
    assert launches[1].reads == ((t1, 16), (w, 16)) and launches[1].writes == ((t2, 16),)
    writes = dev.trace.of_type(tr.ArgWrite)
    assert len(writes) == 8 and not any(e.refresh for e in writes)


def test_atomic_op_without_clean_is_visibly_wrong_and_right_with_it():
    dev = Device()
    x = dev.upload(np.arange(6, dtype=np.float32).reshape(2, 3), tag="x")
    y = dev.malloc(8, tag="y")
    args, clean_args = dev.malloc(16, tag="args"), dev.malloc(8, tag="clean args")
    rsum = KernelTask("rsum", "ReduceSum", args, (Slot("in", (2, 3)), Slot("out", (2, 1))), (("axes", (1,)),))
    clean = MemsetTask("clean_y", args=clean_args, slots=(Slot("out", (2, 1)),))
    dev.write_args(rsum, [x, y])
    dev.write_args(clean, [y])
    dev.launch(rsum)
    dev.synchronize()
    assert np.isnan(dev.peek(y, (2, 1), np.float32)).all()    # poison + sum
    for _ in range(2):                                         # clean each run: right every time
        dev.launch_all((clean, rsum))
        dev.synchronize()
        np.testing.assert_array_equal(dev.peek(y, (2, 1), np.float32), [[3], [12]])
    assert dev.counters.memset_bytes == 16


def test_counters_count_copies_by_direction():
    dev = Device()
    h1, h2 = dev.host_malloc(64), dev.host_malloc(64)
    d1, d2 = dev.malloc(64), dev.malloc(64)
    before = dev.counters
    dev.memcpy(d1, h1, 64)
    dev.memcpy(d2, d1, 32)
    dev.memcpy(h2, d2, 16)
    dev.memcpy(h1, h2, 8)
    c = dev.counters - before
    assert (c.h2d_bytes, c.d2d_bytes, c.d2h_bytes, c.h2h_bytes) == (64, 32, 16, 8)
    assert (c.h2d_calls, c.d2d_calls, c.d2h_calls, c.h2h_calls) == (1, 1, 1, 1)
    with pytest.raises(ValueError):
        dev.memcpy(d1, h1, 8, kind="d2d")


def test_refresh_refused_where_the_soc_cannot():
    for soc, task in (("ascend310p", MemsetTask("clean", args=0, slots=(Slot("out", F4),))),
                      ("nozc", KernelTask("relu", "Relu", 0, (Slot("in", F4), Slot("out", F4))))):
        dev = Device(soc)
        args = dev.malloc(16)
        task = attrs.evolve(task, args=args)
        dev.write_args(task, [dev.malloc(16)] * len(task.slots))   # load-time writes are always allowed
        with pytest.raises(RefreshError, match=soc):
            dev.refresh_arg(task, 0, dev.malloc(16))


def test_refresh_in_loop_depends_on_the_soc():
    for soc, allowed in (("ascend910b", True), ("legacy", False)):
        dev = Device(soc)
        task = KernelTask("relu", "Relu", dev.malloc(16), (Slot("in", F4), Slot("out", F4)), in_loop=True)
        dev.write_args(task, [dev.malloc(16), dev.malloc(16)])
        if allowed:
            dev.refresh_arg(task, 0, dev.malloc(16))
        else:
            with pytest.raises(RefreshError, match="loop"):
                dev.refresh_arg(task, 0, dev.malloc(16))


def test_trace_is_json_ready_and_counters_diff_per_call():
    import json

    dev = Device()
    (relu, mul, add), w, t1, t2 = three_kernel_program(dev)
    x, y = dev.upload(np.ones(F4, np.float32), tag="x"), dev.malloc(16, tag="y")
    for task, addrs in ((relu, [x, t1]), (mul, [t1, w, t2]), (add, [t2, w, y])):
        dev.write_args(task, addrs)
    snapshots = []
    for _ in range(2):
        before, mark = dev.counters, dev.trace.mark()
        dev.launch_all((relu, mul, add))
        dev.synchronize()
        snapshots.append((dev.counters - before, dev.trace.as_dicts(mark)))
    assert snapshots[0][0] == snapshots[1][0]
    assert snapshots[0][0].kernel_launches == 3 and snapshots[0][0].copy_bytes() == 0
    events = json.loads(json.dumps(snapshots[0][1]))
    assert [e["event"] for e in events] == ["Launch"] * 3


def test_hccl_refresh_is_refused_on_legacy():
    from zcspec.impl.device import HcclTask

    dev = Device("legacy")
    task = HcclTask("allreduce", "HcomAllReduce", dev.malloc(16), (Slot("in", F4), Slot("out", F4)))
    dev.write_args(task, [dev.malloc(16), dev.malloc(16)])
    with pytest.raises(RefreshError, match="hccl"):
        dev.refresh_arg(task, 1, dev.malloc(16))
    assert dev.counters.args_refreshed == 0
