"""Runtime v2 (lowered, gert-style): output zero copy and the always_zero_copy contract (applies to executions)."""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._trace import call_events, in_buffer, is_v2, walk, writes_into
from zcspec.spec.observables.execution import ExecutionObservation, UserBuffer
from zcspec.spec.observables.trace import Range

V2 = "runtime/v2/"


def _outputs(obs: ExecutionObservation):
    return [t for t in obs.load.io if t.role == "output"]


def _azc(obs: ExecutionObservation) -> bool:
    return is_v2(obs) and obs.load.options.always_zero_copy


def short_or_null(obs: ExecutionObservation, t) -> str | None:
    """Why the caller's buffer for model I/O ``t`` cannot hold it, whatever the mode: null, or below ``t``'s
    raw size (GE: build_tensor.cc ``SplitDataTensor``/``SplitTensorForOutputData`` check the tensors before a
    kernel runs). One home for the judgement that the claims on v2's inputs, its always_zero_copy outputs and
    CALL-INVALID-REFUSED share."""
    b = obs.buffer(t.name)
    if b is None or not b.address:
        return "null address"
    if b.size < t.raw_size:
        return f"{b.size} bytes, below the {t.role}'s raw {t.raw_size}"
    return None


def bad_inputs(obs: ExecutionObservation) -> dict[str, str]:
    """Input name -> why its buffer cannot be read: null, or below the input's raw size (the kernels would read
    past the caller's buffer; GE's build_tensor.cc checks the tensors before a kernel runs). A call with one is
    refused (CALL-INVALID-REFUSED), whatever its outputs: the claims on outputs speak of calls without one."""
    return {t.name: why for t in obs.load.io if t.role == "input" and (why := short_or_null(obs, t))}


RUNTIME_MEMORY = ("runtime", "pool")


def _where(obs: ExecutionObservation, b: UserBuffer | None, live, r: Range) -> str | None:
    """Whose memory range ``r`` is: ``"own"`` (the output's own buffer ``b``), ``"io"`` (another I/O's buffer),
    the owner of the live allocation holding it (``model``, ``runtime``, ``pool``), or None (nobody's)."""
    if b is not None and b.address and b.address <= r.address and r.end <= b.address + b.size:
        return "own"
    if in_buffer(obs, r):
        return "io"
    return live.owner(r)


def _computed(obs: ExecutionObservation, t) -> list[tuple[object, Range, str | None]]:
    """(launch, range, whose memory) for every write of the call through a slot holding output ``t``'s tensor:
    where a kernel computed that output (see :func:`_where`)."""
    b = obs.buffer(t.name)
    return [(e, r, _where(obs, b, live, r)) for e, live in walk(obs) if e.kind == "launch"
            for r in e.writes if r.tensor == t.name and r.size > 0]


def _deliveries(obs: ExecutionObservation, t) -> list[tuple[object, str | None]]:
    """(copy, whose memory its source is) for every copy of the call that writes into output ``t``'s buffer."""
    b = obs.buffer(t.name)
    if b is None or not b.address or b.size <= 0:
        return []
    return [(e, _where(obs, b, live, Range(e.src, e.size))) for e, live in walk(obs) if e.kind == "copy"
            and e.src is not None and any(r.overlaps(b.address, b.size) for r in e.written())]


def _kernel_outputs(obs: ExecutionObservation):
    """Outputs some kernel of the call computes (a write through a slot holding the output's tensor): the
    outputs GE's ModelOutTensorZeroCopy can give the caller's memory, unlike a model input or a weight passed
    through, which EnsureTensorAtOutMemory copies."""
    return [t for t in _outputs(obs) if _computed(obs, t)]


def _piece(computed) -> bool:
    """An output computed inside another I/O's buffer: a piece of a larger output (or an output that is also
    a piece of a continuous input), which GE does not give zero copy ("Cannot enable zero copy") and copies."""
    return any(where == "io" for _, _, where in computed)


def _covered(ranges, lo: int, hi: int) -> bool:
    """Whether ``ranges`` together cover every byte of ``[lo, hi)``."""
    at = lo
    for r in sorted(ranges, key=lambda r: r.address):
        if r.address > at:
            break
        at = max(at, r.end)
    return at >= hi


