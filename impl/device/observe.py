"""A bare device's trace as a device-probe observation (spec/observables/device.py).

``observe_device(trace, mark=0, name="", memory=None, kernel_runs=(), soc=None, counters=None)`` transcribes the
device events from position ``mark`` on; ``memory`` is the device's (base, capacity), copied as the
observation's address space, and ``soc`` its SoC profile's name; ``kernel_runs`` are the probe's
own records of its compute steps (what the device API raised, the bytes before and after), copied
as they are: a refused kernel leaves no trace event to transcribe. It decides nothing (which access
was legal, which malloc had room, is the spec's to derive): each event becomes the observation
event of the same happening.

=================  ==========================================================================
device event       probe event
=================  ==========================================================================
``Alloc``          ``alloc``: address, size, read_only (device memory; host memory is not probed)
``Free``           ``free``: address (device memory)
``Launch``         ``access``: task, reads (inputs, then the outputs an accumulating kernel read), writes;
                   refused None
``FaultedLaunch``  ``access``: the ranges the task designated; refused = the kind of the Fault
                   that follows it
``Fault``          (after a FaultedLaunch: its kind, above); alone, of kind ``out_of_memory``: an
                   ``alloc`` of no address, size = the bytes asked for, refused = the kind (a malloc
                   the device refused); alone, of kind ``double_free`` or ``invalid_free``: a
                   ``free`` of its address, refused = the kind (a free the device refused); any
                   other alone: an ``access`` of the task with no ranges, refused = its kind
``ArgWrite``       none: the host writing argument tables, which a probe does not aim anywhere
``Memset``         none: a memset task's writes are its launch's
``AllocatorCall``  an ``allocator_events`` ``enter`` or ``exit`` (allocator, runtime, call, thread)
``Mapping``        reserve / release: an ``allocator_events`` event of the allocator whose name starts
                   its tag (impl/device/observe_allocators.py); map / unmap: none
=================  ==========================================================================

An ``Alloc`` or ``Free`` whose tag starts with the name of an allocator that made calls is also
an ``allocator_events`` ``alloc`` or ``free`` of that allocator.

Any other device event (a copy, a stream sync, host memory) is not part of a probe: it is an
ObserveError naming the event, not silently dropped.
"""
from __future__ import annotations

from zcspec.impl.device import trace as tr
from zcspec.impl.device.errors import DeviceError
from zcspec.impl.device.observe_allocators import allocator_events
from zcspec.spec.observables.device import DeviceEvent, DeviceObservation, KernelRun
from zcspec.spec.observables.trace import Range


class ProbeTraceError(DeviceError):
    """The trace holds an event a device probe does not make (so the probe cannot describe it)."""

    def __init__(self, position: int, event):
        self.position, self.event = position, event
        super().__init__(f"trace event {position} ({event!r}) is not part of a device probe: a probe's trace "
                         "holds device allocations, frees, argument writes and task launches only")


_MALLOC_FAULTS = ("out_of_memory",)             # the faults of a malloc (memory.AddressSpace.malloc)
_FREE_FAULTS = ("double_free", "invalid_free")   # the faults of a free (memory.AddressSpace.free)


def _ranges(pairs) -> tuple[Range, ...]:
    return tuple(Range(a, n) for a, n in pairs)


def observe_device(trace: tr.Trace, mark: int = 0, name: str = "", memory: tuple[int, int] | None = None,
                   kernel_runs: tuple[KernelRun, ...] = (), collective_runs: tuple = (),
                   soc: str | None = None, oracle_runs: tuple = (), counters=None) -> DeviceObservation:
    """The probe observation of ``trace`` from position ``mark`` on (see the module doc); ``counters``: the
    device's counters over the same span (``Counters.as_dict()``), copied as they are."""
    out: list[DeviceEvent] = []
    pending: DeviceEvent | None = None   # a FaultedLaunch waiting for its Fault
    for position, e in enumerate(trace.since(mark), mark):
        seq = len(out)
        if isinstance(e, tr.Fault):
            if pending is not None:
                out.append(DeviceEvent(pending.seq, "access", task=pending.task, reads=pending.reads,
                                       writes=pending.writes, refused=e.kind))
            elif e.kind in _MALLOC_FAULTS:
                out.append(DeviceEvent(seq, "alloc", size=e.nbytes, refused=e.kind))
            elif e.kind in _FREE_FAULTS:
                out.append(DeviceEvent(seq, "free", address=e.address, refused=e.kind))
            else:
                out.append(DeviceEvent(seq, "access", task=e.task, refused=e.kind))
            pending = None
            continue
        if pending is not None:
            raise ProbeTraceError(position, e)   # a refused launch is always followed by its fault
        if isinstance(e, tr.FaultedLaunch):
            pending = DeviceEvent(seq, "access", task=e.task, reads=_ranges(e.reads), writes=_ranges(e.writes))
        elif isinstance(e, tr.Launch):
            out.append(DeviceEvent(seq, "access", task=e.task, reads=_ranges(e.reads + e.accumulates),
                                   writes=_ranges(e.writes)))
        elif isinstance(e, tr.Alloc) and e.space == "device":
            out.append(DeviceEvent(seq, "alloc", address=e.addr, size=e.size, read_only=e.read_only))
        elif isinstance(e, tr.Free) and e.space == "device":
            out.append(DeviceEvent(seq, "free", address=e.addr))
        elif not isinstance(e, (tr.ArgWrite, tr.Memset, tr.AllocatorCall, tr.Mapping)):
            raise ProbeTraceError(position, e)
    if pending is not None:
        raise ProbeTraceError(len(trace) - 1, "a refused launch with no fault after it")
    return DeviceObservation(name, tuple(out), None if memory is None else Range(*memory), tuple(kernel_runs),
                             tuple(collective_runs), soc, tuple(oracle_runs), allocator_events(trace, mark),
                             dict(counters or {}))
