"""Refinement mapping: a runtime-v2 load and execute call as the spec's observables.

``observe_load(exe)`` -> LoadObservation and ``observe_execution(exe, record=None, outputs=())``
-> ExecutionObservation for the call ``record`` (an ``impl.runtime.record.ExecutionRecord``;
None: the executor's last call) with ``outputs`` (OutputResults) attached: the same signature
and meaning as runtime v1's. The spec's v2 invariants (spec/invariants/runtime_v2.py,
execution.py) then check this runtime from outside.

- I/O names are ``impl.runtime.io_names``'s, tasks are numbered as in the model file.
- Device copies, argument writes, launches and faults are the device trace as
  ``impl.device.trace_events`` transcribes it; a copy names the I/O it moves, and a kernel
  that faulted shows as the launch it attempted (the device's ``FaultedLaunch``) followed
  by the fault.
- Memory events are the *runtime's* allocations: blocks its allocators hand out, from the
  executor's runtime log (owner ``runtime``, or ``user`` for a block a caller's output
  tensor took over, ``io`` naming the I/O it was allocated for), and the load's and unload's
  own device allocations and frees (owner ``model``). The device allocations within a call
  are the allocators' backing (the caching allocator's spans are its pool, not allocations
  of a call) and are left out.
- When the executor was unloaded after ``record`` (its last call), what followed the call,
  the unload's frees and an ``unload`` event close the trace.
"""
from __future__ import annotations

from zcspec.impl.device.trace_events import TraceNames, spec_event
from zcspec.impl.runtime.io_names import io_names
from zcspec.impl.runtime.record import ExecutionRecord
from zcspec.impl.runtime.v2.errors import RuntimeV2Error
from zcspec.spec.observables.execution import CallResult, ExecutionObservation, SlotValue
from zcspec.spec.observables.execution import UserBuffer as SpecBuffer
from zcspec.spec.observables.load import IoTensor, LoadObservation, LoadOptionsObservation, RegionBinding
from zcspec.spec.observables.trace import Event


def _trace_names(exe, owner: str | None, copies: dict | None = None) -> TraceNames:
    """The trace in the observation's names: every device allocation owned by ``owner`` (None: left out)."""
    names = io_names(exe.model)
    return TraceNames({f"{t.kind}/{t.node}": t.index for t in exe.model.tasks.tasks},
                      {p: names[k] for p, k in (copies or {}).items()}, (), owner)


def observe_load(exe) -> LoadObservation:
    o = exe.options
    options = LoadOptionsObservation("v2", zero_copy=o.zero_copy, always_zero_copy=o.always_zero_copy, ge_compat=o.ge_compat)
    regions = tuple(RegionBinding(r, exe.region_base(r), exe.model.regions[r]) for r in ("weight", "fixed")
                    if exe.model.regions.get(r))
    names = io_names(exe.model)
    io = tuple(IoTensor(names[(d.role, d.index)], d.role, 0, d.size, d.nbytes, d.zero_copy)
               for d in exe.model.tasks.inputs + exe.model.tasks.outputs)
    events = _Events(names)
    events.device(exe.device.trace, (exe.load_begin, exe.load_end), _trace_names(exe, "model"))
    return LoadObservation(options, regions, io, (), (), tuple(events.out))


class _Events:
    """Builds the spec's event list from device trace events and runtime log entries."""

    def __init__(self, names: dict, handed: dict | None = None):
        self.names, self.handed = names, handed or {}
        self.out: list[Event] = []

    def add(self, kind: str, **fields) -> None:
        self.out.append(Event(len(self.out), kind, **fields))

    def device(self, trace, span: tuple[int, int], names: TraceNames, log=()) -> None:
        """The trace positions ``[begin, end)``, each runtime log entry placed at the position it was logged."""
        begin, end = span
        log = list(log)
        for k, e in enumerate(trace.since(begin)[:end - begin]):
            while log and log[0].at <= begin + k:
                self.runtime(log.pop(0))
            ev = spec_event(e, begin + k, len(self.out), names)
            if ev is not None:
                self.out.append(ev)
        for entry in log:
            self.runtime(entry)

    def runtime(self, r) -> None:
        if r.kind == "alloc":
            key = self.handed.get(r.address)
            io = self.names.get(key) if key else _io(self.names, r.io)
            self.add("alloc", address=r.address, size=r.size, owner="user" if key else "runtime",
                     purpose=r.purpose, io=io)
        elif r.kind == "free":
            self.add("free", address=r.address)
        elif r.kind == "error":
            self.add("error", message=r.message, io=r.io and _io(self.names, r.io), code=r.code)
        elif r.kind == "unload":
            self.add("unload")


def _io(names: dict, value: str | None) -> str | None:
    """The observed I/O name of ``"role:index"`` (what the runtime records) or of a bare tensor name."""
    if not value:
        return None
    role, _, index = value.rpartition(":")
    if role in ("input", "output") and index.isdigit():
        return names.get((role, int(index)), value)
    hits = [name for (r, i), name in names.items() if name == value]
    return hits[-1] if hits else value


def observe_execution(exe, record: ExecutionRecord | None = None, outputs=()) -> ExecutionObservation:
    """The execute call ``record`` (None: the last one); ``outputs`` are OutputResults to attach."""
    record = record or exe.records[-1]
    names = io_names(exe.model)
    buffers = tuple(SpecBuffer(names[g.key], g.role, g.address, g.size, g.placement) for g in record.buffers)
    trace, (log_begin, log_end) = exe.device.trace, record.log
    ev = _Events(names, dict(record.handed))
    ev.add("call_begin", call="execute")
    ev.device(trace, record.trace, _trace_names(exe, None, record.copies), log=exe.log[log_begin:log_end])
    ev.add("call_end", call="execute", ok=record.error is None)
    if exe.closed and record is exe.records[-1]:
        ev.device(trace, (record.trace[1], len(trace)), _trace_names(exe, "model"), log=exe.log[log_end:])
    slots = {(e.task, e.slot): e.value for e in ev.out if e.kind == "arg_write"}
    err = record.error
    culprit = None
    ours = err if isinstance(err, RuntimeV2Error) else getattr(err, "__cause__", None)
    if isinstance(ours, RuntimeV2Error) and ours.culprit:
        culprit = _io(names, ours.io_key or ours.culprit)
    io_addresses = {names[k]: v for k, v in record.io_addresses.items()}
    return ExecutionObservation(
        observe_load(exe), buffers, tuple(SlotValue(t, s, v) for (t, s), v in sorted(slots.items())), io_addresses,
        tuple(ev.out), tuple(outputs), CallResult(err is None, None if err is None else str(err), culprit))
