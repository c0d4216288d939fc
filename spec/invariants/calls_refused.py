"""Calls refused: an execute call whose buffers the spec finds invalid is refused, with GE's error, and changes nothing.

The converse of V1-VALID-CALL-SUCCEEDS, for both runtimes. Which buffers are invalid is decided here,
from the observation alone: the model's I/O (their raw and padded sizes, from the model file), the
buffers the caller passed, the load options the caller asked for, the caller's allocations live
when the call began as the trace's alloc and free events show them, and the work and weight memory the
caller gave the model (the observation's ``caller_memory``). Nothing asks the runtime whether
it found a buffer wrong. The refusal is read from the call's own events: the ``error`` event (its
code, the buffer it names) and the absence of any launch, copy, argument write or allocation left
behind.
"""
from __future__ import annotations

from typing import Iterator

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._shadow import call_bounds
from zcspec.spec.invariants._trace import call_events, is_v1, is_v2, live_allocations
from zcspec.spec.invariants.runtime_v1_buffers import (ADDRESS_GRAIN, GE_SIZE_TOLERANCE, V1, _placements, _space_of,
                                                       in_caller_memory, null_allowed, one_to_one, shared_with_output)
from zcspec.spec.invariants.runtime_v2 import V2, bad_inputs, short_or_null
from zcspec.spec.observables.execution import ExecutionObservation

# GE's codes for a caller's mistake (inc/external/ge/ge_error_codes.h, acl/acl_base.h): ACL_ERROR_GE_PARAM_INVALID
# for the I/O buffers NnExecute checks (E13025), ACL_ERROR_INVALID_PARAM for a null pointer at the ACL layer.
V1_CALLER_CODES = ("145000", "100000")
V2_CALLER_CODES = ("PARAM_INVALID",)   # ge::PARAM_INVALID (ge_error_codes.h), as build_tensor.cc returns it

# What a refused call must not have done: a kernel ran, bytes were copied, an argument slot was rewritten.
_ACTIONS = ("launch", "copy", "arg_write")


def _refreshable(t) -> bool:
    """Whether GE binds I/O ``t`` by refreshing its address (ConstructZeroCopyIoActiveBaseAddrs walks only those):
    its block is a zero-copy block in the model file and no HCCL task without zero-copy support touches it. A
    copy-only I/O in host memory is copied, not refused."""
    return t is not None and t.zero_copy_block and not t.hccl_no_zero_copy


def _outside(obs: ExecutionObservation, b) -> str | None:
    """How buffer ``b`` lies outside the caller's memory, when the trace shows it (the load's events and those
    before the call): it reaches past the end of the live allocation it starts in, or starts in an allocation
    the caller freed. None when it starts in no allocation the trace shows (memory the caller allocated
    before the load, which the trace does not cover: the spec cannot tell, so it requires nothing)."""
    live: dict[int, int] = {}
    freed: dict[int, int | None] = {}
    for e in obs.load.events + obs.events[:call_bounds(obs.events)[0]]:
        if e.kind == "alloc" and e.owner == "user" and e.address is not None and e.size:
            live[e.address] = e.address + e.size
            freed.pop(e.address, None)
        elif e.kind == "free" and e.address is not None:
            freed[e.address] = live.pop(e.address, None)
    for start, end in live.items():
        if start <= b.address < end:
            return f"reaches past the end of the caller's allocation [{hex(start)}, {hex(end)}) it starts in"
    for start, end in freed.items():
        if b.address == start or (end is not None and start <= b.address < end):
            return f"starts in the caller's allocation at {hex(start)}, which the caller freed before the call"
    return None


def _v1_invalid(obs: ExecutionObservation) -> dict[str, str]:
    """Buffer name (or ``"inputs/outputs"`` for the count) -> why runtime v1 must refuse the call."""
    why: dict[str, str] = {}
    if not one_to_one(obs):
        why["inputs/outputs"] = "the buffers do not match the model's I/O one to one (E13025)"
    live = _placements(obs)
    for b in obs.buffers:
        t = obs.load.io_tensor(b.name)
        if not b.address and not null_allowed(obs, b):
            why[b.name] = "null address, and not 0 bytes for an I/O of 0 raw bytes"
            continue
        space = _space_of(live, b)
        if inside := in_caller_memory(obs, b, live):
            why[b.name] = inside
        elif space is None and (outside := _outside(obs, b)):
            why[b.name] = f"[{hex(b.address)}, {hex(b.address + b.size)}) {outside}"
        elif space == "host" and obs.load.options.reuse_zero_copy_memory and _refreshable(t):
            why[b.name] = ("host memory for a zero-copy I/O under reuseZeroCopyMemory, whose I/O region is unbacked "
                           "(E13025)")
        elif t is not None and b.size < t.raw_size:
            why[b.name] = f"{b.size} bytes, below the I/O's raw {t.raw_size}: the tasks would access past its end"
        elif t is not None and b.size + GE_SIZE_TOLERANCE < t.size:
            why[b.name] = f"{b.size} + {GE_SIZE_TOLERANCE} bytes, below the model's padded {t.size} (E13025)"
    for a, b in shared_with_output(obs):
        why.setdefault(a.name, f"shares bytes with {b.name!r}, and an output may share memory with no other I/O")
        why.setdefault(b.name, f"shares bytes with {a.name!r}, and an output may share memory with no other I/O")
    return why


