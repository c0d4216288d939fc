"""A bare device's trace as a device-probe observation (spec/observables/device.py).

``observe_device(trace, mark=0, name="", memory=None, kernel_runs=(), soc=None, counters=None, refused_copies=(), malloc_calls=())``
transcribes the device events from position ``mark`` on; ``memory`` is the device's (base, capacity), copied as
the observation's address space, and ``soc`` its SoC profile's name; ``kernel_runs`` are the probe's
own records of its compute steps (what the device API raised, the bytes before and after), copied
as they are: a refused kernel leaves no trace event to transcribe; ``refused_copies`` are its records
of the synchronous copies the device refused, whose ranges the trace's Fault does not show (below), and
``malloc_calls`` its records of its malloc steps (asked size and alignment, what the API returned or raised).
It decides nothing (which access was legal, which malloc had room, is the spec's to derive): each
event becomes the observation event of the same happening.

=================  ==========================================================================
device event       probe event
=================  ==========================================================================
``Alloc``          ``alloc``: address, size, read_only (device memory; host memory is not probed)
``Free``           ``free``: address (device memory)
``Launch``         ``access``: task, reads (inputs, then the outputs an accumulating kernel read), writes;
                   refused None
``FaultedLaunch``  ``access``: the ranges the task designated; refused = the kind of the Fault
                   that follows it
``Fault``          (after a FaultedLaunch: its kind, above; at a refused copy's position: its kind,
                   above); alone, of kind ``out_of_memory``: an
                   ``alloc`` of no address, size = the bytes asked for, refused = the kind (a malloc
                   the device refused); alone, of kind ``double_free`` or ``invalid_free``: a
                   ``free`` of its address, refused = the kind (a free the device refused); any
                   other alone, of a synchronous call (task ""): an ``access`` writing the one
                   range it names (all that is known of a refused copy whose probe gave no record:
                   read or written, the Fault does not say; a range illegal to read is illegal to
                   write), refused = its kind; of a task: an ``access`` of the task with no ranges,
                   refused = its kind
``Copy``           a synchronous device-to-device copy (``Device.memcpy``, no task, no stream): an
                   ``access`` of no task, reads the source range, writes the destination range;
                   refused None. A copy task's, or one touching host memory, is not part of a probe
(refused copy)     ``Device.memcpy`` records a refused copy as a Fault alone, of no task, naming only the
                   range that faulted, so the probe records the copy's ranges (``refused_copies``,
                   :class:`RefusedCopy`: its trace position, ranges and the kind it saw raised). The
                   Fault at that position and the record are one ``access`` of no task: reads the
                   source range, writes the destination range, refused = the Fault's kind (the
                   record's, should the trace show no Fault there)
``ArgWrite``       none: the host writing argument tables, which a probe does not aim anywhere
``Memset``         none: a memset task's writes are its launch's
``AllocatorCall``  an ``allocator_events`` ``enter`` or ``exit`` (allocator, runtime, call, thread)
``Mapping``        reserve / release: an ``allocator_events`` event of the allocator whose name starts
                   its tag (impl/device/observe_allocators.py); map / unmap: none
=================  ==========================================================================

An ``Alloc`` or ``Free`` whose tag starts with the name of an allocator that made calls is also
an ``allocator_events`` ``alloc`` or ``free`` of that allocator.

Any other device event (a copy task, a host copy, a stream sync, host memory) is not part of a probe: it
is an ObserveError naming the event, not silently dropped.
"""
from __future__ import annotations

import attrs

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
                         "holds device allocations, frees, argument writes, task launches and synchronous D2D "
                         "copies only")


_MALLOC_FAULTS = ("out_of_memory",)             # the faults of a malloc (memory.AddressSpace.malloc)
_FREE_FAULTS = ("double_free", "invalid_free")   # the faults of a free (memory.AddressSpace.free)


@attrs.frozen
class RefusedCopy:
    """A synchronous copy ``Device.memcpy`` refused, as the probe that made it records it: ``position`` is the
    trace's length when it was made (where its Fault lands), ``kind`` the DeviceFault's kind."""

    position: int
    dst: int
    src: int
    nbytes: int
    kind: str


