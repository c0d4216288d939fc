"""Execution: what every execution must guarantee, whichever runtime ran it (applies to executions)."""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._counts import COPY_DIRECTIONS, reported_counts, trace_counts
from zcspec.spec.invariants._shadow import consumed, replay
from zcspec.spec.invariants._trace import accesses, all_events, call_events, failed_calls, live_allocations, writes_into
from zcspec.spec.invariants.execution_streams import STREAMS_APART
from zcspec.spec.observables.execution import ExecutionObservation

V1_MODEL = "runtime/v1/graph/load/model_manager/davinci_model.cc"


# -- EXEC-ORACLE ------------------------------------------------------------------------------

def _oracle(obs: ExecutionObservation):
    for o in obs.outputs:
        if o.oracle_max_abs_diff is not None and not o.oracle_max_abs_diff <= o.tolerance:
            yield violation(f"output {o.name!r}", f"differs from the oracle by {o.oracle_max_abs_diff:g}, "
                            f"more than the tolerance {o.tolerance:g}", diff=o.oracle_max_abs_diff)


ORACLE = Invariant(
    id="EXEC-ORACLE",
    title="Outputs equal the oracle",
    statement="Every output of a successful execution matches an independent reference (onnx's reference "
              "evaluator on the graph, or the reference outputs shipped with a model) within the stated "
              "tolerance, relative to the reference's largest magnitude.",
    rationale="Memory planning and zero copy must be invisible: a layout or refresh bug shows up as wrong "
              "numbers long before it shows up as a fault. The oracle is independent of zcspec's kernels.",
    ge_source="(zcspec) end-to-end correctness; the emulator is the executable semantics (STYLE.md)",
    applies_to="execution", concern="execution", predicate=_oracle,
    precondition=lambda obs: any(o.oracle_max_abs_diff is not None for o in obs.outputs),
)


# -- EXEC-V1-EQ-V2 ----------------------------------------------------------------------------

def _v1_eq_v2(obs: ExecutionObservation):
    for o in obs.outputs:
        if o.peer_digest is not None and o.peer_digest != o.digest:
            yield violation(f"output {o.name!r}", f"this runtime gives digest {o.digest}, the other runtime "
                            f"{o.peer_digest}", digest=o.digest, peer=o.peer_digest)


V1_EQ_V2 = Invariant(
    id="EXEC-V1-EQ-V2",
    title="Runtime v1 and runtime v2 give identical outputs",
    statement="For the same model, inputs and options, every output of runtime v1 is bit-identical to the same "
              "output of runtime v2.",
    rationale="Both runtimes drive the same kernels on the same emulated device; only addressing and copying "
              "differ, so any difference in results is a bug in one of them.",
    ge_source="runtime/v1 (DavinciModel) vs runtime/v2 (gert executor)",
    applies_to="execution", concern="execution", predicate=_v1_eq_v2,
    precondition=lambda obs: any(o.peer_digest is not None for o in obs.outputs),
)


# -- EXEC-NO-FAULT ----------------------------------------------------------------------------

def _no_fault(obs: ExecutionObservation):
    for e in all_events(obs):
        if e.kind == "fault":
            yield violation(f"task {e.task}", f"device fault at {hex(e.address or 0)}: {e.message}",
                            address=e.address, event=e.seq)


NO_FAULT = Invariant(
    id="EXEC-NO-FAULT",
    title="No device fault",
    statement="No load or execution causes a device fault (out-of-bounds access, use after free, write to "
              "read-only memory).",
    rationale="The emulated device checks every kernel access against its live allocations, so a stale or "
              "unrefreshed address, or a layout past the end of a region, surfaces as a fault naming the task.",
    ge_source="(zcspec) emulated NPU (docs/device.md)",
    applies_to="execution", concern="execution", predicate=_no_fault,
    precondition=lambda obs: any(e.kind == "launch" for e in obs.events),
)


