"""Refinement mapping: a runtime-v2 load and execute call as the spec's observables.

``observe_load(exe)`` -> LoadObservation and ``observe_execution(exe, record=None, outputs=())``
-> ExecutionObservation (``record`` defaults to the executor's last call), so the spec's v2
invariants (spec/invariants/runtime_v2.py, execution.py) check this runtime from outside.

- I/O names are the model tensors' (``tensor:role<index>`` when one tensor is both an input
  and an output), tasks are numbered as in the model file.
- Memory events are the *runtime's* allocations: blocks its allocators hand out (owner
  ``runtime``, or ``user`` for a block a caller's output tensor took over, ``io`` naming the
  I/O it was allocated for) and the load's own device allocations (owner ``model``). The
  caching allocator's spans are its pool, not allocations of a call, and are not events.
- Device copies, argument writes, launches and faults come from the device trace; a copy
  names the I/O it moves. A kernel that faulted is observed as the launch it attempted
  (the ranges its arguments designated: on hardware without the emulator's bounds checks
  those writes land) followed by the fault.
- When the executor was unloaded after ``record``, the unload's frees and an ``unload``
  event close the trace.
"""
from __future__ import annotations

from zcspec.impl.device import trace as tr
from zcspec.impl.runtime.v2.errors import RuntimeV2Error
from zcspec.spec.observables.execution import CallResult, ExecutionObservation, SlotValue
from zcspec.spec.observables.execution import UserBuffer as SpecBuffer
from zcspec.spec.observables.load import IoTensor, LoadObservation, Options, RegionBinding
from zcspec.spec.observables.trace import Event, Range


def io_names(model) -> dict[tuple, str]:
    """(role, index) -> observed I/O name."""
    t = model.tasks
    tensors = [d.tensor for d in t.inputs + t.outputs]
    return {(d.role, d.index): d.tensor if tensors.count(d.tensor) == 1 else f"{d.tensor}:{d.role}{d.index}"
            for d in t.inputs + t.outputs}


def observe_load(exe) -> LoadObservation:
    o = exe.option
    options = Options("v2", zero_copy=o.zero_copy, always_zero_copy=o.always_zero_copy, ge_compat=o.ge_compat)
    regions = tuple(RegionBinding(r, exe.region_base(r), exe.model.regions[r]) for r in ("weight", "fixed")
                    if exe.model.regions.get(r))
    names = io_names(exe.model)
    io = tuple(IoTensor(names[(d.role, d.index)], d.role, 0, d.size, d.nbytes, d.zero_copy)
               for d in exe.model.tasks.inputs + exe.model.tasks.outputs)
    events = _Events(exe, {}, names)
    events.device(exe.device.trace.since(exe.load_begin)[:exe.load_end - exe.load_begin], owner="model")
    return LoadObservation(options, regions, io, (), (), tuple(events.out))