# -- V2-AZC-NO-ALLOC --------------------------------------------------------------------------

def _azc_no_alloc(obs: ExecutionObservation):
    if not _azc(obs):
        return
    for t in _outputs(obs):
        if not t.zero_copy_block:
            continue   # the model file gives it no zero-copy block: computed in graph memory and copied (GE's Ensure)
        for e, r, where in _computed(obs, t):
            if where in RUNTIME_MEMORY:
                yield violation(f"buffer {t.name!r}", f"always_zero_copy is on but task {e.task} (launch #{e.seq}) "
                                f"computed the output at [{hex(r.address)}, {hex(r.end)}), in {where} memory, not "
                                f"in the caller's buffer", event=e.seq, address=r.address)
                break
        for e, where in _deliveries(obs, t):
            if where in RUNTIME_MEMORY:
                yield violation(f"buffer {t.name!r}", f"always_zero_copy is on but {e.direction} copy #{e.seq} "
                                f"delivered the output from {where} memory at {hex(e.src or 0)}", event=e.seq)


AZC_NO_ALLOC = Invariant(
    id="V2-AZC-NO-ALLOC",
    title="always_zero_copy never allocates an output",
    statement="With always_zero_copy on, the runtime allocates no memory for any model output whose block "
              "the model file makes a zero-copy block: no kernel writes it into runtime memory (an allocation "
              "the runtime or its caching allocator made), and no copy delivers it from runtime memory. An "
              "output without a zero-copy block (say, a piece of a continuous input) is computed in graph "
              "memory and copied, as GE's ModelOutTensorZeroCopy finds no alloc node for it. Judged from the "
              "trace's kernel writes and copies against the live allocations: blocks a caching allocator hands "
              "out of a span it holds are invisible as allocations.",
    rationale="always_zero_copy is the caller's promise to always pass correctly sized, correctly placed output "
              "memory (single-op execution relies on it); in exchange GE rewrites the output allocation into "
              "SplitTensorForOutputData and removes the allocator chain, so there is no fallback memory.",
    ge_source=V2 + "lowering/pass/model_out_tensor_zero_copy.cc; kernel/common_kernel_impl/build_tensor.cc "
              "(SplitTensorForOutputData)",
    applies_to="execution", concern="runtime_v2", predicate=_azc_no_alloc,
    # A case tells right from wrong when a kernel computed an output, or when a buffer is unusable (a
    # runtime that falls back would compute the output elsewhere instead of refusing the call).
    precondition=lambda obs: _azc(obs) and (bool(_kernel_outputs(obs)) or any(short_or_null(obs, t) for t in _outputs(obs))),
)


# -- V2-AZC-REJECT ----------------------------------------------------------------------------

def _azc_reject(obs: ExecutionObservation):
    if not _azc(obs):
        return
    for t in _outputs(obs):
        why = short_or_null(obs, t)
        if why is None:
            continue
        # An input the call cannot read either may be the one named (GE checks the buffers in some order).
        may_name = {t.name} | set(bad_inputs(obs))
        named = obs.result.culprit in may_name or any(e.kind == "error" and e.io in may_name for e in obs.events)
        if obs.result.ok or not named:
            also = f" or one of the invalid inputs {sorted(may_name - {t.name})!r}" if len(may_name) > 1 else ""
            yield violation(f"buffer {t.name!r}", f"{why}, so the call must fail naming this buffer{also}; "
                            f"it returned ok={obs.result.ok}, culprit={obs.result.culprit!r}")
        b = obs.buffer(t.name)
        for e, lo, hi in (writes_into(obs.events, b) if b is not None else ()):
            yield violation(f"buffer {t.name!r}", f"was rejected but {e.kind} #{e.seq} wrote [{hex(lo)}, {hex(hi)})",
                            event=e.seq)


