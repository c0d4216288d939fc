"""Runtime v1: the caller's buffers. Which sizes v1 must refuse and which it must accept
(V1-BUFFER-SIZE), and that a call whose buffers are valid runs (V1-VALID-CALL-SUCCEEDS).

Also the one home of what these claims and their converse (calls_refused.py, CALL-INVALID-REFUSED)
read of the caller's buffers: where the caller's memory is as the trace's allocation events show it
(``_placements``, ``_space_of``), whether the buffers match the model's I/O one to one, which null
buffers are allowed (``null_allowed``) and which pairs of buffers share bytes with an output
(``shared_with_output``, leaving out an output given the very buffer of an input it passes through).
The claims belong to the runtime_v1 concern: runtime_v1.py lists them in its ``INVARIANTS``.
"""
from __future__ import annotations

import re
from typing import Iterator

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._shadow import call_bounds
from zcspec.spec.invariants._trace import is_v1
from zcspec.spec.observables.execution import ExecutionObservation

# Where GE's v1 runtime lives in mirror-cann/ge: the prefix of the v1 claims' GE sources (runtime_v1.py and
# calls_refused.py cite it from here).
V1 = "runtime/v1/graph/load/model_manager/"


def one_to_one(obs: ExecutionObservation) -> bool:
    """Whether the call passes one buffer per model I/O, named as the I/O are."""
    return len(obs.buffers) == len(obs.load.io) and {b.name for b in obs.buffers} == {t.name for t in obs.load.io}


def null_allowed(obs: ExecutionObservation, b) -> bool:
    """Whether buffer ``b`` is a null the v1 runtime must accept: 0 bytes for an I/O of 0 raw bytes, through
    which no task or copy reaches (GE: davinci_model.cc CopyInputData and CopyInputForNoZeroCopy skip a
    buffer of length 0, CopyOutputForNoZeroCopy one of 0 bytes)."""
    t = obs.load.io_tensor(b.name)
    return not b.address and b.size == 0 and t is not None and t.raw_size == 0


def passes_through(obs: ExecutionObservation, a, b) -> bool:
    """Whether ``a`` and ``b`` are one output and one input given the very same buffer (address, size,
    placement) while the model file places both I/O at one logical address with one size and raw size: the
    output is the input's bytes, which no task writes (the pairs GE's compiled-graph summary lists as
    sharing one address, GetIOIndexesWithSameAddr)."""
    if {a.role, b.role} != {"input", "output"} or (a.address, a.size, a.placement) != (b.address, b.size, b.placement):
        return False
    s, t = obs.load.io_tensor(a.name), obs.load.io_tensor(b.name)
    return s is not None and t is not None and \
        (s.region, s.offset, s.size, s.raw_size) == (t.region, t.offset, t.size, t.raw_size)


def in_caller_memory(obs: ExecutionObservation, b, live: dict) -> str | None:
    """How device buffer ``b`` shares bytes with memory the caller gave the model, its work or weight memory
    as the observation's ``caller_memory`` gives it (at load, or the work memory's last move); None when it
    shares none, is null or empty, is host memory, or the observer does not know the caller's memory (runtime
    v1 only). The model's tasks read and write those bytes as the feature map, the I/O region or the weights:
    an input there is overwritten by the model, an output there overwrites the model's own data. GE trusts
    the caller's pointers; runtime v1 refuses it (docs/runtime-v1.md). ``live``: ``_placements(obs)``."""
    if not is_v1(obs) or obs.caller_memory is None or not b.address or b.size <= 0:
        return None
    if (_space_of(live, b) or b.placement) != "device":
        return None
    end = b.address + b.size
    for g in obs.caller_memory:
        if g.size > 0 and b.address < g.address + g.size and g.address < end:
            return (f"[{hex(b.address)}, {hex(end)}) overlaps the caller's {g.name} memory "
                    f"[{hex(g.address)}, {hex(g.address + g.size)}) it gave the model, whose tasks use those bytes")
    return None


def shared_with_output(obs: ExecutionObservation) -> Iterator[tuple]:
    """``(a, b)``, ``b`` listed before ``a``, for every two non-null buffers of the call that share bytes
    while one of them is an output (an output may share memory with no other I/O), except an output and an
    input that pass one buffer through (``passes_through``)."""
    buffers = obs.buffers
    for i, a in enumerate(buffers):
        for b in buffers[:i]:
            if "output" in (a.role, b.role) and a.address and b.address and a.size > 0 and b.size > 0 and \
                    a.address < b.address + b.size and b.address < a.address + a.size and \
                    not passes_through(obs, a, b):
                yield a, b