class _Events:
    """Builds the spec's event list from device trace events and runtime log entries."""

    def __init__(self, exe, record_maps: dict, names: dict, start: int = 0):
        self.exe, self.names = exe, names
        self.index = {f"{t.kind}/{t.node}": t.index for t in exe.model.tasks.tasks}
        self.launched = record_maps.get("launched", {})
        self.copy_io = record_maps.get("copy_io", {})
        self.handed = record_maps.get("handed", {})
        self.out: list[Event] = []
        self.seq = start

    def add(self, kind: str, **fields) -> None:
        self.out.append(Event(self.seq, kind, **fields))
        self.seq += 1

    def device(self, events, *, owner: str | None = None, log=(), begin: int = 0) -> None:
        log = list(log)
        for k, e in enumerate(events):
            while log and log[0].at <= begin + k:
                self.runtime(log.pop(0))
            self.one(e, owner)
        for entry in log:
            self.runtime(entry)

    def one(self, e, owner: str | None) -> None:
        if isinstance(e, tr.Alloc) and owner:
            self.add("alloc", address=e.addr, size=e.size, owner=owner, purpose=e.tag)
        elif isinstance(e, tr.Free) and owner:
            self.add("free", address=e.addr)
        elif isinstance(e, tr.Copy):
            io = self.copy_io.get(e.task)
            self.add("copy", direction=e.direction, src=e.src, dst=e.dst, size=e.nbytes,
                     io=self.names.get(io) if io else None)
        elif isinstance(e, tr.ArgWrite):
            self.add("arg_write", task=self.index.get(e.task), slot=e.slot, value=e.value)
        elif isinstance(e, tr.Launch) and e.task in self.index:
            self.add("launch", task=self.index[e.task], reads=_ranges(e.reads), writes=_ranges(e.writes))
        elif isinstance(e, tr.Fault):
            attempted = self.launched.get(e.task)
            if attempted is not None:
                self.add("launch", task=self.index.get(e.task), reads=_ranges(attempted[0]),
                         writes=_ranges(attempted[1]))
            self.add("fault", address=e.address, task=self.index.get(e.task), message=e.message)

    def runtime(self, r) -> None:
        if r.kind == "alloc":
            key = self.handed.get(r.address)
            io = self.names.get(key) if key else self._io(r.io)
            self.add("alloc", address=r.address, size=r.size, owner="user" if key else "runtime",
                     purpose=r.purpose, io=io)
        elif r.kind == "free":
            self.add("free", address=r.address)
        elif r.kind == "error":
            self.add("error", message=r.message, io=r.io and self._io(r.io), code=r.code)
        elif r.kind == "unload":
            self.add("unload")

    def _io(self, value: str | None) -> str | None:
        """The observed I/O name of ``"role:index"`` (what the runtime records) or of a bare tensor name."""
        if not value:
            return None
        role, _, index = value.rpartition(":")
        if role in ("input", "output") and index.isdigit():
            return self.names.get((role, int(index)), value)
        hits = [name for (r, i), name in self.names.items() if name == value]
        return hits[-1] if hits else value


def _ranges(pairs) -> tuple[Range, ...]:
    return tuple(Range(a, n) for a, n in pairs)


def observe_execution(exe, record=None, outputs=()) -> ExecutionObservation:
    """The execute call ``record`` (default: the last one); ``outputs`` are OutputResults to attach."""
    record = record or exe.records[-1]
    names = io_names(exe.model)
    buffers = tuple(SpecBuffer(names[("input", i)], "input", a, s, p) for i, (_, a, s, p) in enumerate(record.inputs))
    buffers += tuple(SpecBuffer(names[("output", i)], "output", a, s, p)
                     for i, (_, a, s, p) in enumerate(record.outputs))
    maps = {"launched": record.launched, "copy_io": record.copy_io, "handed": record.handed}
    ev = _Events(exe, maps, names)
    ev.add("call_begin", call="execute")
    trace = exe.device.trace.since(record.trace_begin)[:record.trace_end - record.trace_begin]
    ev.device(trace, log=exe.log[record.log_begin:record.log_end], begin=record.trace_begin)
    ev.add("call_end", call="execute", ok=record.error is None)
    if exe.closed and record is exe.records[-1]:
        ev.device(exe.device.trace.since(record.trace_end), owner="model", log=exe.log[record.log_end:],
                  begin=record.trace_end)
    slots = {(e.task, e.slot): e.value for e in ev.out if e.kind == "arg_write"}
    err = record.error
    culprit = None
    ours = err if isinstance(err, RuntimeV2Error) else getattr(err, "__cause__", None)
    if isinstance(ours, RuntimeV2Error) and ours.culprit:
        culprit = ev._io(ours.io_key or ours.culprit)
    io_addresses = {names[k]: v for k, v in record.io_addresses.items()}
    return ExecutionObservation(
        observe_load(exe), buffers, tuple(SlotValue(t, s, v) for (t, s), v in sorted(slots.items())), io_addresses,
        tuple(ev.out), tuple(outputs), CallResult(err is None, None if err is None else str(err), culprit))
