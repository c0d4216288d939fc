"""Refinement mapping: a runtime-v1 load and execute call as the spec's observables.

``observe_load(lm)`` -> ``zcspec.spec.observables.load.LoadObservation`` and
``observe_execution(lm, record=None, outputs=())`` -> ``ExecutionObservation``
(``record`` defaults to the model's last call). The spec's runtime invariants
(spec/invariants/runtime_v1.py, execution.py) then check the runtime from the
outside: I/O names are the model tensors' (``tensor:role<index>`` when an input
and an output share a tensor), tasks are numbered as in the model file, slot
values are read back from the device's argument tables, and events come from
the device trace (allocation owners from the runtime's tags: ``v1 model`` ->
model, ``v1 runtime`` -> runtime, anything else -> user).
"""
from __future__ import annotations

from zcspec.spec.observables.execution import CallResult, ExecutionObservation, SlotValue
from zcspec.spec.observables.execution import UserBuffer as SpecBuffer
from zcspec.spec.observables.load import IoTensor, LoadObservation, Options, RegionBinding
from zcspec.spec.observables.model_file import ZeroCopyEntry
from zcspec.spec.observables.trace import Event, Range

from zcspec.impl.device import trace as tr
from zcspec.impl.runtime.v1.allocator import MODEL_TAG, RUNTIME_TAG
from zcspec.impl.runtime.v1.args import task_names


def _owner(tag: str) -> str:
    if tag.startswith(MODEL_TAG):
        return "model"
    return "runtime" if tag.startswith(RUNTIME_TAG) or tag.startswith("v1 ") else "user"


def _event(e, seq: int, index: dict, io: str | None):
    """One device trace event as a spec Event (None for kinds the spec does not observe)."""
    if isinstance(e, tr.Alloc):
        return Event(seq, "alloc", address=e.addr, size=e.size, owner=_owner(e.tag), purpose=e.tag)
    if isinstance(e, tr.Free):
        return Event(seq, "free", address=e.addr)
    if isinstance(e, tr.Copy):
        return Event(seq, "copy", direction=e.direction, src=e.src, dst=e.dst, size=e.nbytes, io=io)
    if isinstance(e, tr.ArgWrite):
        return Event(seq, "arg_write", task=index.get(e.task), slot=e.slot, value=e.value)
    if isinstance(e, tr.Launch):
        return Event(seq, "launch", task=index.get(e.task), reads=tuple(Range(a, n) for a, n in e.reads),
                     writes=tuple(Range(a, n) for a, n in e.writes))
    if isinstance(e, tr.Fault):
        return Event(seq, "fault", address=e.address, task=index.get(e.task), message=e.message)
    return None


def _events(lm, span, copies: dict | None = None, start_seq: int = 0) -> list[Event]:
    index = {n: i for i, n in enumerate(task_names(lm.model))}
    out = []
    for k, e in enumerate(lm.device.trace.since(span[0])[:span[1] - span[0]]):
        ev = _event(e, start_seq + len(out), index, (copies or {}).get(k))
        if ev is not None:
            out.append(ev)
    return out


def _hccl_without_zero_copy(model) -> set[str]:
    """Tensors an HCCL task reads or writes through a buffer it flags as not zero copy, read from
    the model's task definitions (ge-facts.md 6.8.1-6.8.2), not from the runtime's own bookkeeping,
    so V1-HCCL-COPY judges the runtime against the model."""
    out: set[str] = set()
    for t in model.tasks.tasks:
        if t.kind != "hccl":
            continue
        flags = tuple(t.zero_copy_in) + tuple(t.zero_copy_out)
        out |= {s.tensor for s, ok in zip(t.slots, flags) if not ok}
    return out


def observe_load(lm) -> LoadObservation:
    opts = lm.options
    options = Options("v1", zero_copy=opts.zero_copy, reuse_zero_copy_memory=bool(opts.reuse_zero_copy_memory))
    regions = tuple(
        RegionBinding(name, lm.bases[name], lm.model.regions.get(name, 0),
                      lm.backed.get(name, True) and (lm.model.regions.get(name, 0) > 0 or name != "fixed"))
        for name in ("feature_map", "zero_copy", "weight", "fixed"))
    unsupported = _hccl_without_zero_copy(lm.model)
    io = tuple(IoTensor(z.name, z.role, lm.model_address(z), z.desc.size, z.desc.nbytes, z.zero_copy_block,
                        z.desc.tensor in unsupported) for z in lm.io)
    names = {z.key: (z.name, z.role) for z in lm.io}
    table = tuple(ZeroCopyEntry(e.task, e.slot, names[(e.role, e.index)][0], e.role, e.relative_offset)
                  for e in lm.model.tasks.zero_copy)
    copy_only = tuple(z.name for z in lm.io if z.copy_only)
    return LoadObservation(options, regions, io, table, copy_only, tuple(_events(lm, lm.load_span)))


def observe_execution(lm, record=None, outputs=()) -> ExecutionObservation:
    """The execute call ``record`` (default: the last one) of ``lm``; ``outputs`` are OutputResults to attach.

    When the model has been unloaded since, the unload's frees and an ``unload`` event follow the call.
    """
    record = record or lm.last_call
    load = observe_load(lm)
    buffers = tuple(SpecBuffer(z.name, z.role, b.addr, b.size, b.placement) for z, b in record.given)
    # Slot values are what the tasks ran with (captured at launch): none when the call stopped
    # before launching anything.
    values = record.slot_values or ()
    slots = tuple(SlotValue(i, s, v) for i, task in enumerate(values) for s, v in enumerate(task))
    events = [Event(0, "call_begin", call="execute")]
    events += _events(lm, record.trace, record.copies, start_seq=1)
    err = record.error
    if err is not None:
        events.append(Event(len(events), "error", message=str(err), io=getattr(err, "buffer", None) or None,
                            code=str(getattr(err, "code", ""))))
    events.append(Event(len(events), "call_end", call="execute", ok=record.ok))
    if lm.unload_span is not None:   # unloaded since: show the frees, so EXEC-NO-LEAK can judge
        events += _events(lm, lm.unload_span, start_seq=len(events))
        events.append(Event(len(events), "unload"))
    result = CallResult(record.ok, None if err is None else str(err), getattr(err, "buffer", None) or None,
                        getattr(err, "rule", None) or None)
    return ExecutionObservation(load, buffers, slots, dict(record.io_addresses), tuple(events), tuple(outputs), result)