def _v2_invalid(obs: ExecutionObservation) -> dict[str, str]:
    """Buffer name -> why runtime v2 must refuse the call: a null or short input (the kernels would read
    past the caller's buffer) and, under always_zero_copy, an output that is null, short or in host
    memory (the caller promised device memory of the output's size: there is no fallback)."""
    why = bad_inputs(obs)
    if not obs.load.options.always_zero_copy:
        return why   # the default mode falls back to runtime memory for outputs (V2-DEFAULT-FALLBACK)
    live = _placements(obs)
    for t in (t for t in obs.load.io if t.role == "output"):
        b = obs.buffer(t.name)
        if reason := short_or_null(obs, t):
            why[t.name] = reason
        elif (_space_of(live, b) or b.placement) == "host":
            why[t.name] = "host memory under always_zero_copy, which promises device memory"
    return why


def _also_refusable(obs: ExecutionObservation) -> set[str]:
    """Buffers a v1 runtime may refuse though the spec does not require it (V1-VALID-CALL-SUCCEEDS lets it):
    host memory under reuseZeroCopyMemory for a copy-only I/O, an address off the 8-byte grain."""
    if not is_v1(obs):
        return set()
    live = _placements(obs)
    return {b.name for b in obs.buffers if b.address and (b.address % ADDRESS_GRAIN or (
        obs.load.options.reuse_zero_copy_memory and _space_of(live, b) == "host"))}


def invalid_buffers(obs: ExecutionObservation) -> dict[str, str]:
    """Why the spec finds this call's buffers invalid, by buffer (empty: no buffer the runtime must refuse)."""
    if not any(e.kind == "call_begin" for e in obs.events):
        return {}
    return _v1_invalid(obs) if is_v1(obs) else _v2_invalid(obs) if is_v2(obs) else {}


def _refused_with_ge_error(obs: ExecutionObservation, why: dict[str, str]) -> Iterator:
    codes = V1_CALLER_CODES if is_v1(obs) else V2_CALLER_CODES
    events = call_events(obs)
    errors = [e for e in events if e.kind == "error"]
    listed = "; ".join(f"{k!r}: {v}" for k, v in sorted(why.items()))
    if obs.result.ok or not errors:
        yield violation("execute call", f"was not refused (ok={obs.result.ok}, {len(errors)} error events) although "
                        f"its buffers are invalid: {listed}", invalid=sorted(why))
        return
    e = errors[0]
    if str(e.code) not in codes:
        yield violation("execute call", f"was refused with code {e.code!r}, not GE's caller error {' or '.join(codes)}"
                        f" (the call's buffers are invalid: {listed}; a refusal after the run began is not a check "
                        f"of the caller's buffers)", code=e.code)
    elif "inputs/outputs" not in why and e.io not in why and e.io not in _also_refusable(obs):
        yield violation("execute call", f"was refused naming {e.io!r}, which is valid; the invalid buffers are "
                        f"{listed}", named=e.io)


def _changed_nothing(obs: ExecutionObservation) -> Iterator:
    events = call_events(obs)
    done = [e for e in events if e.kind in _ACTIONS]
    if done:
        e = done[0]
        what = f"task {e.task}" if e.kind in ("launch", "arg_write") else f"a {e.direction} copy"
        yield violation(f"{e.kind} #{e.seq}", f"the call's buffers are invalid, yet before it was refused it did "
                        f"{len(done)} launches, copies or argument writes, the first a {e.kind} of {what}",
                        event=e.seq, actions=len(done))
    for address, e in sorted(live_allocations(events, owners=("model", "runtime")).items()):
        yield violation(f"allocation {hex(address)}", f"the refused call left {e.size} bytes allocated "
                        f"(alloc #{e.seq}, {e.purpose or 'unnamed'})", address=address)


