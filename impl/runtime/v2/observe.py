"""Refinement mapping: a runtime-v2 load and execute call as the spec's observables.

``observe_load(exe)`` -> LoadObservation and ``observe_execution(exe, record=None, outputs=())``
-> ExecutionObservation for the call ``record`` (an ``impl.runtime.record.ExecutionRecord``;
None: the executor's last call) with ``outputs`` (OutputResults) attached: the same signature
and meaning as runtime v1's. The spec's v2 invariants (spec/invariants/runtime_v2.py,
execution.py) then check this runtime from outside.

- I/O names are ``impl.runtime.io_names``'s, tasks are numbered as in the model file; each I/O's
  region, offset, tensor and alias root (its ``alias_of`` chain) are the model file's plan's.
- Device copies, argument writes, launches and faults are the device trace as
  ``impl.device.trace_events`` transcribes it (a copy's addresses, not the I/O the runtime says it moves); a kernel
  that faulted shows as the launch it attempted (the device's ``FaultedLaunch``) followed
  by the fault.
- Memory events are the *device's*: every allocation and free the device trace shows, owners by
  tag and position (:func:`_trace_names`): the load's allocations are the model's, the spans of
  its caching allocator (tag ``<model> hbm span``) the pool's, anything else allocated while a
  call ran the runtime's (directly or through the caller's allocator hook), anything else
  outside calls the caller's. The runtime's own allocator log is not transcribed: blocks it
  hands out of a span it already holds are invisible to the device, so the claims judge them by
  what kernels and copies wrote. Only the log's errors (what the call reported) and the
  ``unload`` are taken from it.
- Before ``call_begin`` come the allocations and frees the device made since the load (earlier
  calls, the caller's buffers), so that what is live at the call is known.
- ``io_addresses`` is the runtime's report of the addresses it used, kept as a label: no v2
  claim judges from it.
- When the executor was unloaded after ``record`` (its last call), what followed the call,
  the unload's frees and an ``unload`` event close the trace.
"""
from __future__ import annotations

from zcspec.impl.compiler.observe import model_tasks
from zcspec.impl.device.trace_events import TraceNames, allocation_events, slot_tensors, spec_event
from zcspec.impl.runtime.io_names import io_names
from zcspec.impl.runtime.record import ExecutionRecord
from zcspec.impl.runtime.v2.errors import RuntimeV2Error
from zcspec.spec.observables.execution import CallResult, ExecutionObservation, SlotValue
from zcspec.spec.observables.execution import UserBuffer as SpecBuffer
from zcspec.spec.observables.load import IoTensor, LoadObservation, LoadOptionsObservation, RegionBinding
from zcspec.spec.observables.trace import Event

_LOGGED = ("error", "unload")   # what the runtime log contributes: the call's reports, not its allocations


def _trace_names(exe, default_owner: str) -> TraceNames:
    """The trace in the observation's names: tags of the model's load and of its caching allocator's spans
    (as the executor names them, executor.py) by prefix; any other tag belongs to ``default_owner``."""
    name = exe.model.name
    owners = ((f"{name} hbm", "pool"), (f"{name} weight", "model"), (f"{name} fixed", "model"),
              (f"{name} args", "model"))
    return TraceNames({f"{t.kind}/{t.node}": t.index for t in exe.model.tasks.tasks},
                      owners, default_owner,
                      slot_tensors(exe.model.tasks.tasks))


def observe_load(exe) -> LoadObservation:
    o = exe.options
    options = LoadOptionsObservation("v2", zero_copy=o.zero_copy, always_zero_copy=o.always_zero_copy, ge_compat=o.ge_compat,
                                     trust_shape_on_out_tensor=o.trust_shape_on_out_tensor,
                                     single_stream=o.enable_single_stream)
    regions = tuple(RegionBinding(r, exe.region_base(r), exe.model.regions[r]) for r in ("weight", "fixed")
                    if exe.model.regions.get(r))
    names = io_names(exe.model)
    roots = _alias_roots(exe.model.plan)
    io = tuple(IoTensor(names[(d.role, d.index)], d.role, None, d.size, d.nbytes, d.zero_copy, region=d.region,
                        offset=d.offset, tensor=d.tensor, alias_root=roots.get(d.tensor))
               for d in exe.model.tasks.inputs + exe.model.tasks.outputs)
    events = _Events(names)
    events.device(exe.device.trace, (exe.load_begin, exe.load_end), _trace_names(exe, "model"))
    # the tasks as the model file writes them: V2-TRUST-SHAPE reads which node computes each output
    return LoadObservation(options, regions, io, (), (), tuple(events.out), model_tasks(exe.model))