def _ranges(pairs) -> tuple[Range, ...]:
    return tuple(Range(a, n) for a, n in pairs)


def observe_device(trace: tr.Trace, mark: int = 0, name: str = "", memory: tuple[int, int] | None = None,
                   kernel_runs: tuple[KernelRun, ...] = (), collective_runs: tuple = (),
                   soc: str | None = None, oracle_runs: tuple = (), counters=None,
                   refused_copies: tuple[RefusedCopy, ...] = (), malloc_calls: tuple = (),
                   active_requests: tuple = ()) -> DeviceObservation:
    """The probe observation of ``trace`` from position ``mark`` on (see the module doc); ``counters``: the
    device's counters over the same span (``Counters.as_dict()``), and ``malloc_calls`` the probe's records of
    its malloc steps (:class:`~zcspec.spec.observables.device.MallocCall`) and ``active_requests`` what it asked of
    runtime v1's active-memory allocators (:class:`~zcspec.spec.observables.device.ActiveMemoryRequest`), copied
    as they are."""
    out: list[DeviceEvent] = []
    pending: DeviceEvent | None = None   # a FaultedLaunch waiting for its Fault
    refusals = sorted((c for c in refused_copies if c.position >= mark), key=lambda c: c.position)

    def refused_before(position: int, fault: tr.Fault | None = None) -> bool:
        """The refused copies recorded up to ``position``; the last one at ``position`` takes ``fault``, the
        trace's Fault there (its kind is the refusal's). True when it did."""
        while refusals and refusals[0].position <= position:
            c = refusals.pop(0)
            took = fault is not None and c.position == position and not (refusals and refusals[0].position == position)
            out.append(DeviceEvent(len(out), "access", reads=_ranges([(c.src, c.nbytes)]),
                                   writes=_ranges([(c.dst, c.nbytes)]), refused=fault.kind if took else c.kind))
            if took:
                return True
        return False

    for position, e in enumerate(trace.since(mark), mark):
        # a refused copy cannot come between a refused launch and its fault
        if pending is None and refused_before(position, e if isinstance(e, tr.Fault) else None):
            continue
        seq = len(out)
        if isinstance(e, tr.Fault):
            if pending is not None:
                out.append(DeviceEvent(pending.seq, "access", task=pending.task, reads=pending.reads,
                                       writes=pending.writes, refused=e.kind))
            elif e.kind in _MALLOC_FAULTS:
                out.append(DeviceEvent(seq, "alloc", size=e.nbytes, refused=e.kind))
            elif e.kind in _FREE_FAULTS:
                out.append(DeviceEvent(seq, "free", address=e.address, refused=e.kind))
            elif not e.task and e.address is not None and e.nbytes > 0:   # a synchronous call's: the range it names
                out.append(DeviceEvent(seq, "access", task=e.task, writes=_ranges([(e.address, e.nbytes)]),
                                       refused=e.kind))
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
        elif isinstance(e, tr.Copy) and e.direction == "d2d" and not e.task and e.stream is None:
            out.append(DeviceEvent(seq, "access", reads=_ranges([(e.src, e.nbytes)]),
                                   writes=_ranges([(e.dst, e.nbytes)])))
        elif isinstance(e, tr.Alloc) and e.space == "device":
            out.append(DeviceEvent(seq, "alloc", address=e.addr, size=e.size, read_only=e.read_only))
        elif isinstance(e, tr.Free) and e.space == "device":
            out.append(DeviceEvent(seq, "free", address=e.addr))
        elif not isinstance(e, (tr.ArgWrite, tr.Memset, tr.AllocatorCall, tr.Mapping)):
            raise ProbeTraceError(position, e)
    if pending is not None:
        raise ProbeTraceError(len(trace) - 1, "a refused launch with no fault after it")
    refused_before(len(trace))
    if refusals:   # only if the probe's records do not fit its trace
        raise ProbeTraceError(refusals[0].position, "a refused copy recorded past the end of the trace")
    return DeviceObservation(name, tuple(out), None if memory is None else Range(*memory), tuple(kernel_runs),
                             tuple(collective_runs), soc, tuple(oracle_runs), allocator_events(trace, mark),
                             dict(counters or {}), tuple(malloc_calls), tuple(active_requests))
