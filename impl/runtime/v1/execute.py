"""One execute call (GE's NnExecute: CopyModelData -> UpdateAllNodeArgs -> run -> CopyOutputData).

Order, all under the device lock:

1. check every buffer (bind.py) — a rejected call has touched nothing;
2. allocate a staging device buffer for each zero-copy I/O the user placed in
   host memory (freed before the call returns, whatever happens);
3. refresh the registered slots of the allocations whose base changed (refresh.py);
4. copy in: copy-only inputs from the user's buffer to the model's address
   (min(user size, model size) bytes, 6.5.4f), host-staged inputs H2D;
5. launch every task on its stream and synchronize;
6. copy out: copy-only outputs from the model's address to the user's buffer
   (the raw output bytes, 6.5.5), host-staged outputs D2H.

Outputs that are copied (copy-only or host-staged) are written only after the
whole run succeeded, so a device failure leaves those user buffers untouched. A
zero-copy output is written by its producing task directly: a fault in a *later*
task leaves it written, as on real hardware (documented in docs/runtime-v1.md).
A device failure becomes an InternalError (ACL_ERROR_GE_INTERNAL_ERROR) naming
the task. Device accounting is back at its baseline when the call returns.
"""
from __future__ import annotations

import attrs

from zcspec.impl.device import Counters, DeviceError, EventRecordTask, EventWaitTask
from zcspec.impl.runtime.v1.allocator import RUNTIME_TAG
from zcspec.impl.runtime.v1.bind import bind
from zcspec.impl.runtime.v1.errors import InternalError, ModelUnloadedError, RuntimeV1Error
from zcspec.impl.runtime.v1.refresh import refresh


@attrs.frozen
class ExecutionRecord:
    """What one call did: ``counters`` of the call alone, the refresh, and where each I/O's data was.

    ``trace`` is the [start, end) span of the device trace; ``copies`` maps the index of
    each I/O copy event in that span to the I/O name; ``io_addresses`` maps I/O name to
    the device address the tasks used for it.
    """

    ok: bool
    counters: Counters
    trace: tuple
    bindings: tuple = ()
    refresh: object = None
    io_addresses: dict = attrs.field(factory=dict)
    copies: dict = attrs.field(factory=dict)
    error: Exception | None = None
    given: tuple = ()   # (io, UserBuffer) pairs as passed, by position, even when binding failed
    slot_values: tuple | None = None   # every task's argument slots as the tasks ran (None: no run)


def execute(lm, inputs: list, outputs: list) -> ExecutionRecord:
    """Run ``lm`` once; returns the record (also kept as ``lm.last_call``) or raises RuntimeV1Error."""
    with lm.lock:
        if lm.unloaded:
            raise ModelUnloadedError(lm.model.name)
        dev = lm.device
        mark, before = dev.trace.mark(), dev.counters
        state = _CallState()
        state.given = tuple(zip(lm.io, [*inputs[:lm.n_inputs], *[None] * (lm.n_inputs - len(inputs))] + list(outputs)))
        try:
            bindings = bind(lm, inputs, outputs)
            state.bindings = bindings
            _run(lm, bindings, state)
        except RuntimeV1Error as e:
            _finish(lm, state, mark, before, e)
            raise
        except DeviceError as e:
            err = InternalError(f"the device failed during the run: {e}", task=getattr(e, "task", ""))
            _finish(lm, state, mark, before, err)
            raise err from e
        _finish(lm, state, mark, before, None)
        lm.executions += 1
        return lm.last_call


class _CallState:
    def __init__(self):
        self.bindings, self.temps, self.refresh, self.addresses, self.copy_marks = (), {}, None, {}, []
        self.given = ()
        self.slot_values = None


def _snapshot_slots(lm) -> tuple:
    """The argument tables the launched tasks will read: one uncounted peek of the args allocation,
    so an observer can see this call's slots even after later calls or unload."""
    if not lm.tasks:
        return ()
    first = lm.tasks[0].args
    n = sum(len(t.slots) for t in lm.tasks)
    flat = lm.device.peek(first, (n,), "<u8").tolist()
    out, k = [], 0
    for t in lm.tasks:
        out.append(tuple(flat[k:k + len(t.slots)]))
        k += len(t.slots)
    return tuple(out)


def _run(lm, bindings, state) -> None:
    dev = lm.device
    for b in bindings:
        if b.mode == "stage":
            state.temps[b.io.key] = lm.alloc.malloc(b.io.desc.size, f"staging for {b.io.name}", owner=RUNTIME_TAG)
    bases = {}
    for b in bindings:
        if b.mode != "copy":
            bases[b.io.key] = state.temps.get(b.io.key, b.buffer.addr)
        state.addresses[b.io.name] = bases.get(b.io.key, lm.model_address(b.io) if b.mode == "copy" else None)
    state.refresh = refresh(lm, bases, host_staged=bool(state.temps))
    for b in bindings:
        if b.io.role == "input" and b.mode != "refresh":
            dst = state.temps.get(b.io.key, lm.model_address(b.io))
            _copy(lm, state, b, dst, b.buffer.addr, min(b.buffer.size, b.io.desc.size))
    for task, t, waits in zip(lm.tasks, lm.model.tasks.tasks, lm.waits):
        for other in waits:   # cross-stream data edge: record there, wait here
            event = dev.create_event()
            dev.launch(EventRecordTask(f"{task.name} record", event), lm.streams[other])
            dev.launch(EventWaitTask(f"{task.name} wait", event), lm.streams[t.stream])
        dev.launch(task, lm.streams[t.stream])
    state.slot_values = _snapshot_slots(lm)
    dev.synchronize()
    for b in bindings:
        if b.io.role == "output" and b.mode != "refresh":
            src = state.temps.get(b.io.key, lm.model_address(b.io))
            _copy(lm, state, b, b.buffer.addr, src, b.io.desc.nbytes)


def _copy(lm, state, b, dst: int, src: int, nbytes: int) -> None:
    if nbytes == 0:
        return   # zero-length copies are skipped (6.5.4f, 6.5.5)
    state.copy_marks.append((lm.device.trace.mark(), b.io.name))
    lm.device.memcpy(dst, src, nbytes)


def _finish(lm, state, mark, before, error) -> None:
    """Free the call's staging buffers and record the call (counters, trace span)."""
    try:
        lm.alloc.free_all(state.temps.values())
    finally:
        dev = lm.device
        copies = {m - mark: name for m, name in state.copy_marks}
        lm.last_call = ExecutionRecord(error is None, dev.counters - before, (mark, dev.trace.mark()),
                                       tuple(state.bindings), state.refresh, dict(state.addresses), copies, error,
                                       tuple((z, b) for z, b in state.given if b is not None), state.slot_values)