# -- EXEC-NO-LEAK -----------------------------------------------------------------------------

def _allocator(tag: str | None) -> str:
    """The allocator a session allocation's tag names ("<allocator>#<n> <purpose>")."""
    tag = tag or ""
    end = tag.find(" ", tag.find("#"))
    return tag if end < 0 else tag[:end]


def _session_held(obs: ExecutionObservation) -> set[str]:
    """The session allocators whose memory the model's load held (its load's ``session`` allocations)."""
    return {_allocator(e.purpose) for e in obs.load.events if e.kind == "alloc" and e.owner == "session"}


def _shared_still(e, held: set[str], holders: int | None) -> bool:
    """A live session allocation that is not a leak of this model: another session's, or the model's own
    session's while other loads still hold it (the unload gave its hold back and holders remain)."""
    if e.owner != "session":
        return False
    return _allocator(e.purpose) not in held or (holders is not None and holders > 0)


def _no_leak(obs: ExecutionObservation):
    events = all_events(obs)
    unload = next((e for e in reversed(events) if e.kind == "unload"), None)
    if unload is None:
        return
    held = _session_held(obs)
    for address, e in sorted(live_allocations(events).items()):
        if _shared_still(e, held, unload.holders):
            continue
        yield violation(f"allocation {hex(address)}", f"{e.size} bytes ({e.purpose or e.io or 'unnamed'}, "
                        f"alloc #{e.seq} by {e.owner}) is still live after unload", address=address, size=e.size)


NO_LEAK = Invariant(
    id="EXEC-NO-LEAK",
    title="Nothing leaks after unload",
    statement="After a model is unloaded (and the caller has released what it was handed), every device "
              "allocation the model or the runtime made, at load or in any execution, has been freed, the spans "
              "a caching allocator kept included; the user's own buffers are not the runtime's to free. Memory "
              "of a session's allocator that the model shared (runtime v1's extend-size feature maps) stays only "
              "while the unload gave the model's hold back and other loads still hold it, counted from the "
              "allocator's calls in the trace; another session's memory is not the model's. Judged "
              "from the device's allocation and free events, not from the runtime's own allocator log.",
    rationale="Serving processes load and unload models for days; fallback output allocations (v2 default "
              "mode), copy staging buffers and a caching allocator that never returns its spans are the usual "
              "leaks. A runtime's log of its own blocks cannot show a pool that is never given back.",
    ge_source="runtime/v2/kernel/memory/memory_kernel.cc (FreeMemory); runtime/v2/core/utils/tensor_utils.cc; "
              "runtime/v2/kernel/memory/caching_mem_allocator.cc (the pool released with its allocator); "
              "runtime/v1/graph/load/model_manager/davinci_model.cc (FreeFeatureMapMem), "
              "runtime/v1/graph/manager/active_memory_allocator.cc (FreeMemory: the last holder frees)",
    applies_to="execution", concern="execution", predicate=_no_leak,
    precondition=lambda obs: any(e.kind == "unload" for e in all_events(obs)),
)


# -- EXEC-FAILED-CALL-NO-CHANGE ---------------------------------------------------------------

def _failed_call_no_change(obs: ExecutionObservation):
    for call, events in failed_calls(obs):
        for b in obs.buffers:
            for e, lo, hi in writes_into(events, b):
                yield violation(f"buffer {b.name!r}", f"the {call} call failed but {e.kind} #{e.seq} wrote "
                                f"[{hex(lo)}, {hex(hi)}) of it", call=call, event=e.seq)
        for address, e in sorted(live_allocations(events, owners=("model", "runtime")).items()):
            yield violation(f"allocation {hex(address)}", f"the {call} call failed but left {e.size} bytes "
                            f"allocated (alloc #{e.seq}, {e.purpose or 'unnamed'})", call=call, address=address)


