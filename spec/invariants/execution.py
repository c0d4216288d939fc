"""Execution: what every execution must guarantee, whichever runtime ran it (applies to executions)."""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._trace import all_events, failed_calls, live_allocations, writes_into
from zcspec.spec.observables.execution import ExecutionObservation


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
    ge_source="runtime/v1 (DavinciModel) vs runtime/v2 (gert executor); ge-facts.md 6, 7",
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
    ge_source="(zcspec) emulated NPU (DESIGN.md 'The emulated NPU')",
    applies_to="execution", concern="execution", predicate=_no_fault,
    precondition=lambda obs: any(e.kind == "launch" for e in obs.events),
)


# -- EXEC-NO-LEAK -----------------------------------------------------------------------------

def _no_leak(obs: ExecutionObservation):
    events = all_events(obs)
    if not any(e.kind == "unload" for e in events):
        return
    for address, e in sorted(live_allocations(events).items()):
        yield violation(f"allocation {hex(address)}", f"{e.size} bytes ({e.purpose or e.io or 'unnamed'}, "
                        f"alloc #{e.seq} by {e.owner}) is still live after unload", address=address, size=e.size)


NO_LEAK = Invariant(
    id="EXEC-NO-LEAK",
    title="Nothing leaks after unload",
    statement="After a model is unloaded, every allocation the model or the runtime made (at load or in any "
              "execution) has been freed; the user's own buffers are not the runtime's to free.",
    rationale="Serving processes load and unload models for days; fallback output allocations (v2 default "
              "mode) and copy staging buffers are the usual leaks.",
    ge_source="runtime/v2/kernel/memory/memory_kernel.cc (FreeMemory); runtime/v2/core/utils/tensor_utils.cc; ge-facts.md 7.6",
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
        for address, e in sorted(live_allocations(events).items()):
            yield violation(f"allocation {hex(address)}", f"the {call} call failed but left {e.size} bytes "
                            f"allocated (alloc #{e.seq})", call=call, address=address)


FAILED_CALL_NO_CHANGE = Invariant(
    id="EXEC-FAILED-CALL-NO-CHANGE",
    title="A failed call changes nothing",
    statement="A call that fails writes nothing into any user buffer and leaves no allocation behind.",
    rationale="Callers retry after fixing their input (a larger buffer, a device placement); a failure that has "
              "already overwritten their memory or leaked device memory makes the retry unsafe. Validation "
              "must come before any side effect.",
    ge_source="runtime/v2/kernel/common_kernel_impl/build_tensor.cc; runtime/v1/.../davinci_model.cc "
              "(size checks before UpdateAllNodeArgs); ge-facts.md 6.5.4a, 7.4",
    applies_to="execution", concern="execution", predicate=_failed_call_no_change,
    precondition=lambda obs: bool(failed_calls(obs)),
)

INVARIANTS = (ORACLE, V1_EQ_V2, NO_FAULT, NO_LEAK, FAILED_CALL_NO_CHANGE)
