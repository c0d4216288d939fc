"""Runtime v2 (lowered, gert-style): output zero copy and the always_zero_copy contract (applies to executions)."""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._trace import is_v2, writes_into
from zcspec.spec.observables.execution import ExecutionObservation

V2 = "runtime/v2/"


def _outputs(obs: ExecutionObservation):
    return [t for t in obs.load.io if t.role == "output"]


def _azc(obs: ExecutionObservation) -> bool:
    return is_v2(obs) and obs.load.options.always_zero_copy


def _unusable(obs: ExecutionObservation, t) -> str | None:
    """Why the user's buffer for output ``t`` cannot hold it in always_zero_copy mode (ge-facts.md 7.4.1-2)."""
    b = obs.buffer(t.name)
    if b is None or b.address == 0:
        return "no buffer (null address)"
    if b.size < t.raw_size:
        return f"buffer is {b.size} bytes, output needs {t.raw_size}"
    return None


# -- V2-AZC-NO-ALLOC --------------------------------------------------------------------------

def _azc_no_alloc(obs: ExecutionObservation):
    if not _azc(obs):
        return
    outs = {t.name for t in _outputs(obs)}
    for e in obs.events:
        if e.kind == "alloc" and e.io in outs:
            yield violation(f"buffer {e.io!r}", f"always_zero_copy is on but the runtime allocated {e.size} bytes "
                            f"at {hex(e.address or 0)} for this output", address=e.address, size=e.size)


AZC_NO_ALLOC = Invariant(
    id="V2-AZC-NO-ALLOC",
    title="always_zero_copy never allocates an output",
    statement="With always_zero_copy on, the runtime allocates no memory for any model output during an "
              "execution: outputs are written to the caller's buffers or the call fails.",
    rationale="always_zero_copy is the caller's promise to always pass correctly sized, correctly placed output "
              "memory (single-op execution relies on it); in exchange GE rewrites the output allocation into "
              "SplitTensorForOutputData and removes the allocator chain, so there is no fallback memory.",
    ge_source=V2 + "lowering/pass/model_out_tensor_zero_copy.cc; kernel/common_kernel_impl/build_tensor.cc "
              "(SplitTensorForOutputData); ge-facts.md 7.1.2, 7.2.4, 7.4, 7.8",
    applies_to="execution", concern="runtime_v2", predicate=_azc_no_alloc,
    precondition=lambda obs: _azc(obs) and bool(_outputs(obs)),
)


# -- V2-AZC-REJECT ----------------------------------------------------------------------------

def _azc_reject(obs: ExecutionObservation):
    if not _azc(obs):
        return
    for t in _outputs(obs):
        why = _unusable(obs, t)
        if why is None:
            continue
        named = obs.result.culprit == t.name or any(e.kind == "error" and e.io == t.name for e in obs.events)
        if obs.result.ok or not named:
            yield violation(f"buffer {t.name!r}", f"{why}, so the call must fail naming this buffer; "
                            f"it returned ok={obs.result.ok}, culprit={obs.result.culprit!r}")
        b = obs.buffer(t.name)
        for e, lo, hi in (writes_into(obs.events, b) if b is not None else ()):
            yield violation(f"buffer {t.name!r}", f"was rejected but {e.kind} #{e.seq} wrote [{hex(lo)}, {hex(hi)})",
                            event=e.seq)


AZC_REJECT = Invariant(
    id="V2-AZC-REJECT",
    title="always_zero_copy errors on a null or undersized output buffer and leaves it untouched",
    statement="With always_zero_copy on, an execution whose output buffer is null or smaller than the output's "
              "raw size fails with an error naming that output, and nothing is written into that buffer.",
    rationale="GE's SplitTensorForOutputData returns PARAM_INVALID (E13031) for a null tensor or address and for "
              "a buffer below the raw storage size (no padding). Failing before any kernel runs keeps the "
              "caller's memory intact, so the caller can retry with a correct buffer.",
    ge_source=V2 + "kernel/common_kernel_impl/build_tensor.cc (SplitTensorForOutputData); ge-facts.md 7.4.1-7.4.2, 8",
    applies_to="execution", concern="runtime_v2", predicate=_azc_reject,
    precondition=lambda obs: _azc(obs) and any(_unusable(obs, t) for t in _outputs(obs)),
)


# -- V2-DEFAULT-FALLBACK ----------------------------------------------------------------------

def _needs_fallback(obs: ExecutionObservation):
    """Outputs whose buffer cannot hold them directly in the default mode: null, host, or (except
    under ge_compat, where GE shares an undersized buffer unchecked and fails, 7.3.2) undersized."""
    if not is_v2(obs) or obs.load.options.always_zero_copy:
        return []
    out = []
    for t in _outputs(obs):
        b = obs.buffer(t.name)
        small = b is not None and b.size < t.raw_size and not obs.load.options.ge_compat
        if b is None or b.address == 0 or b.placement != "device" or small:
            out.append(t)
    return out


def _default_fallback(obs: ExecutionObservation):
    for t in _needs_fallback(obs):
        allocated = any(e.kind == "alloc" and e.io == t.name for e in obs.events)
        if not obs.result.ok or not allocated:
            yield violation(f"buffer {t.name!r}", f"cannot hold the output directly (null, host or undersized buffer), so the "
                            f"default mode must allocate it and succeed; ok={obs.result.ok}, allocated={allocated}")