FAILED_CALL_NO_CHANGE = Invariant(
    id="EXEC-FAILED-CALL-NO-CHANGE",
    title="A failed call changes nothing",
    statement="A call that fails writes nothing into any user buffer and leaves no device allocation behind "
              "(a span a caching allocator keeps for later calls excepted), judged from the device trace.",
    rationale="Callers retry after fixing their input (a larger buffer, a device placement); a failure that has "
              "already overwritten their memory or leaked device memory makes the retry unsafe. Validation "
              "must come before any side effect.",
    ge_source="runtime/v2/kernel/common_kernel_impl/build_tensor.cc; runtime/v1/.../davinci_model.cc "
              "(size checks before UpdateAllNodeArgs)",
    applies_to="execution", concern="execution", predicate=_failed_call_no_change,
    precondition=lambda obs: bool(failed_calls(obs)),
)

# -- EXEC-NO-OVERRUN --------------------------------------------------------------------------

def _outside(obs: ExecutionObservation):
    return [(e, what, r) for e, what, r, inside in accesses(obs) if not inside]


def _no_overrun(obs: ExecutionObservation):
    for e, what, r in _outside(obs):
        task = f"task {e.task}" if e.kind == "launch" else f"{e.direction} copy"
        yield violation(f"{e.kind} #{e.seq}", f"{task} {'wrote' if what == 'write' else 'read'} "
                        f"[{hex(r.address)}, {hex(r.end)}), which lies inside no user buffer of the call and no "
                        f"allocation live at that point", event=e.seq, range=[r.address, r.end], access=what)


NO_OVERRUN = Invariant(
    id="EXEC-NO-OVERRUN",
    title="Every access lies inside a user buffer or a live allocation",
    statement="Every byte range a kernel or a copy of an execute call reads or writes (or designated, if the "
              "device refused it) lies entirely inside one user buffer passed to that call, inside memory the "
              "caller had given the model for that call (its work or weight memory, as the caller's load and "
              "move calls gave them: the old work memory after a move is not), or inside one "
              "allocation of the model or the runtime that is live at that moment, as the trace's own "
              "allocation and free events say.",
    rationale="EXEC-NO-FAULT is only as strict as the device's bounds check; this claim recomputes what is "
              "legal from the allocation events alone, so an accepted undersized buffer written past its end, "
              "a stale address into freed memory or a range straddling two allocations is caught even by a "
              "device (or hardware) that lets it through. GE checks a user buffer against the model's size "
              "before it is used.",
    ge_source=V1_MODEL + " (CheckUserAndModelSize); runtime/v2/kernel/common_kernel_impl/"
              "build_tensor.cc (SplitTensorForOutputData)",
    applies_to="execution", concern="execution", predicate=_no_overrun,
    precondition=lambda obs: any(True for _ in accesses(obs)),
)


# -- EXEC-READ-WRITTEN ------------------------------------------------------------------------

def _read_written(obs: ExecutionObservation):
    for rd in consumed(obs):
        holes = [(lo, hi) for lo, hi, w in rd.pieces if w is None]
        if holes:
            lo, hi = holes[0]
            what = f"task {rd.event.task}" if rd.event.kind == "launch" else f"{rd.event.direction} copy"
            yield violation(f"{rd.event.kind} #{rd.event.seq}", f"{what} read {rd.range.tensor or 'bytes'} at "
                            f"[{hex(lo)}, {hex(hi)}) (of [{hex(rd.range.address)}, {hex(rd.range.end)})), which "
                            f"nothing wrote since they were allocated ({len(holes)} such piece(s))",
                            event=rd.event.seq, range=[lo, hi])


