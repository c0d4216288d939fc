"""Streams run in order, events order streams, deadlocks are reported, async copies are counted."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.impl.device import Device, EventRecordTask, EventWaitTask, KernelTask, MemcpyTask, Slot, StreamError
from zcspec.impl.device import trace as tr

F4 = (4,)


def relu(dev, name, src, dst):
    task = KernelTask(name, "Relu", dev.malloc(16), (Slot("in", F4), Slot("out", F4)))
    dev.write_args(task, [src, dst])
    return task


def test_event_orders_a_consumer_stream_after_its_producer():
    dev = Device()
    s1 = dev.create_stream()
    ev = dev.create_event()
    x = dev.upload(np.array([-1, 2, -3, 4], np.float32))
    a, b = dev.malloc(16), dev.malloc(16)
    dev.launch(relu(dev, "producer", x, a), stream=s1)
    dev.launch(EventRecordTask("record", ev), stream=s1)
    # Stream 0 is visited first by the scheduler: only the wait keeps the consumer back.
    dev.launch(EventWaitTask("wait", ev), stream=0)
    dev.launch(relu(dev, "consumer", a, b), stream=0)
    dev.synchronize()
    order = [e.task for e in dev.trace.of_type(tr.Launch)]
    assert order == ["producer", "consumer"]
    np.testing.assert_array_equal(dev.peek(b, F4, np.float32), [0, 2, 0, 4])
    syncs = [(e.what, e.task) for e in dev.trace.of_type(tr.Sync)]
    assert syncs == [("record", "record"), ("wait", "wait")]


def test_without_the_event_the_consumer_runs_first_and_reads_poison():
    """The control for the test above: the scheduler really would reorder."""
    dev = Device()
    s1 = dev.create_stream()
    x = dev.upload(np.array([-1, 2, -3, 4], np.float32))
    a, b = dev.malloc(16), dev.malloc(16)
    dev.launch(relu(dev, "producer", x, a), stream=s1)
    dev.launch(relu(dev, "consumer", a, b), stream=0)
    dev.synchronize()
    assert [e.task for e in dev.trace.of_type(tr.Launch)] == ["consumer", "producer"]
    assert np.isnan(dev.peek(b, F4, np.float32)).all()


def test_wait_before_any_record_passes():
    """Launch-time semantics (as CUDA/ACL): a wait waits for the last record launched before it."""
    dev = Device()
    ev = dev.create_event()
    dev.launch(EventWaitTask("wait", ev))
    dev.launch(EventRecordTask("record", ev), stream=dev.create_stream())
    dev.synchronize()
    assert dev.counters.tasks_executed == 2


def test_memcpy_task_is_counted_when_it_runs():
    dev = Device()
    src, dst = dev.upload(np.arange(4, dtype=np.float32)), dev.malloc(16)
    dev.launch(MemcpyTask("copy", dst, src, 16))
    assert dev.counters.d2d_bytes == 0
    dev.synchronize()
    assert dev.counters.d2d_bytes == 16
    np.testing.assert_array_equal(dev.peek(dst, F4, np.float32), [0, 1, 2, 3])
    (copy,) = dev.trace.of_type(tr.Copy, 0)[-1:]
    assert copy.task == "copy" and copy.direction == "d2d"


def test_unknown_stream_is_an_error():
    dev = Device()
    with pytest.raises(StreamError, match="no stream 7"):
        dev.launch(EventWaitTask("w", 0), stream=7)
