"""Refinement mapping: a runtime-v1 load and execute call as the spec's observables.

``observe_load(loaded)`` -> ``zcspec.spec.observables.load.LoadObservation`` and
``observe_execution(loaded, record=None, outputs=())`` -> ``ExecutionObservation`` for the
call ``record`` (an ``impl.runtime.record.ExecutionRecord``; None: the model's last call) with
``outputs`` (OutputResults) attached: the same signature and meaning as runtime v2's. The spec's runtime invariants
(spec/invariants/runtime_v1.py, execution.py) then check the runtime from the outside: I/O
names are ``impl.runtime.io_names``'s, tasks are numbered as in the model file, slot values
are the addresses each launched task read from its argument table as the device trace records
them (a task the call did not launch has none), and events are the device trace as
``impl.device.trace_events`` transcribes it (allocation owners from the runtime's tags:
``v1 model`` -> model, ``v1 active memory`` (a session's allocator) -> session, other ``v1 `` tags
-> runtime, anything else -> user).

Models of one session share its allocator's memory (session.py). What a load took from it is read
from the device trace, not from the runtime: the allocator's ``malloc_memory`` exit in the load's
span gives the feature map's address, and the load's events begin with the allocator's blocks live
when the load began (made by the session's earlier loads). Between the load and a call, and between
the call and the unload, ``v1 model`` allocations are other models' loads (a model allocates only at
load) and are left out. The ``unload`` event's ``holders`` counts, from the allocator's calls in the
trace, the loads still holding the session's memory after the unload gave its hold back (None: the
unload gave back none).
"""
from __future__ import annotations

import attrs

from zcspec.spec.observables.execution import CallResult, ExecutionObservation
from zcspec.spec.observables.execution import UserBuffer as SpecBuffer
from zcspec.spec.observables.load import IoTensor, LoadObservation, LoadOptionsObservation, RegionBinding
from zcspec.spec.observables.model_file import ZeroCopyEntry
from zcspec.spec.observables.trace import Event

from zcspec.impl.device import trace as tr
from zcspec.impl.device.trace_events import TraceNames, allocation_events, launched_slots, slot_tensors, spec_events
from zcspec.impl.runtime.io_names import io_names
from zcspec.impl.runtime.record import ExecutionRecord
from zcspec.impl.runtime.v1.allocator import MODEL_TAG
from zcspec.impl.runtime.v1.args import task_names
from zcspec.impl.compiler.observe import model_tasks

SESSION_TAG = "v1 active memory"   # a session's ActiveMemoryAllocator (active_memory.py names it so)
OWNERS = ((MODEL_TAG, "model"), (SESSION_TAG, "session"), ("v1 ", "runtime"))   # by tag prefix; else the user's
# outside the model's load: a model allocation is another model's
OWNERS_ELSEWHERE = ((MODEL_TAG, None),) + OWNERS[1:]


def _trace_names(lm, owners=OWNERS) -> TraceNames:
    """The trace's task names and tags in the observation's terms."""
    return TraceNames({n: i for i, n in enumerate(task_names(lm.model))}, owners, "user",
                      slot_tensors(lm.model.tasks.tasks))


def _session_calls(trace, span: tuple[int, int], call: str) -> list:
    """The session allocators' ``call`` exits in trace positions ``[span[0], span[1])``."""
    return [e for e in trace.since(span[0])[:span[1] - span[0]]
            if isinstance(e, tr.AllocatorCall) and e.allocator.startswith(SESSION_TAG) and e.call == call
            and e.phase == "exit"]


def _session_blocks(lm, allocator: str) -> list[Event]:
    """``allocator``'s blocks live when the load began (the session's earlier loads made them), as alloc events."""
    names = TraceNames({}, ((allocator + " ", "session"),), None)
    live: dict[int, Event] = {}
    for e in allocation_events(lm.device.trace, (0, lm.load_span[0]), names):
        if e.kind == "alloc":
            live[e.address] = e
        else:
            live.pop(e.address, None)
    return [attrs.evolve(e, seq=i) for i, e in enumerate(live.values())]


def _holders(trace, allocator: str, end: int) -> int:
    """Holders of ``allocator``'s memory at trace position ``end``, counted from its calls (GE's used_count_)."""
    count = 0
    for e in trace.since(0)[:end]:
        if isinstance(e, tr.AllocatorCall) and e.allocator == allocator and e.phase == "exit":
            count = count + 1 if e.call == "malloc_memory" else max(count - 1, 0) if e.call == "free_memory" else count
    return count


def _device_allocations_live(trace, end: int) -> dict[int, int]:
    """Device allocations (anyone's: the model's, the session's, the caller's) live at trace position ``end``,
    address -> size, from the trace's alloc and free events alone."""
    live: dict[int, int] = {}
    for e in trace.since(0)[:end]:
        if isinstance(e, tr.Alloc) and e.space != "host":
            live[e.addr] = e.size
        elif isinstance(e, tr.Free):
            live.pop(e.addr, None)
    return live


def _held(live: dict[int, int], address: int, size: int) -> bool:
    """Whether one live allocation holds all of ``[address, address + size)``: a region is backed when the
    trace shows memory under it, whatever the runtime says it allocated (an empty region is not)."""
    return size > 0 and any(a <= address and address + size <= a + n for a, n in live.items())