READ_WRITTEN = Invariant(
    id="EXEC-READ-WRITTEN",
    title="No kernel or copy reads bytes nobody wrote",
    statement="Every byte a kernel or a copy of an execute call reads was written before it, since its "
              "allocation, by an event of the trace: the caller's input buffers count as written when the "
              "call starts, what the load wrote (the weights) from the load on, everything else from the "
              "kernel, memset or copy that wrote it. A Merge reads one of its inputs: the one its branch wrote. "
              "An accumulating kernel (ReduceSum, atomic: it adds into its output) reads its output range "
              "before writing it, as the device's launch records.",
    rationale="Fresh device memory holds garbage (the emulator poisons it); a kernel that reads before its "
              "producer ran, an input copy that was skipped, an atomic clean that was dropped or a tensor "
              "read from an unrefreshed address reads bytes nobody wrote. GE copies inputs before the first "
              "task, loads the weights at init and cleans atomic outputs with a memset for this reason.",
    ge_source=V1_MODEL + " (CopyInputData before the tasks run; InitWeightMem); compiler/graph/build/memory/"
              "graph_mem_assigner.cc (atomic clean of outputs that accumulate)",
    applies_to="execution", concern="execution", predicate=_read_written,
    precondition=lambda obs: any(True for _ in consumed(obs)),
)


# -- EXEC-NO-RACE -----------------------------------------------------------------------------

def _races(obs: ExecutionObservation):
    """(access, lo, hi, earlier access, what) for the first unordered cross-stream conflict of each access:
    a read after a write (RAW), a write after a write (WAW) or a write after a read (WAR)."""
    for a in replay(obs):
        hit = next(((lo, hi, w, "written") for lo, hi, w in a.pieces
                    if w is not None and w.seq is not None and not a.ordered(w)), None)
        if hit is None and a.kind == "write":
            hit = next(((r.range.address, r.range.end, r, "read") for r in a.readers if not a.ordered(r)), None)
        if hit is not None:
            yield (a, *hit)


def _no_race(obs: ExecutionObservation):
    for a, lo, hi, w, what in _races(obs):
        by = w.what if what == "written" else f"{w.event.kind} #{w.event.seq}"
        yield violation(f"{a.event.kind} #{a.event.seq}", f"{'reads' if a.kind == 'read' else 'writes'} "
                        f"[{hex(max(lo, a.range.address))}, {hex(min(hi, a.range.end))}) on stream {a.stream}, "
                        f"{what} by {by} on stream {w.stream}, with no event record after that access and wait "
                        f"before this one", event=a.event.seq, access=a.kind, earlier=what)


def _cross_stream(obs: ExecutionObservation) -> bool:
    """Whether some access meets an earlier access of the same bytes on another stream (a write, or a read
    that a write follows): only then can the case tell an ordered trace from a racy one."""
    return any(w is not None and w.seq is not None and w.stream != a.stream for a in replay(obs)
               for _, _, w in a.pieces) or any(r.stream != a.stream for a in replay(obs) for r in a.readers)


NO_RACE = Invariant(
    id="EXEC-NO-RACE",
    title="Accesses to the same bytes from two streams are ordered by an event",
    statement="When a kernel or copy on stream B reads bytes last written on stream A (A != B), or writes bytes "
              "last written or since read on stream A, an event recorded on A after that access is waited "
              "for on B before this one; a synchronous host copy is ordered with everything before and after it.",
    rationale="Streams run concurrently: without the record/wait pair the reader may run before the writer on "
              "real hardware, even though the emulator's round-robin schedule happened to run them in order; "
              "memory one stream reuses while another still reads it is overwritten under the reader. GE "
              "inserts a send/recv event pair on every edge between nodes on different streams, and reuses "
              "memory across streams only along such edges.",
    ge_source="compiler/graph/build/stream/stream_allocator.cc (StreamAllocator::InsertSyncEvents); "
              "compiler/graph/build/memory/block_mem_assigner.cc (GetDiffStreamEdgeLife, CanBlockLifeReuse)",
    applies_to="execution", concern="execution", predicate=_no_race,
    precondition=_cross_stream,
)


# -- EXEC-TENSOR-INTACT -----------------------------------------------------------------------