def _invalid_refused(obs: ExecutionObservation):
    why = invalid_buffers(obs)
    if not why:
        return
    yield from _refused_with_ge_error(obs, why)
    if not obs.result.ok:
        yield from _changed_nothing(obs)


INVALID_REFUSED = Invariant(
    id="CALL-INVALID-REFUSED",
    title="A call with invalid buffers is refused with GE's error and changes nothing",
    statement="An execute call whose buffers the spec finds invalid fails with GE's error for a caller's "
              "mistake, naming one of the invalid buffers, before it does anything: no kernel launch, no copy, no "
              "argument slot rewritten, no allocation left behind. Runtime v1: the buffers do not match the "
              "model's I/O one to one, or one is null (but for a 0-byte buffer for an I/O of 0 raw bytes), "
              "reaches past the end of the caller's allocation it starts in or starts in one the caller freed "
              "(the trace's allocation events since the load; the bounds of memory from before the load are not "
              "judged), is host memory for an I/O the model file binds zero copy under reuseZeroCopyMemory, is "
              "below its I/O's raw size or 64 bytes below its padded size, is a device buffer sharing bytes with "
              "the work or weight memory the caller gave the model (at load, or by its last move of the work "
              "memory), or an output shares bytes with another buffer (but for the very buffer of an input the "
              "model file places at the output's logical address with its sizes, a pass-through); the error is "
              "ACL_ERROR_GE_PARAM_INVALID (145000), or ACL_ERROR_INVALID_PARAM (100000) for a null pointer. "
              "Runtime v2: an input is null or below its raw size, or, under always_zero_copy, an output is null, "
              "below its raw size or in host memory; the error is PARAM_INVALID.",
    rationale="V1-VALID-CALL-SUCCEEDS says good buffers run; nothing else says bad ones stop. A runtime whose check "
              "of the caller's buffers is weakened runs the call anyway: its kernels read past a short input, "
              "write an output into memory the caller freed or into another I/O's bytes, and the call returns ok "
              "or fails later with an internal error after the model's argument tables were rewritten. GE checks "
              "the user's I/O before any task runs: DavinciModel::UpdateAllNodeArgs refuses a count that differs "
              "from the model's (E13025, ACL_ERROR_GE_PARAM_INVALID) and, through CheckIoReuseAddrs, I/O pairs "
              "configured to share an address that do not; ConstructZeroCopyIoActiveBaseAddrs applies "
              "CheckUserAndModelSize (user + 64 < model size) and refuses host memory when the model's I/O region "
              "is unbacked (mem_base_size_ < TotalMemSize(), as under reuseZeroCopyMemory); ACL refuses a null "
              "data-buffer address with ACL_ERROR_INVALID_PARAM, while DavinciModel skips a buffer of length 0 "
              "(CopyInputData), so a null one for an empty tensor runs; gert's SplitTensorForOutputData refuses a "
              "null or short output under always_zero_copy (PARAM_INVALID, E13031). Beyond GE, which trusts the "
              "caller's pointers, runtime v1 refuses a buffer outside one live allocation, below its raw size, in "
              "the work or weight memory the caller gave the model (whose tasks would overwrite an input there, or "
              "an output there would overwrite the model's feature map or weights; that memory was allocated "
              "before the load, so the trace's allocations alone cannot tell), or an output sharing bytes with "
              "another I/O other than an input it passes through (docs/runtime-v1.md), and runtime v2 a null or "
              "short input and a host output under "
              "always_zero_copy (a check GE's source leaves for later), each with the same caller-error code.",
    ge_source=V1 + "davinci_model.cc (DavinciModel::NnExecute, UpdateAllNodeArgs, CheckIoReuseAddrs, "
              "ConstructZeroCopyIoActiveBaseAddrs, CheckUserAndModelSize, CopyInputData); "
              "api/acl/acl_model/model/model.cpp (a null data-buffer address: ACL_ERROR_INVALID_PARAM); " + V2 +
              "kernel/common_kernel_impl/build_tensor.cc (SplitTensorForOutputData); "
              "inc/external/ge/ge_error_codes.h (ACL_ERROR_GE_PARAM_INVALID)",
    applies_to="execution", concern="calls_refused", predicate=_invalid_refused,
    precondition=lambda obs: bool(invalid_buffers(obs)),
)

INVARIANTS = (INVALID_REFUSED,)