# -- V1-BUFFER-SIZE ---------------------------------------------------------------------------

GE_SIZE_TOLERANCE = 64  # kDataMemAlignSizeCompare (GE: davinci_model.cc)
# How a refusal for a buffer's size reads to its caller: GE's E13025 text of CheckUserAndModelSize ("The user
# provided N bytes of buffer size plus the aligned 64 bytes, which is less than the tensor size M bytes required
# by the model"), or the same words against the tensor's raw size. A runtime that words it otherwise is judged
# on its size refusals by V1-VALID-CALL-SUCCEEDS alone.
SIZE_REFUSAL = re.compile(r"which is less than the tensor(?:'s raw)? size \d+ bytes")


def _sized_buffers(obs: ExecutionObservation):
    """(io, buffer, too small?) for every device buffer bound to a v1 model I/O."""
    if not is_v1(obs):
        return
    for t in obs.load.io:
        b = obs.buffer(t.name)
        if b is not None and b.address and b.placement == "device":
            yield t, b, b.size + GE_SIZE_TOLERANCE < t.size


def _buffer_size(obs: ExecutionObservation):
    for t, b, too_small in _sized_buffers(obs):
        if too_small and obs.result.ok:
            yield violation(f"buffer {t.name!r}", f"is {b.size} bytes; {b.size} + {GE_SIZE_TOLERANCE} < the model's "
                            f"{t.size}, yet the call succeeded", size=b.size, model_size=t.size)
        elif (not obs.result.ok and obs.result.culprit == t.name and b.size >= t.raw_size
              and SIZE_REFUSAL.search(obs.result.error or "")):
            yield violation(f"buffer {t.name!r}", f"was refused although it is {b.size} bytes, at least the raw "
                            f"size {t.raw_size}", size=b.size, raw_size=t.raw_size)


BUFFER_SIZE = Invariant(
    id="V1-BUFFER-SIZE",
    title="v1 refuses I/O buffers below GE's tolerance and accepts raw-sized ones",
    statement="In v1, an execution whose device I/O buffer is so small that its size plus 64 is below the "
              "model's padded size for that I/O fails, and a buffer of at least the I/O's raw size is never "
              "the reason a call is refused: the refusal's message does not say, in GE's E13025 words, that this "
              "buffer is less than the tensor size.",
    rationale="GE's CheckUserAndModelSize errors only when user + 64 < model size (E13025): the model's size is "
              "padded (align32 + 32), so a caller passing the raw byte count must always be accepted, while a "
              "truly short buffer must be refused before any task writes into it.",
    ge_source=V1 + "davinci_model.cc (CheckUserAndModelSize, kDataMemAlignSizeCompare)",
    applies_to="execution", concern="runtime_v1", predicate=_buffer_size,
    precondition=lambda obs: any(small or not obs.result.ok for _, _, small in _sized_buffers(obs)),
)


# -- V1-VALID-CALL-SUCCEEDS ------------------------------------------------------------------

ADDRESS_GRAIN = 8   # the widest element size: an address off this grain may be misaligned for its dtype


def _placements(obs: ExecutionObservation) -> dict[int, tuple[int, str]]:
    """The caller's allocations live when the call began, from the trace's alloc and free events alone
    (the load's, then those since): start -> (end, address space)."""
    live: dict[int, tuple[int, str]] = {}
    for e in obs.load.events + obs.events[:call_bounds(obs.events)[0]]:
        if e.kind == "alloc" and e.owner == "user" and e.address is not None and e.size and e.space:
            live[e.address] = (e.address + e.size, e.space)
        elif e.kind == "free":
            live.pop(e.address, None)
    return live


def _space_of(live: dict, b) -> str | None:
    """The address space of the one live caller allocation holding all of ``b`` (None: no such allocation
    in the trace, e.g. memory allocated before the load)."""
    for start, (end, space) in live.items():
        if start <= b.address and b.address + b.size <= end:
            return space
    return None