AZC_REJECT = Invariant(
    id="V2-AZC-REJECT",
    title="always_zero_copy errors on a null or undersized output buffer and leaves it untouched",
    statement="With always_zero_copy on, an execution whose output buffer is null or smaller than the output's "
              "raw size fails with an error naming that output (or an input whose buffer is null or short too), "
              "and nothing is written into that buffer.",
    rationale="GE's SplitTensorForOutputData returns PARAM_INVALID (E13031) for a null tensor or address and for "
              "a buffer below the raw storage size (no padding). Failing before any kernel runs keeps the "
              "caller's memory intact, so the caller can retry with a correct buffer.",
    ge_source=V2 + "kernel/common_kernel_impl/build_tensor.cc (SplitTensorForOutputData)",
    applies_to="execution", concern="runtime_v2", predicate=_azc_reject,
    precondition=lambda obs: _azc(obs) and any(short_or_null(obs, t) for t in _outputs(obs)),
)


# -- V2-DEFAULT-FALLBACK ----------------------------------------------------------------------

def _needs_fallback(obs: ExecutionObservation):
    """Outputs whose buffer cannot hold them directly in the default mode: null, host, or (except
    under ge_compat, where GE shares an undersized buffer unchecked and fails, AllocModelOutTensor) undersized."""
    if not is_v2(obs) or obs.load.options.always_zero_copy or bad_inputs(obs):
        return []   # a call with an unreadable input is refused, not run (CALL-INVALID-REFUSED)
    out = []
    declared = _declared_elsewise(obs)
    for t in _outputs(obs):
        if t.name in declared:
            continue   # the caller's trusted shape decides its bytes (V2-TRUST-SHAPE); GE's Ensure may refuse it
        b = obs.buffer(t.name)
        small = b is not None and b.size < t.raw_size and not obs.load.options.ge_compat
        if b is None or b.address == 0 or b.placement != "device" or small:
            out.append(t)
    return out


def _declared_elsewise(obs: ExecutionObservation) -> set[str]:
    """Trusted outputs (:func:`trusted_outputs`) whose caller's tensor is not known to declare the model's
    shape or none: GE's EnsureTensorAtOutMemory delivers the declared shape's bytes (memory_copy.cc
    ``TensorToOut``) and fails when they exceed the caller's buffer or the output's data, so no fallback is
    owed there. An observation without the caller's tensors leaves every trusted output unknown."""
    model_bytes = {t.name for t in obs.out_tensors if t.given is None or tuple(t.given) == tuple(t.computed)}
    return trusted_outputs(obs) - model_bytes


def _default_fallback(obs: ExecutionObservation):
    for t in _needs_fallback(obs):
        if not obs.result.ok:
            yield violation(f"buffer {t.name!r}", "cannot hold the output directly (null, host or undersized buffer), "
                            "so the default mode must fall back to runtime memory and succeed; the call failed")
            continue
        computed = _computed(obs, t)
        for e, r, where in ([] if _piece(computed) else computed):
            if where not in RUNTIME_MEMORY:
                yield violation(f"buffer {t.name!r}", f"cannot hold the output directly, but task {e.task} (launch "
                                f"#{e.seq}) computed it at [{hex(r.address)}, {hex(r.end)}), which is "
                                f"{where + ' memory' if where else 'no live allocation'}, not runtime memory",
                                event=e.seq, address=r.address)
                break
        b = obs.buffer(t.name)
        if b is not None and b.address and b.placement == "host" and b.size >= t.raw_size:
            copied = [r for e, _ in _deliveries(obs, t) for r in e.written()]
            if not _covered(copied, b.address, b.address + t.raw_size):
                yield violation(f"buffer {t.name!r}", f"is host memory, so the output must be copied into its "
                                f"{t.raw_size} bytes; the call's copies cover "
                                f"{sum(min(r.end, b.address + t.raw_size) - max(r.address, b.address) for r in copied)}")