DEFAULT_FALLBACK = Invariant(
    id="V2-DEFAULT-FALLBACK",
    title="The default mode falls back to runtime memory",
    statement="With always_zero_copy off, an output whose buffer is null, not device memory, or smaller than "
              "the output is allocated by the runtime and the execution succeeds (the output is then handed "
              "over or copied to the caller). Under ge_compat an undersized buffer is GE's hazard instead "
              "(V2-NO-OVERRUN).",
    rationale="Without the caller's promise GE keeps AllocModelOutTensor: no address means allocate into the "
              "user tensor, a wrong placement means allocate and let EnsureTensorAtOutMemory copy.",
    ge_source=V2 + "kernel/outputs/model_outputs.cc (AllocModelOutTensor); kernel/common_kernel_impl/memory_copy.cc "
              "(EnsureTensorAtOutMemory); ge-facts.md 7.3.3-7.3.4, 7.5.3-7.5.4",
    applies_to="execution", concern="runtime_v2", predicate=_default_fallback,
    precondition=lambda obs: bool(_needs_fallback(obs)),
)


# -- V2-OUT-IS-USER ---------------------------------------------------------------------------

def _usable(obs: ExecutionObservation):
    """Outputs v2 must produce in the user's buffer: zero copy on, a successful call, a device
    buffer of at least the raw size, and an output the compiler made zero copy (not an input
    passed straight through, a constant, or a collective that cannot refresh its addresses)."""
    if not is_v2(obs) or not obs.result.ok or not obs.load.options.zero_copy:
        return []
    out = []
    for t in _outputs(obs):
        b = obs.buffer(t.name)
        if (b is not None and b.address and b.placement == "device" and b.size >= t.raw_size
                and t.zero_copy_block and not t.hccl_no_zero_copy):
            out.append((t, b))
    return out


def _out_is_user(obs: ExecutionObservation):
    for t, b in _usable(obs):
        used = obs.io_addresses.get(t.name)
        copies = [e for e in obs.events if e.kind == "copy" and e.io == t.name]
        if used != b.address or copies:
            yield violation(f"buffer {t.name!r}", f"is large enough ({b.size} >= {t.raw_size}) and on the device, "
                            f"but the output was produced at {hex(used) if used is not None else None} with "
                            f"{len(copies)} cop(ies) instead of in the buffer at {hex(b.address)}")


OUT_IS_USER = Invariant(
    id="V2-OUT-IS-USER",
    title="Output memory is the user's buffer when it is large enough",
    statement="In a successful execution with zero copy on, an output whose block the compiler made zero "
              "copy and whose user buffer is on the device and at least the output's raw size is produced "
              "directly in that buffer, with no copy.",
    rationale="This is v2's output zero copy: ModelOutTensorZeroCopy turns the producer's AllocMemory into "
              "AllocModelOutTensor, which shares the caller's memory, and EnsureTensorAtOutMemory sees source "
              "== destination and copies nothing.",
    ge_source=V2 + "lowering/pass/model_out_tensor_zero_copy.cc; kernel/outputs/model_outputs.cc; "
              "kernel/common_kernel_impl/memory_copy.cc; ge-facts.md 7.2, 7.3.2, 7.5.4",
    applies_to="execution", concern="runtime_v2", predicate=_out_is_user,
    precondition=lambda obs: bool(_usable(obs)),
)


# -- V2-NO-OVERRUN ----------------------------------------------------------------------------

def _no_overrun(obs: ExecutionObservation):
    if not is_v2(obs):
        return
    for b in obs.buffers:
        for e, lo, hi in writes_into(obs.events, b):
            if lo < b.address or hi > b.address + b.size:
                yield violation(f"buffer {b.name!r}", f"{e.kind} #{e.seq} wrote [{hex(lo)}, {hex(hi)}), past the "
                                f"buffer's [{hex(b.address)}, {hex(b.address + b.size)})"
                                + (" (ge_compat: GE's unchecked AllocModelOutTensor sharing)"
                                   if obs.load.options.ge_compat else ""), event=e.seq, written=[lo, hi])


NO_OVERRUN = Invariant(
    id="V2-NO-OVERRUN",
    title="v2 never writes past a user buffer",
    statement="In v2, every write (a kernel's output or a copy) that touches a user buffer lies entirely inside "
              "that buffer.",
    rationale="GE's AllocModelOutTensor shares a user output buffer with no size check (GE sizes are 512-aligned "
              "while callers pass raw or 32-aligned sizes), so in the default mode a buffer smaller than the "
              "output is written past its end by the kernel, and only afterwards does EnsureTensorAtOutMemory "
              "report the size error. zcspec checks the size before sharing; with the ge_compat option it "
              "reproduces GE, and this claim then reports the overrun: a documented GE hazard, not a zcspec bug.",
    ge_source=V2 + "kernel/outputs/model_outputs.cc (AllocModelOutTensor, no size check); "
              "kernel/common_kernel_impl/memory_copy.cc (EnsureTensorAtOutMemory); ge-facts.md 7.3.2, 7.5.4, 8",
    applies_to="execution", concern="runtime_v2", predicate=_no_overrun,
    precondition=lambda obs: is_v2(obs) and any(next(writes_into(obs.events, b), None) for b in obs.buffers),
)

INVARIANTS = (AZC_NO_ALLOC, AZC_REJECT, DEFAULT_FALLBACK, OUT_IS_USER, NO_OVERRUN)