def _alias_roots(plan) -> dict[str, str]:
    """Tensor -> the end of its ``alias_of`` chain in the model file's plan, for every tensor that has one."""
    alias = {t.name: t.alias_of for t in plan.tensors if t.alias_of}
    out = {}
    for name in alias:
        root, seen = name, {name}
        while root in alias and alias[root] not in seen:
            root = alias[root]
            seen.add(root)
        out[name] = root
    return out


class _Events:
    """Builds the spec's event list from device trace events and the runtime log's reports."""

    def __init__(self, names: dict):
        self.names = names
        self.out: list[Event] = []

    def add(self, kind: str, **fields) -> None:
        self.out.append(Event(len(self.out), kind, **fields))

    def device(self, trace, span: tuple[int, int], names: TraceNames, log=()) -> None:
        """The trace positions ``[begin, end)``, each runtime report placed at the position it was logged."""
        begin, end = span
        log = [r for r in log if r.kind in _LOGGED]
        for k, e in enumerate(trace.since(begin)[:end - begin]):
            while log and log[0].at <= begin + k:
                self.runtime(log.pop(0))
            ev = spec_event(e, len(self.out), names)
            if ev is not None:
                self.out.append(ev)
        for entry in log:
            self.runtime(entry)

    def between(self, trace, span: tuple[int, int], calls, exe) -> None:
        """The allocations and frees of ``[begin, end)``: the runtime's inside an earlier call's span, else the caller's."""
        inside, outside = _trace_names(exe, "runtime"), _trace_names(exe, "user")
        calls = sorted(c for c in calls if c[1] > span[0] and c[0] < span[1])
        names_at = lambda at: inside if any(lo <= at < hi for lo, hi in calls) else outside  # noqa: E731
        self.out += allocation_events(trace, span, names_at, first_seq=len(self.out))

    def runtime(self, r) -> None:
        if r.kind == "error":
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


def observe_execution(exe, record: ExecutionRecord | None = None, outputs=(),
                      caller_unloaded: bool = False) -> ExecutionObservation:
    """The execute call ``record`` (None: the last one); ``outputs`` are OutputResults to attach.

    After the last call of a closed executor, or of one the caller unloaded (``caller_unloaded``: the
    caller's word, whatever the executor says), the device's events since the call follow it, then an
    ``unload`` event (from the log, or, when the executor logged none, the caller's call), so an unload
    that returned without freeing shows as a leak, not as a run without an unload.
    """
    record = record or exe.records[-1]
    names = io_names(exe.model)
    buffers = tuple(SpecBuffer(names[g.key], g.role, g.address, g.size, g.placement) for g in record.buffers)
    trace, (log_begin, log_end) = exe.device.trace, record.log
    ev = _Events(names)
    ev.between(trace, (exe.load_end, record.trace[0]), [r.trace for r in exe.records if r is not record], exe)
    ev.add("call_begin", call="execute")
    ev.device(trace, record.trace, _trace_names(exe, "runtime"), log=exe.log[log_begin:log_end])
    ev.add("call_end", call="execute", ok=record.error is None)
    if (exe.closed or caller_unloaded) and record is exe.records[-1]:
        ev.device(trace, (record.trace[1], len(trace)), _trace_names(exe, "user"), log=exe.log[log_end:])
        if caller_unloaded and not any(e.kind == "unload" for e in ev.out):
            ev.add("unload")
    slots = {(e.task, e.slot): e.value for e in ev.out if e.kind == "arg_write"}
    err = record.error
    culprit = None
    ours = err if isinstance(err, RuntimeV2Error) else getattr(err, "__cause__", None)
    if isinstance(ours, RuntimeV2Error) and ours.culprit:
        culprit = _io(names, ours.io_key or ours.culprit)
    io_addresses = {names[k]: v for k, v in record.io_addresses.items()}
    return ExecutionObservation(
        observe_load(exe), buffers, tuple(SlotValue(t, s, v) for (t, s), v in sorted(slots.items())), io_addresses,
        tuple(ev.out), tuple(outputs), CallResult(err is None, None if err is None else str(err), culprit),
        record.counters.as_dict())