DEFAULT_FALLBACK = Invariant(
    id="V2-DEFAULT-FALLBACK",
    title="The default mode falls back to runtime memory",
    statement="With always_zero_copy off, in a call whose input buffers are all readable (not null, not below "
              "the input's raw size: a call with such an input is refused, CALL-INVALID-REFUSED), an output "
              "whose buffer is null, not device memory, or smaller than "
              "the output is computed in runtime memory and the execution succeeds; into a host buffer large "
              "enough the output is then copied, otherwise handed over. Judged from the trace: the kernel's write lands "
              "in a live runtime or pool allocation, a copy fills the host buffer. Under ge_compat an "
              "undersized buffer is GE's hazard instead (V2-NO-OVERRUN). An output whose shape is trusted "
              "(V2-TRUST-SHAPE) is not judged unless the caller's tensor declares the model's shape or none: "
              "the declared shape's bytes are delivered then, and GE refuses more than the buffer or the data "
              "holds.",
    rationale="Without the caller's promise GE keeps AllocModelOutTensor: no address means allocate into the "
              "user tensor, a wrong placement means allocate and let EnsureTensorAtOutMemory copy.",
    ge_source=V2 + "kernel/outputs/model_outputs.cc (AllocModelOutTensor); kernel/common_kernel_impl/memory_copy.cc "
              "(EnsureTensorAtOutMemory)",
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


def _judged(obs: ExecutionObservation):
    """Usable outputs (``_usable``) a kernel computes, other than pieces of a larger output."""
    for t, b in _usable(obs):
        computed = _computed(obs, t)
        if computed and not _piece(computed):
            yield t, b, computed


def _out_is_user(obs: ExecutionObservation):
    for t, b, computed in _judged(obs):
        inside = [r for _, r, where in computed if where == "own"]
        copies = _deliveries(obs, t)
        if not _covered(inside, b.address, b.address + t.raw_size) or copies:
            where = ", ".join(f"[{hex(r.address)}, {hex(r.end)}) ({w or 'nobody'}'s)" for _, r, w in computed[:3])
            yield violation(f"buffer {t.name!r}", f"is large enough ({b.size} >= {t.raw_size}) and on the device, "
                            f"but the kernel computed the output at {where} with {len(copies)} cop(ies) into the "
                            f"buffer instead of in the buffer at {hex(b.address)}")


OUT_IS_USER = Invariant(
    id="V2-OUT-IS-USER",
    title="Output memory is the user's buffer when it is large enough",
    statement="In a successful execution with zero copy on, an output a kernel computes (other than a piece of "
              "a larger output, computed inside that output's buffer and copied), whose block the compiler made zero copy and whose user buffer is on the device and at least the output's raw "
              "size, is written by that kernel directly into the buffer (its writes cover the output's bytes "
              "there) and no copy writes into the buffer. Judged from the trace's kernel writes and copies, "
              "not from the addresses the runtime reports.",
    rationale="This is v2's output zero copy: ModelOutTensorZeroCopy turns the producer's AllocMemory into "
              "AllocModelOutTensor, which shares the caller's memory, and EnsureTensorAtOutMemory sees source "
              "== destination and copies nothing.",
    ge_source=V2 + "lowering/pass/model_out_tensor_zero_copy.cc; kernel/outputs/model_outputs.cc; "
              "kernel/common_kernel_impl/memory_copy.cc",
    applies_to="execution", concern="runtime_v2", predicate=_out_is_user,
    precondition=lambda obs: any(True for _ in _judged(obs)),
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
              "kernel/common_kernel_impl/memory_copy.cc (EnsureTensorAtOutMemory)",
    applies_to="execution", concern="runtime_v2", predicate=_no_overrun,
    precondition=lambda obs: is_v2(obs) and any(next(writes_into(obs.events, b), None) for b in obs.buffers),
)


# -- V2-TRUST-SHAPE ---------------------------------------------------------------------------

def trusted_outputs(obs: ExecutionObservation) -> set[str]:
    """Outputs whose shape GE takes from the caller's tensor under trust_shape_on_out_tensor, from the model
    file's tasks: a node whose tasks write the output's tensor computes it, and every tensor that node's tasks
    write is a model output (TrustOutTensor replaces that node's InferShape by OutputData only then:
    trust_out_tensor.cc ``CanBeDeleted``). A model input or weight passed through, or a tensor no task writes
    (a view), has no such node. Empty with the option off."""
    if not obs.load.options.trust_shape_on_out_tensor:
        return set()
    outs = [(t.tensor or t.name, t.name) for t in _outputs(obs)]
    delivered = {tensor for tensor, _ in outs}
    written: dict[str, set[str]] = {}
    writers: dict[str, set[str]] = {}
    for task in obs.load.tasks:
        for s in task.slots:
            if s.role == "out":
                written.setdefault(task.node, set()).add(s.tensor)
                writers.setdefault(s.tensor, set()).add(task.node)
    return {name for tensor, name in outs
            if writers.get(tensor) and all(written[n] <= delivered for n in writers[tensor])}


def _judged_outputs(obs: ExecutionObservation):
    """(caller's tensor, trusted?) for every output of a successful v2 call whose two possible outcomes differ
    (the shape the caller gave is not the model's) and that has bytes to compute."""
    if not (is_v2(obs) and obs.result.ok):
        return
    raw, trusted = {t.name: t.raw_size for t in _outputs(obs)}, trusted_outputs(obs)
    for t in obs.out_tensors:
        if t.given != t.computed and raw.get(t.name, 0) > 0:
            yield t, t.name in trusted


def _trust_shape(obs: ExecutionObservation):
    on = obs.load.options.trust_shape_on_out_tensor
    for t, trusted in _judged_outputs(obs):
        if trusted and t.after != t.given:
            yield violation(f"output {t.name!r}", f"has its shape trusted (trust_shape_on_out_tensor on, and every "
                            f"output of the node computing it is a model output), yet came back with shape "
                            f"{t.after}, not the {t.given} the caller gave: its EnsureTensorAtOutMemory set the "
                            "model's shape (TrustOutTensor gives it the caller's)", given=t.given, after=t.after)
        elif not trusted and t.after != t.computed:
            why = ("no node whose every output is a model output computes it" if on
                   else "trust_shape_on_out_tensor is off")
            yield violation(f"output {t.name!r}", f"came back with shape {t.after}, not the model's {t.computed}, "
                            f"but {why}: its EnsureTensorAtOutMemory must deliver it and set the shape",
                            computed=t.computed, after=t.after)


TRUST_SHAPE = Invariant(
    id="V2-TRUST-SHAPE",
    title="trust_shape_on_out_tensor keeps the caller's shape on exactly the outputs GE trusts",
    statement="After a successful runtime-v2 call with trust_shape_on_out_tensor on, an output whose computing "
              "node has only model outputs (by the model file's tasks: a node whose tasks write the output's "
              "tensor, every tensor those tasks write a model output) comes back with the shape the caller put "
              "on its tensor, with or without always_zero_copy; every other output (a model input or a weight "
              "passed through, a tensor no task writes, an output of a node that also feeds another node), and "
              "every output with the option off, comes back with the model's output shape. Judged where the "
              "caller's shape and the model's differ.",
    rationale="GE's TrustOutTensor replaces the InferShape of such a node by OutputData, so the output's "
              "EnsureTensorAtOutMemory reads the caller's own shape and writes it back (and is removed where it "
              "only repeats SplitTensorForOutputData); an InferShape with an output no model-output Ensure reads "
              "stays, and so does the model's shape. An Ensure that overwrites a trusted shape loses what the "
              "option promises; one that leaves an untrusted output with the caller's shape leaves it unshaped. "
              "Which outputs are trusted the spec derives from the model file; what ran, from the tensors the "
              "caller got back: the runtime's lowered graph is not read.",
    ge_source=V2 + "lowering/pass/trust_out_tensor.cc (TrustOutTensor::Run, CanBeDeleted, "
              "PrepareDeleteInferShapeNodes); kernel/common_kernel_impl/memory_copy.cc (EnsureTensorAtOutMemory); "
              "inc/graph_metadef/external/exe_graph/lowering/lowering_opt.h",
    applies_to="execution", concern="runtime_v2", predicate=_trust_shape,
    precondition=lambda obs: next(_judged_outputs(obs), None) is not None,
)

INVARIANTS = (AZC_NO_ALLOC, AZC_REJECT, DEFAULT_FALLBACK, OUT_IS_USER, NO_OVERRUN, TRUST_SHAPE)
