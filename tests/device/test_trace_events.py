"""The device trace as spec events (impl/device/trace_events.py): a transcription, event for event."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.impl.device import Device, DeviceFault, EventRecordTask, EventWaitTask, KernelTask, Slot
from zcspec.impl.device import trace as tr
from zcspec.impl.device.trace_events import TraceNames, spec_events
from zcspec.spec.observables.trace import Range

F4 = (4,)


def relu(dev: Device, name: str = "relu") -> KernelTask:
    return KernelTask(name, "Relu", dev.malloc(16, tag=f"{name} args"), (Slot("in", F4), Slot("out", F4)))


def test_every_memory_event_is_transcribed_with_its_addresses_sizes_and_stream():
    dev = Device()
    task = relu(dev)
    src = dev.upload(np.ones(4, np.float32), tag="user x")
    mark = dev.trace.mark()
    x = dev.malloc(16, tag="model x")
    y = dev.malloc(16, tag="user y")
    dev.memcpy(x, src, 16)
    dev.write_args(task, [x, y])
    side = dev.create_stream()
    event = dev.create_event()
    dev.launch(EventRecordTask("record", event), 0)
    dev.launch(EventWaitTask("wait", event), side)
    dev.launch(task, side)
    dev.synchronize()
    dev.free(x)
    copy_at = mark + 2
    assert isinstance(dev.trace.since(copy_at)[0], tr.Copy)
    names = TraceNames({"relu": 7}, (("model ", "model"),), "user", slots={7: (("a",), ("b",))})
    events = spec_events(dev.trace, (mark, dev.trace.mark()), names, first_seq=3)
    assert [e.kind for e in events] == ["alloc", "alloc", "copy", "arg_write", "arg_write", "record", "wait",
                                        "launch", "free"]
    assert [e.seq for e in events] == list(range(3, 3 + len(events)))
    assert (events[0].address, events[0].size, events[0].owner, events[0].purpose) == (x, 16, "model", "model x")
    assert events[1].owner == "user"
    # a copy is its addresses: which I/O it moves is not the runtime's to say (the spec tells by address)
    assert (events[2].io, events[2].src, events[2].dst, events[2].size, events[2].direction) == (None, src, x, 16, "d2d")
    assert events[2].stream is None   # a synchronous copy by the host
    assert [(e.task, e.slot, e.value) for e in events[3:5]] == [(7, 0, x), (7, 1, y)]
    assert [(e.kind, e.event_id, e.stream) for e in events[5:7]] == [("record", event, 0), ("wait", event, side)]
    launch = events[7]
    assert (launch.task, launch.op, launch.stream) == (7, "Relu", side)
    assert (launch.reads, launch.writes) == ((Range(x, 16, "a"),), (Range(y, 16, "b"),))
    assert events[8].address == x


def test_tags_without_an_owner_are_left_out():
    dev = Device()
    mark = dev.trace.mark()
    a = dev.malloc(16, tag="pool span")
    dev.free(a)
    b = dev.malloc(16, tag="model weights")
    span = (mark, dev.trace.mark())
    only_model = TraceNames({}, owners=(("model ", "model"),), default_owner=None)
    assert [(e.kind, e.address) for e in spec_events(dev.trace, span, only_model)] == [("alloc", b)]
    nothing = TraceNames({}, owners=(("", None),))
    assert spec_events(dev.trace, span, nothing) == []


def test_a_faulting_kernel_shows_the_accesses_it_attempted_then_the_fault():
    dev = Device()
    task = relu(dev)
    x = dev.upload(np.ones(4, np.float32), tag="x")
    y = dev.malloc(8, tag="y")   # the kernel writes 16 bytes: out of bounds
    dev.write_args(task, [x, y])
    mark = dev.trace.mark()
    dev.launch(task)
    with pytest.raises(DeviceFault):
        dev.synchronize()
    assert [type(e) for e in dev.trace.since(mark)] == [tr.FaultedLaunch, tr.Fault]
    launch, fault = spec_events(dev.trace, (mark, dev.trace.mark()), TraceNames({"relu": 0}))
    assert (launch.kind, launch.task, launch.stream) == ("launch", 0, 0)
    assert launch.reads == (Range(x, 16),) and launch.writes == (Range(y, 16),)
    assert (fault.kind, fault.task, fault.address) == ("fault", 0, y)
    assert np.isnan(dev.peek(y, (2,), np.float32)).all()   # the device itself wrote nothing
