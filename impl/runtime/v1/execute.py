"""One execute call (GE's NnExecute: CopyModelData -> UpdateAllNodeArgs -> run -> CopyOutputData).

Order, all under the device lock:

1. check every buffer (bind.py) — a rejected call has touched nothing;
2. allocate a staging device buffer for each zero-copy I/O the user placed in
   host memory (freed before the call returns, whatever happens);
3. refresh the registered slots of the allocations whose base changed: refresh.py says
   which slots get which address (a pure function of the model's refresh table and this
   call's bindings), this module writes them to the device;
4. copy in: copy-only inputs from the user's buffer to the model's address
   (min(user size, model size) bytes, ``CopyInputForNoZeroCopy``), host-staged inputs H2D;
5. launch every task on its stream and synchronize (of a dynamic-batch model, only the chosen
   branch's tasks and the unlabelled ones: runtime/branches.py);
6. copy out: copy-only outputs from the model's address to the user's buffer
   (the raw output bytes, ``CopyOutputForNoZeroCopy``), host-staged outputs D2H.

Outputs that are copied (copy-only or host-staged) are written only after the
whole run succeeded, so a device failure leaves those user buffers untouched. A
zero-copy output is written by its producing task directly: a fault in a *later*
task leaves it written, as on real hardware (documented in docs/runtime-v1.md).
A device failure becomes an InternalError (ACL_ERROR_GE_INTERNAL_ERROR) naming
the task. Device accounting is back at its baseline when the call returns.

Every call, refused or not, leaves an ``impl.runtime.record.ExecutionRecord`` in
``lm.state.last_call`` (the value a successful call returns).
"""
from __future__ import annotations

import attrs

from zcspec.impl.device import Counters, DeviceError, EventRecordTask, EventWaitTask
from zcspec.impl.runtime.record import ExecutionRecord, GivenBuffer
from zcspec.impl.runtime.user_buffers import UserBuffer
from zcspec.impl.runtime.v1.allocator import RUNTIME_TAG
from zcspec.impl.runtime.v1.bind import Binding, bind
from zcspec.impl.runtime import branches
from zcspec.impl.runtime.v1.errors import InternalError, ModelUnloadedError, ParamInvalid, RuntimeV1Error
from zcspec.impl.runtime.v1.refresh import Refresh, refresh


@attrs.define
class _Call:
    """What one call has done so far, for its record and its clean-up."""

    mark: int                          # device trace position at the start
    before: Counters                   # device counters at the start
    given: tuple[GivenBuffer, ...]     # the caller's buffers as passed
    temps: list[int] = attrs.field(factory=list)         # staging buffers to free
    refresh: Refresh | None = None                         # the refresh, once applied
    addresses: dict = attrs.field(factory=dict)          # (role, index) -> address the tasks use


def execute(lm, inputs: list, outputs: list, batch: str | None = None) -> ExecutionRecord:
    """Run ``lm`` once; returns the record (also kept as ``lm.state.last_call``) or raises RuntimeV1Error.

    ``batch`` chooses the dynamic-batch branch (runtime/branches.py): required, and one of the
    model's labels, when the model has branches; a bad choice is refused before anything is touched."""
    with lm.lock:
        state = lm.state
        if state.unloaded:
            raise ModelUnloadedError(lm.model.name)
        dev = lm.device
        call = _Call(dev.trace.mark(), dev.counters, _given(lm, inputs, outputs))
        try:
            if why := branches.problem(lm.model.name, branches.labels(lm.model.tasks), batch):
                raise ParamInvalid(why, message_id="")
            _run(lm, bind(lm, inputs, outputs), call, batch)
        except RuntimeV1Error as e:
            _finish(lm, call, e)
            raise
        except DeviceError as e:
            err = InternalError(f"the device failed during the run: {e}", task=getattr(e, "task", ""))
            _finish(lm, call, err)
            raise err from e
        _finish(lm, call, None)
        state.executions += 1
        return state.last_call


def _given(lm, inputs: list, outputs: list) -> tuple[GivenBuffer, ...]:
    """The caller's buffers by position: inputs against the model's inputs, outputs against its outputs."""
    n = lm.n_inputs
    passed = [*inputs[:n], *[None] * (n - len(inputs))] + list(outputs)
    return tuple(GivenBuffer(z.role, z.index, b.addr, b.size, b.placement)
                 for z, b in zip(lm.io, passed) if isinstance(b, UserBuffer))