def _hccl_without_zero_copy(model) -> set[str]:
    """Tensors an HCCL task reads or writes through a buffer it flags as not zero copy, read from
    the model's task definitions (GE: hccl_task_info.cc ``InitZeroCopyInfos``, ``SetAddrs``), not from the
    runtime's own bookkeeping,
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
    options = LoadOptionsObservation("v1", zero_copy=opts.zero_copy,
                                     reuse_zero_copy_memory=bool(opts.reuse_zero_copy_memory),
                                     legacy_copy_only_addrs=opts.legacy_copy_only_addrs)
    sizes = lm.model.regions
    shared = _session_calls(lm.device.trace, lm.load_span, "malloc_memory")
    # a feature map from the session's allocator: where the allocator's call put it, as the trace says
    base = {"feature_map": shared[0].addr} if shared else {}
    # the memory under each region where the observation places it (the feature map may have moved into memory the
    # caller gave later): live now, or when the unload began
    unload = lm.state.unload_span
    held = _device_allocations_live(lm.device.trace, unload[0] if unload else lm.device.trace.mark())
    regions = []
    for name in ("feature_map", "zero_copy", "weight", "fixed"):
        address, size = base.get(name, lm.base(name)), sizes.get(name, 0)
        regions.append(RegionBinding(name, address, size, _held(held, address, size)))
    regions = tuple(regions)
    unsupported = _hccl_without_zero_copy(lm.model)
    io = tuple(IoTensor(z.name, z.role, lm.model_address(z), z.desc.size, z.desc.nbytes, z.zero_copy_block,
                        z.desc.tensor in unsupported, z.desc.region, z.desc.offset, z.desc.tensor) for z in lm.io)
    names = io_names(lm.model)
    table = tuple(ZeroCopyEntry(e.task, e.slot, names[(e.role, e.index)], e.role, e.relative_offset)
                  for e in lm.model.tasks.zero_copy)
    copy_only = tuple(z.name for z in lm.io if z.copy_only)   # the runtime's label, for reports only
    events = _session_blocks(lm, shared[0].allocator) if shared else []
    events += spec_events(lm.device.trace, lm.load_span, _trace_names(lm), first_seq=len(events))
    return LoadObservation(options, regions, io, table, copy_only, tuple(events), model_tasks(lm.model),
                           lm.model.options.soc)


def observe_execution(lm, record: ExecutionRecord | None = None, outputs=(),
                      unload_span: tuple[int, int] | None = None) -> ExecutionObservation:
    """The execute call ``record`` of ``lm`` (None: its last call); ``outputs`` are OutputResults to attach.

    When the model has been unloaded after this call (its last), the unload's frees and an
    ``unload`` event follow the call. ``unload_span`` is the ``[begin, end)`` of the device trace
    around the caller's own unload call: given, it is transcribed whatever the model says about its
    unload (a facade that drops the unload then shows as a leak, not as a run without an unload),
    after the allocations and frees of whatever ran between the call's end and the unload (racing
    calls that finished later: the caller names the call it started last, whichever finished last).
    """
    record = record or lm.state.last_call
    load = observe_load(lm)
    names = io_names(lm.model)
    buffers = tuple(SpecBuffer(names[g.key], g.role, g.address, g.size, g.placement) for g in record.buffers)
    # Slot values are what the device read from each task's table when it ran it: none when the call
    # stopped before launching anything.
    slots = tuple(launched_slots(lm.device.trace, record.trace, _trace_names(lm)))
    # allocations since the load first (what is live at the call, EXEC-NO-OVERRUN), then the call
    elsewhere = _trace_names(lm, owners=OWNERS_ELSEWHERE)
    events = allocation_events(lm.device.trace, (lm.load_span[1], record.trace[0]), elsewhere)
    events.append(Event(len(events), "call_begin", call="execute"))
    events += spec_events(lm.device.trace, record.trace, _trace_names(lm), first_seq=len(events))
    err = record.error
    named = getattr(err, "buffer", None) or None   # the buffer the error names: one transcription, read twice
    if err is not None:
        events.append(Event(len(events), "error", message=str(err), io=named, code=str(getattr(err, "code", ""))))
    events.append(Event(len(events), "call_end", call="execute", ok=record.ok))
    span = unload_span if unload_span is not None else lm.state.unload_span
    if span is not None and (unload_span is not None or record is lm.state.last_call):
        # unloaded since: show the frees (EXEC-NO-LEAK). Calls that ran after this one and before the
        # unload (racing calls the caller started earlier) show their allocations and frees first.
        events += allocation_events(lm.device.trace, (record.trace[1], span[0]), elsewhere, first_seq=len(events))
        events += spec_events(lm.device.trace, span, _trace_names(lm), first_seq=len(events))
        released = _session_calls(lm.device.trace, span, "free_memory")
        holders = _holders(lm.device.trace, released[-1].allocator, span[1]) if released else None
        events.append(Event(len(events), "unload", holders=holders))
    result = CallResult(record.ok, None if err is None else str(err), named)
    io_addresses = {names[k]: a for k, a in record.io_addresses.items()}
    return ExecutionObservation(load, buffers, slots, io_addresses, tuple(events), tuple(outputs), result,
                                record.counters.as_dict())