def _refusal_reasons(obs: ExecutionObservation) -> list[str]:
    """Why the spec would let a v1 runtime refuse this call's buffers (empty: the buffers are valid)."""
    why = []
    if not one_to_one(obs):
        why.append("the buffers do not match the model's I/O one to one")
    live = _placements(obs)
    for b in obs.buffers:
        t = obs.load.io_tensor(b.name)
        space = _space_of(live, b) if b.address else None
        if not b.address:
            if not null_allowed(obs, b):
                why.append(f"{b.name!r}: null, and not 0 bytes for an I/O of 0 raw bytes")
        elif space is None:
            why.append(f"{b.name!r}: inside no live allocation of the caller that the trace shows")
        elif space == "host" and obs.load.options.reuse_zero_copy_memory:
            why.append(f"{b.name!r}: host memory under reuseZeroCopyMemory (GE: davinci_model.cc "
                       "ConstructZeroCopyIoActiveBaseAddrs)")
        if t is not None and b.size < t.raw_size:
            why.append(f"{b.name!r}: {b.size} bytes, below the raw {t.raw_size}")
        if b.address % ADDRESS_GRAIN:
            why.append(f"{b.name!r}: address not {ADDRESS_GRAIN}-byte aligned (its element size is not observed)")
        if inside := in_caller_memory(obs, b, live):
            why.append(f"{b.name!r}: {inside}")
    for a, b in shared_with_output(obs):   # a null buffer is a reason of its own, above
        why.append(f"{a.name!r} overlaps {b.name!r}, and one is an output")
    return why


def _judged_call(obs: ExecutionObservation) -> bool:
    return is_v1(obs) and any(e.kind == "call_begin" for e in obs.events) and not _refusal_reasons(obs)


def _valid_call_succeeds(obs: ExecutionObservation):
    if not obs.result.ok and _judged_call(obs):
        yield violation("execute call", f"was refused with valid buffers (each non-null or a 0-byte null for an I/O "
                        f"of 0 raw bytes, inside a live allocation of the caller, at least its I/O's raw size, no "
                        f"output sharing memory but with an input it passes through, none in the work or weight "
                        f"memory the caller gave the model"
                        f"{', none on the host under reuseZeroCopyMemory' if obs.load.options.reuse_zero_copy_memory else ''}"
                        f"): {obs.result.error}", named=obs.result.culprit)


VALID_CALL_SUCCEEDS = Invariant(
    id="V1-VALID-CALL-SUCCEEDS",
    title="v1 runs a call whose buffers are valid",
    statement="A v1 execute call whose buffers the spec finds valid succeeds: one buffer per model I/O, each "
              "non-null, inside one live allocation of the caller as the trace's allocation events show it "
              "(device or host memory alike), at least its I/O's raw size and 8-byte aligned, no output sharing "
              "bytes with another buffer, no host buffer under reuseZeroCopyMemory, and no device buffer sharing "
              "bytes with the work or weight memory the caller gave the model at load or by its last move of the "
              "work memory (a live allocation of the caller, but the model's to use). Two exceptions: a null "
              "buffer of 0 bytes for an I/O of 0 raw bytes is valid (nothing is read or written through it), and "
              "an output may be given the very buffer (address, size, placement) of an input that the model file "
              "places at the same logical address with the same sizes (a pass-through). The placement is the "
              "address space of that allocation, not the runtime's or the entry point's view of the buffer.",
    rationale="A runtime or entry point that refuses good buffers passes every claim about refused calls (they "
              "change nothing) while the caller's inference never runs: an ACL facade that took host buffers "
              "for device ones made every host-placed call fail and verify passed. GE copies host-placed I/O "
              "through the model's region (ConstructZeroCopyIoActiveBaseAddrs) and refuses it only when that "
              "region is unbacked, as under reuseZeroCopyMemory. GE skips a buffer of length 0 (CopyInputData, "
              "CopyInputForNoZeroCopy), so a null 0-byte buffer for an empty tensor runs, and it checks no overlap "
              "at all: a Data -> NetOutput model runs with one buffer as its input and its output (the output "
              "copy from the input's active base onto itself is skipped, CopyOutputForNoZeroCopy). A buffer in the "
              "work or weight memory the caller gave the model is not valid although GE would run it (it trusts "
              "the caller's pointers): the model's tasks use those bytes, and CALL-INVALID-REFUSED requires v1 "
              "to refuse it, beyond GE.",
    ge_source=V1 + "davinci_model.cc (NnExecute, ConstructZeroCopyIoActiveBaseAddrs, CheckUserAndModelSize, "
              "CopyInputData, CopyInputForNoZeroCopy, CopyOutputForNoZeroCopy)",
    applies_to="execution", concern="runtime_v1", predicate=_valid_call_succeeds,
    precondition=_judged_call,
)