def _produced(obs: ExecutionObservation) -> set[str]:
    """Tensors a launch of the call writes through a named slot."""
    return {r.tensor for e in call_events(obs) if e.kind == "launch" for r in e.writes if r.tensor}


def _intact_reads(obs: ExecutionObservation):
    produced = _produced(obs)
    for rd in consumed(obs):
        if rd.event.kind == "launch" and rd.range.tensor in produced:
            yield rd


def _tensor_intact(obs: ExecutionObservation):
    for rd in _intact_reads(obs):
        t = rd.range.tensor
        other = next(((lo, hi, w) for lo, hi, w in rd.pieces if w is not None and w.tensor != t), None)
        if other is not None:
            lo, hi, w = other
            yield violation(f"tensor {t!r}", f"task {rd.event.task} (launch #{rd.event.seq}) read {t!r} but "
                            f"[{hex(lo)}, {hex(hi)}) was last written by {w.what} "
                            f"({'tensor ' + repr(w.tensor) if w.tensor else 'not a tensor of the model'}) after "
                            f"{t!r}'s producer wrote it", event=rd.event.seq, writer=w.seq, tensor=t)


TENSOR_INTACT = Invariant(
    id="EXEC-TENSOR-INTACT",
    title="A tensor's memory is intact from its producer's write to its last read",
    statement="When a kernel reads a tensor that a kernel of the same call produced, every byte it reads was "
              "last written under that tensor's name: nothing else (another tensor's producer, a copy, a "
              "memset) wrote into those bytes between the producer's write and the read.",
    rationale="The planner lets tensors share memory only when their lifetimes do not overlap; a lifetime that "
              "ends a step early, a block handed to a second tensor while the first is still read, or a copy "
              "into live memory shows up as a read that finds another writer's bytes. Checking the writes, not "
              "only the reads, catches corruption that a later overwrite would hide from the oracle.",
    ge_source="compiler/graph/build/memory/block_mem_assigner.cc (GetNodeMaxLifeBySymbol, "
              "ReleaseInputNodeOutMemory, CanBlockLifeReuse)",
    applies_to="execution", concern="execution", predicate=_tensor_intact,
    precondition=lambda obs: any(True for _ in _intact_reads(obs)),
)


# -- EXEC-INPLACE-SAME-BYTES ------------------------------------------------------------------

def _in_place(obs: ExecutionObservation):
    """(launch, read range, write range) where a kernel's read overlaps one of its own writes."""
    for e in call_events(obs):
        if e.kind != "launch":
            continue
        for r in e.reads:
            for w in e.writes:
                if r.size > 0 and w.overlaps(r.address, r.size):
                    yield e, r, w


def _inplace_same_bytes(obs: ExecutionObservation):
    for e, r, w in _in_place(obs):
        if (r.address, r.size) != (w.address, w.size):
            yield violation(f"task {e.task}", f"launch #{e.seq} writes {w.tensor or 'an output'} at "
                            f"[{hex(w.address)}, {hex(w.end)}) over the bytes it reads as {r.tensor or 'an input'} "
                            f"at [{hex(r.address)}, {hex(r.end)}): an in-place output must cover exactly the bytes "
                            f"of its root that it reads", event=e.seq, read=[r.address, r.end], write=[w.address, w.end])


INPLACE_SAME_BYTES = Invariant(
    id="EXEC-INPLACE-SAME-BYTES",
    title="An in-place output reads its root only at the bytes it writes",
    statement="When a kernel writes an output over bytes it also reads (an in-place output on its root), the "
              "read range and the write range are the same bytes: it neither reads root bytes it does not "
              "overwrite nor writes past the part of the root it reads.",
    rationale="GE keeps an optional in-place pair only when output and input have equal byte sizes and the "
              "node is the input's last reader; an output shifted or sized differently from its root makes "
              "the kernel overwrite input elements it has not read yet (tiled hardware kernels read and write "
              "in chunks), which the emulator, computing before it commits, would never show in the numbers.",
    ge_source="compiler/graph/build/memory/mem_inplace.cc (ProcessInplace); graph_metadef/graph/utils/"
              "graph_utils.cc (GetSupportInplaceOutput)",
    applies_to="execution", concern="execution", predicate=_inplace_same_bytes,
    precondition=lambda obs: any(True for _ in _in_place(obs)),
)