def _stage(lm, bindings: list[Binding], call: _Call) -> list[Binding]:
    """A device staging buffer for every host-placed zero-copy I/O; the bindings with their addresses."""
    out = []
    for b in bindings:
        if b.mode == "stage":
            temp = lm.alloc.malloc(b.io.desc.size, f"staging for {b.io.name}", owner=RUNTIME_TAG)
            call.temps.append(temp)
            b = attrs.evolve(b, address=temp)
        out.append(b)
    return out


def _copy_sources(bindings: list[Binding]) -> list[Binding]:
    """An I/O whose address lies inside an earlier I/O's allocation (``ZeroCopyOffset.copy_from``) is copied
    to (input) or from (output) where that I/O is in this call: the user's buffer (zero copy), its staging
    buffer or the model's address (``davinci_model.cc`` ``CopyInputForNoZeroCopy`` /
    ``CopyOutputForNoZeroCopy``: the allocation's active base plus the offset)."""
    by_key = {b.io.key: b for b in bindings}
    return [attrs.evolve(b, address=by_key[b.io.copy_from[0]].address + b.io.copy_from[1])
            if b.io.copy_from is not None else b for b in bindings]


def _apply(lm, plan: Refresh) -> None:
    """Write the refresh's slot updates to the device; the active bases follow only once all are written
    (a failure leaves the changed allocations unknown, so the next call rewrites them)."""
    active = lm.state.active
    for k in plan.changed:
        active[k] = None
    try:
        for task, slots in plan.per_task:
            lm.device.refresh_args(lm.tasks[task], slots)
    except DeviceError as e:
        raise InternalError(f"argument refresh failed: {e}", task=getattr(e, "task", "")) from e
    lm.state.active = dict(plan.active)


def _run(lm, bindings: list[Binding], call: _Call, batch: str | None) -> None:
    dev = lm.device
    bindings = _copy_sources(_stage(lm, bindings, call))
    call.addresses.update((b.io.key, b.address) for b in bindings)
    plan = refresh(lm.refresh_table, lm.state.active, bindings, lm.state.feature_map)
    _apply(lm, plan)
    call.refresh = plan
    for b in bindings:
        if b.io.role == "input" and b.mode != "refresh":
            _copy_input(lm, b)
    for task, t, waits in zip(lm.tasks, lm.model.tasks.tasks, lm.waits):
        if not branches.launches(t, batch):
            continue   # another dynamic-batch branch: its memory may be this branch's (dynamic_batch_mem_assigner.cc)
        task = branches.for_branch(task, batch)
        for other in waits:   # cross-stream data edge: record there, wait here
            event = dev.create_event()
            dev.launch(EventRecordTask(f"{task.name} record", event), lm.streams[other])
            dev.launch(EventWaitTask(f"{task.name} wait", event), lm.streams[t.stream])
        dev.launch(task, lm.streams[t.stream])
    dev.synchronize()
    for b in bindings:
        if b.io.role == "output" and b.mode != "refresh" and b.address != b.buffer.addr:
            # none onto itself (CopyOutputForNoZeroCopy)
            _copy_output(lm, b)


def _copy_input(lm, b: Binding) -> None:
    """The caller's input bytes into the model's address for them (CopyInputForNoZeroCopy)."""
    _copy(lm, b.address, b.buffer.addr, min(b.buffer.size, b.io.desc.size))


def _copy_output(lm, b: Binding) -> None:
    """The output's bytes from the model's address into the caller's buffer (CopyOutputForNoZeroCopy)."""
    _copy(lm, b.buffer.addr, b.address, b.io.desc.nbytes)


def _copy(lm, dst: int, src: int, nbytes: int) -> None:
    if nbytes == 0:
        return   # zero-length copies are skipped (CopyInputForNoZeroCopy, CopyOutputForNoZeroCopy)
    lm.device.memcpy(dst, src, nbytes)


def _finish(lm, call: _Call, error) -> None:
    """Free the call's staging buffers and record the call (counters, trace span)."""
    try:
        lm.alloc.free_all(call.temps)
    finally:
        dev = lm.device
        lm.state.last_call = ExecutionRecord(
            (call.mark, dev.trace.mark()), call.given, dev.counters - call.before, dict(call.addresses),
            error, refresh=call.refresh)