# -- EXEC-COUNTERS-TRUE -----------------------------------------------------------------------

_COUNTED = {"launches": "task launches (kernel_launches + hccl_launches + memset_calls)",
            "kernel_launches": "kernel launches (the model file's kernel and copy-kernel tasks)",
            "hccl_launches": "collective launches (the model file's hccl tasks)",
            "memset_calls": "memset launches (the model file's memset tasks)",
            "memset_bytes": "bytes the memset launches wrote",
            "arg_writes": "argument slot writes (args_written + args_refreshed)", "args_bytes": "argument bytes",
            "unplaced_copies": "copies of no known direction (no label, an address in no known memory)"}


def _counters_true(obs: ExecutionObservation):
    if not obs.counters:   # not transcribed (a hand-written observation): nothing to compare
        return
    said, seen = reported_counts(obs.counters), trace_counts(obs)
    for d in COPY_DIRECTIONS:
        got, want = (said[f"{d}_calls"], said[f"{d}_bytes"]), (seen[f"{d}_calls"], seen[f"{d}_bytes"])
        if got != want:
            yield violation(f"{d} copies", f"the device's counters report {got[0]} {d} copies of {got[1]} bytes "
                            f"in the call; its trace shows {want[0]} of {want[1]} bytes moving {d}",
                            counted=list(got), traced=list(want))
    for key, what in _COUNTED.items():
        # per kind only where the device reports it and every launch's task is known
        if key in said and key in seen and said[key] != seen[key]:
            yield violation(what, f"the device's counters report {said[key]} in the call; its trace shows "
                            f"{seen[key]}", counted=said[key], traced=seen[key])


COUNTERS_TRUE = Invariant(
    id="EXEC-COUNTERS-TRUE",
    title="The counters a call reports are the copies, launches and argument writes it made",
    statement="For every execute call, the device's counters of that call equal what the spec counts in the "
              "call's trace: per direction (h2d, d2h, d2d, h2h) the copies and their bytes, the direction "
              "taken from where the bytes lie (the address space of the allocation or user buffer holding the "
              "source and the destination), not from the copy's label; the tasks the device ran (kernel, HCCL "
              "and memset launches together and, where the model file's tasks name every launched task, each "
              "kind apart: kernels with the copy kernels, collectives, memsets and the bytes they wrote); and "
              "the argument slots written (and their bytes, 8 per slot).",
    rationale="Zero copy is measured by these counters: `zcspec run` reports them and the benchmarks quote "
              "them (zero I/O copies per inference). A counter that drifts from the device's real copies would "
              "make a copying runtime look zero copy, or the reverse, with every output still correct. The "
              "spec recounts from the trace's addresses and its allocation events, so a device that files a "
              "copy under the wrong direction, in its counters and its own label alike, is caught.",
    ge_source="(zcspec) emulated NPU: the counters stand for the profiling counts of the copy tasks a GE "
              "execution launches (runtime/v1 DavinciModel::CopyInputData / CopyOutputData)",
    applies_to="execution", concern="execution", predicate=_counters_true,
    precondition=lambda obs: bool(obs.counters),
)



INVARIANTS = (ORACLE, V1_EQ_V2, NO_FAULT, NO_LEAK, FAILED_CALL_NO_CHANGE, NO_OVERRUN, READ_WRITTEN, NO_RACE,
              TENSOR_INTACT, INPLACE_SAME_BYTES, COUNTERS_TRUE, STREAMS_APART)
