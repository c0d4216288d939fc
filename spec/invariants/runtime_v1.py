"""Runtime v1 (DavinciModel-style): address refresh and copy-only I/O (applies to loads and executions).

Which I/O must be copied and which must be zero copy is the spec's own computation
(spec/invariants/_copy_only.py, from the model file's tasks and the SoC table), never the
runtime's copy-only label. The claims about the caller's buffers (their sizes, a valid call runs)
live in runtime_v1_buffers.py; ``INVARIANTS`` below lists the whole concern in document order.
"""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._copy_only import HCCL, copy_only, copy_source, eligible, judged, reasons, users
from zcspec.spec.invariants._trace import is_v1
from zcspec.spec.invariants.runtime_v1_buffers import BUFFER_SIZE, V1, VALID_CALL_SUCCEEDS
from zcspec.spec.observables.execution import ADDR_BYTES, ExecutionObservation
from zcspec.spec.observables.load import LoadObservation


def _refreshed_entries(obs: ExecutionObservation):
    """Zero-copy table entries that must hold the user's buffer: zero copy on, I/O not copy-only,
    bound to a device buffer (host buffers go through the model's region: davinci_model.cc
    ConstructZeroCopyIoActiveBaseAddrs)."""
    if not (is_v1(obs) and obs.load.options.zero_copy and obs.result.ok):
        return  # a refused call fails before any refresh; EXEC-FAILED-CALL-NO-CHANGE covers it
    must_copy = copy_only(obs.load)
    for e in obs.load.zero_copy_table:
        b = obs.buffer(e.io)
        if judged(obs.load) and e.io not in must_copy and b is not None and b.placement == "device" and b.address:
            yield e, b


# -- V1-SLOT-REFRESH --------------------------------------------------------------------------

def _slot_refresh(obs: ExecutionObservation):
    value = {(s.task, s.index): s.value for s in obs.slots}
    ran = {s.task for s in obs.slots}   # slot values are what launched tasks read: another branch's tasks have none
    for e, b in _refreshed_entries(obs):
        if e.task not in ran:
            continue
        want, got = b.address + e.relative_offset, value.get((e.task, e.slot))
        if got != want:
            yield violation(f"task {e.task} slot {e.slot}", f"holds {_hex(got)} after refresh, expected "
                            f"{e.io!r}'s buffer {_hex(b.address)} + {e.relative_offset} = {_hex(want)}",
                            io=e.io, expected=want, actual=got)


def _hex(v) -> str:
    return "nothing" if v is None else hex(v)


SLOT_REFRESH = Invariant(
    id="V1-SLOT-REFRESH",
    title="After refresh every registered slot holds its user buffer plus the relative offset",
    statement="In a successful execution with zero copy on, every argument slot registered in the zero-copy "
              "table for an I/O that is not copy-only holds, when the device runs its task in the call, the "
              "address of the user's (device) buffer for that I/O plus the slot's relative offset.",
    rationale="This is zero copy: tasks read inputs from and write outputs to the user's buffers directly. The "
              "relative offset lets one user buffer feed several task addresses (buffer fusion). A slot left at "
              "the model's address reads stale data or writes where the user never looks.",
    ge_source=V1 + "davinci_model.cc (UpdateAllNodeArgs, ConstructZeroCopyIoActiveBaseAddrs); zero_copy_offset.cc; "
              "task_info/args_io_addrs_updater.cc",
    applies_to="execution", concern="runtime_v1", predicate=_slot_refresh,
    precondition=lambda obs: next(_refreshed_entries(obs), None) is not None,
)


# -- V1-NO-MODEL-IO-SLOT ----------------------------------------------------------------------

def _kept_io(obs: ExecutionObservation) -> list:
    """I/O allowed to keep the model's own address: copy-only, or bound to a host buffer (or none)."""
    out = []
    must_copy = copy_only(obs.load)
    for t in obs.load.io:
        b = obs.buffer(t.name)
        if t.name in must_copy or b is None or b.placement == "host":
            out.append(t)
    return out


def _no_model_io_slot(obs: ExecutionObservation):
    region = obs.load.region("zero_copy")
    if region is None or region.size == 0 or not (is_v1(obs) and obs.load.options.zero_copy and obs.result.ok
                                                    and judged(obs.load)):
        return
    kept = _kept_io(obs)
    # Slots of kept I/O may hold its model address: registered ones, and raw ones such as an HCCL
    # task's without zero-copy support on the legacy path (hccl_task_info.cc InitZeroCopyInfos), recognised by
    # the address itself.
    exempt = {(e.task, e.slot) for e in obs.load.zero_copy_table if e.io in {t.name for t in kept}}
    for s in obs.slots:
        if not region.contains(s.value) or (s.task, s.index) in exempt:
            continue
        if any(t.model_address <= s.value < t.model_address + max(t.size, 1) for t in kept):
            continue
        yield violation(f"task {s.task} slot {s.index}", f"points into the model's own I/O region "
                        f"[{_hex(region.address)}, {_hex(region.address + region.size)}) at {_hex(s.value)}",
                        value=s.value)


NO_MODEL_IO_SLOT = Invariant(
    id="V1-NO-MODEL-IO-SLOT",
    title="With zero copy on, no slot points into the model's own I/O region",
    statement="In a successful execution with zero copy on, after refresh no task argument slot holds an "
              "address inside the model's own "
              "zero-copy (I/O) region, except slots of copy-only I/O and of I/O bound to host buffers.",
    rationale="The model's I/O region is a placeholder for the user's buffers: under reuseZeroCopyMemory it is "
              "not even allocated, so a slot still pointing there reads or writes unbacked memory; otherwise "
              "it silently uses the model's copy instead of the user's data.",
    ge_source=V1 + "memory_app_type_classifier.cc (any FM-typed address outside the FM segments is model I/O); "
              "davinci_model.cc (GenMemAllocations)",
    applies_to="execution", concern="runtime_v1", predicate=_no_model_io_slot,
    precondition=lambda obs: is_v1(obs) and obs.load.options.zero_copy and obs.result.ok and bool(obs.slots)
    and bool(getattr(obs.load.region("zero_copy"), "size", 0)) and judged(obs.load),
)


# -- V1-COPY-ONLY-ONCE ------------------------------------------------------------------------

def _copy_only_io(obs: ExecutionObservation, only=None):
    """(I/O, buffer) for every I/O the spec says must be copied (``only``: restricted to those names)."""
    if not (is_v1(obs) and obs.result.ok):
        return
    for name in sorted(copy_only(obs.load)):
        t, b = obs.load.io_tensor(name), obs.buffer(name)
        if (only is None or name in only) and t is not None and b is not None and b.address and t.raw_size > 0:
            yield t, b


def _call_copies(obs: ExecutionObservation) -> list:
    return [e for e in obs.events if e.kind == "copy"]


def _expected_copies(obs: ExecutionObservation, t, b) -> list[tuple[int, int]]:
    """The (src, dst) the one copy a copied I/O takes may have: user -> model for an input, model -> user
    after. An I/O held in an earlier I/O's allocation is copied into (input) or out of (output) where that I/O
    is in the call (GE: the allocation's active base): its user buffer when it is zero copy on a device buffer,
    else where the call copied its buffer to (or its model address). A caller may pass one buffer for several
    inputs: every copy the call made out of it holds the same bytes, so each is where that I/O is."""
    source = copy_source(obs.load, t)
    if source is None:
        return [(b.address, t.model_address) if t.role == "input" else (t.model_address, b.address)]
    s, offset = source
    sb = obs.buffer(s.name)
    if sb is not None and sb.address and sb.placement == "device" and s.name in eligible(obs.load):
        wheres = [sb.address + offset]
    else:
        staged = [e.dst for e in _call_copies(obs) if sb is not None and e.src == sb.address and e.dst is not None]
        wheres = [w + offset for w in dict.fromkeys(staged)] or [s.model_address + offset]
    return [(b.address, w) if t.role == "input" else (w, b.address) for w in wheres]


def _copy_only_once(obs: ExecutionObservation, only=None):
    copies_all = _call_copies(obs)
    zero_copy_buffers = [b for n in sorted(eligible(obs.load)) if (b := obs.buffer(n)) is not None and b.address]
    for t, b in _copy_only_io(obs, only):
        expected = _expected_copies(obs, t, b)
        src, dst = expected[0]
        # Recognised by the addresses moved, not by the runtime's label for the copy.
        seen = [e for e in copies_all if (e.src, e.dst) in expected]
        if len(seen) != (src != dst):   # none onto itself (CopyOutputForNoZeroCopy)
            yield violation(f"buffer {t.name!r}", f"must be copied (the spec says: {reasons(obs.load)[t.name][0]}) "
                            f"exactly once {_hex(src)} -> {_hex(dst)} per execution; saw {len(seen)} such cop(ies)",
                            copies=len(seen))
        # A caller may pass one buffer for several inputs: a pointer that also lies in a zero-copy input's
        # buffer is that input's refresh, not one into this copy-only input (inputs are only read).
        def unexplained(value) -> bool:
            return b.contains(value) and not any(o.contains(value) for o in zero_copy_buffers)

        refreshed = [e for e in obs.events if e.kind == "arg_write" and e.value is not None and unexplained(e.value)]
        refreshed += [s for s in obs.slots if unexplained(s.value)]
        if refreshed:
            r = refreshed[0]
            yield violation(f"buffer {t.name!r}", f"is copy-only but task {r.task} slot "
                            f"{getattr(r, 'slot', getattr(r, 'index', None))} was pointed into it", task=r.task)


COPY_ONLY_ONCE = Invariant(
    id="V1-COPY-ONLY-ONCE",
    title="Copied I/O is copied once per execution and never refreshed",
    statement="In a successful execution, every input the spec deems copied (spec/invariants/_copy_only.py: "
              "zero copy off, an I/O outside the zero-copy region, an address inside an earlier input's or "
              "output's allocation, a task the SoC cannot refresh; on GE's legacy path also bytes shared with "
              "another I/O, no task pointing into it, a non-zero-copy block under reuseZeroCopyMemory, an HCCL "
              "buffer without zero-copy support) is copied from its user buffer exactly once, every such output "
              "into its user buffer exactly once (from the model's address, or from where the I/O whose "
              "allocation holds it is in the call), no other copy touches that user buffer, and no argument "
              "slot ever points into it (but for bytes it shares with a zero-copy input's buffer, when the "
              "caller passes one buffer for both).",
    rationale="GE's execute path copies exactly the I/O whose address it finds inside an allocation built "
              "before its own (the feature map, or an earlier I/O: a Data feeding NetOutput is copied once, "
              "from the user's input buffer into the user's output buffer). Copying twice wastes bandwidth; "
              "refreshing one as well makes tasks write the user buffer while the copy overwrites it.",
    ge_source=V1 + "davinci_model.cc (GenInputMemAllocations, GenOutputMemAllocations, GetMemAllocationByLogicAddr, "
              "CopyInputForNoZeroCopy, CopyOutputForNoZeroCopy; legacy: DisableZeroCopy, SetCopyOnlyOutput, "
              "CopyOutputDataLegacy)",
    applies_to="execution", concern="runtime_v1", predicate=_copy_only_once,
    precondition=lambda obs: next(_copy_only_io(obs), None) is not None,
)


# -- V1-REUSE-ZC-MEMORY -----------------------------------------------------------------------

def _load_allocations(load: LoadObservation) -> list:
    """The device allocations the load made for the model, from the load's trace (alloc events)."""
    return [e for e in load.events if e.kind == "alloc" and e.owner == "model" and e.space != "host"
            and e.address is not None and e.size]


def _inside(allocs, address: int, size: int = 1):
    return next((a for a in allocs if a.address < address + max(size, 1) and address < a.address + a.size), None)


def _reuse_zc_memory(load: LoadObservation):
    if not (load.options.runtime == "v1" and load.options.reuse_zero_copy_memory):
        return
    region, allocs = load.region("zero_copy"), _load_allocations(load)
    if region is None or region.size <= 0:
        return
    hit = _inside(allocs, region.address, region.size)
    if hit is not None:
        yield violation("region 'zero_copy'", f"[{_hex(region.address)}, +{region.size}) lies in {hit.size} bytes "
                        f"the load allocated at {_hex(hit.address)} ({hit.purpose or 'unnamed'}, alloc #{hit.seq}) "
                        "although reuseZeroCopyMemory is on", address=hit.address, size=hit.size)
        return
    given = next((g for g in load.caller_memory or () if g.address < region.address + region.size
                  and region.address < g.address + g.size), None)
    if given is not None:
        yield violation("region 'zero_copy'", f"[{_hex(region.address)}, +{region.size}) lies in the caller's "
                        f"{given.name} memory [{_hex(given.address)}, +{given.size}) although reuseZeroCopyMemory "
                        "is on: the model keeps its I/O in memory the option leaves to the caller",
                        address=given.address, size=given.size)
        return
    bound = copy_only(load) if judged(load) else {t.name for t in load.io}
    zc = {t.name: t for t in load.io if t.region == "zero_copy" and t.name not in bound}
    written = {(e.task, e.slot): e.value for e in load.events if e.kind == "arg_write"}
    for e in load.zero_copy_table:
        value = written.get((e.task, e.slot))
        hit = _inside(allocs, value) if e.io in zc and value is not None else None
        if hit is not None:
            yield violation(f"task {e.task} slot {e.slot}", f"was pointed at load to {_hex(value)}, inside {hit.size} "
                            f"bytes the load allocated ({hit.purpose or 'unnamed'}, alloc #{hit.seq}), for I/O "
                            f"{e.io!r}, which is bound to the caller's buffer: under reuseZeroCopyMemory the model "
                            "keeps no memory for it", io=e.io, address=value)
    # What the load may allocate at all: its weight, feature-map and fixed regions, the argument tables,
    # and the bytes of the I/O the spec says must be copied; anything more is memory for the I/O region.
    sizes = {r.name: r.size for r in load.regions}
    allowed = sum(max(sizes.get(r, 0), 1) for r in ("weight", "feature_map", "fixed")) \
        + ADDR_BYTES * sum(len(t.slots) for t in load.tasks) \
        + sum(t.size for t in load.io if t.name in bound and t.region == "zero_copy")
    total = sum(a.size for a in allocs)
    if total > allowed:
        yield violation("region 'zero_copy'", f"the load allocated {total} bytes of device memory, {total - allowed} "
                        f"more than the model's weight, feature-map and fixed regions, its argument tables and the "
                        f"bytes of its copied I/O ({allowed}): memory for the I/O region, although "
                        "reuseZeroCopyMemory is on", allocated=total, allowed=allowed)


REUSE_ZC_MEMORY = Invariant(
    id="V1-REUSE-ZC-MEMORY",
    title="reuseZeroCopyMemory disables zero copy for non-zero-copy blocks and leaves the I/O region unbacked",
    statement="With ge.exec.reuseZeroCopyMemory on, the load allocates no device memory for the model's I/O "
              "region, judged from the load's allocation events and the memory the caller gave it: none holds the "
              "region's address, nor does the caller's work memory, none holds "
              "an address the load wrote into a registered slot of an I/O bound to the caller's buffer, and the "
              "load allocates no more than its weight, feature-map and fixed regions, its argument tables (8 "
              "bytes a slot) and the bytes of the I/O the spec says must be copied. (That every input or "
              "output whose block is not a zero-copy block is then copied is V1-COPY-ONLY-ONCE's, which judges "
              "it from the copies the trace shows.)",
    rationale="The option means: do not back the I/O region, always bind I/O to the user's buffers (GE's design "
              "note misdescribes it as reuse across executions). Data or outputs outside zero-copy blocks have "
              "no refreshable address of their own, so their data must be copied. The runtime's own word on "
              "whether it backed the region is not taken: the device's allocations are.",
    ge_source=V1 + "davinci_model.cc (InitFeatureMapAndP2PMem, InitInputZeroCopy, DisableZeroCopyInReuseMemoryMode)",
    applies_to="load", concern="runtime_v1", predicate=_reuse_zc_memory,
    precondition=lambda load: load.options.runtime == "v1" and load.options.reuse_zero_copy_memory
    and bool(getattr(load.region("zero_copy"), "size", 0)),
)


# -- V1-HCCL-COPY -----------------------------------------------------------------------------

def _hccl_only(obs: ExecutionObservation) -> set[str]:
    """I/O whose one reason to be copied is an HCCL buffer without zero-copy support: only there does the
    HCCL rule alone decide between a correct runtime and one that forgot it."""
    if not (is_v1(obs) and judged(obs.load)):
        return set()
    return {n for n, why in reasons(obs.load).items() if why == (HCCL,)}


HCCL_COPY = Invariant(
    id="V1-HCCL-COPY",
    title="On GE's legacy path, HCCL without zero-copy support is copied",
    statement="In a successful execution of a model loaded for GE's legacy path (legacy_copy_only_addrs), an "
              "input or output that an HCCL task reads or writes through a buffer whose zero-copy flag is off, "
              "and that would otherwise be zero copy, is copied exactly once between its user buffer and the "
              "model's address, and no argument slot points into its user buffer.",
    rationale="On the legacy paths an HCCL task without zero-copy support keeps raw addresses, which "
              "HcclTaskInfo hands to DisableZeroCopy: binding the user's buffer would leave the collective "
              "reading the model's stale copy. (GE's execute path reads no copy-only set: there the HCCL "
              "task's slots are refreshed like any other's, and V1-ZERO-COPY-WHEN-ELIGIBLE judges the I/O.) "
              "The claim is put to the test only where the HCCL flag is the one reason to copy, so a runtime "
              "that forgot the rule cannot hide behind another one.",
    ge_source=V1 + "task_info/hccl/hccl_task_info.cc (HcclTaskInfo::InitZeroCopyInfos); davinci_model.cc "
              "(DavinciModel::DisableZeroCopy, copy_only_addrs_, CopyOutputDataLegacy)",
    applies_to="execution", concern="runtime_v1",
    predicate=lambda obs: _copy_only_once(obs, _hccl_only(obs)),
    precondition=lambda obs: next(_copy_only_io(obs, _hccl_only(obs)), None) is not None,
)


# -- V1-ZERO-COPY-WHEN-ELIGIBLE ---------------------------------------------------------------

def _eligible_io(obs: ExecutionObservation):
    """(I/O, buffer) for every I/O the spec deems eligible, bound to a device buffer in a successful call."""
    if not (is_v1(obs) and obs.result.ok):
        return
    for name in sorted(eligible(obs.load)):
        t, b = obs.load.io_tensor(name), obs.buffer(name)
        if t is not None and b is not None and b.address and b.placement == "device" and t.raw_size > 0:
            yield t, b


def _zero_copy_when_eligible(obs: ExecutionObservation):
    legit = {c for t, b in _copy_only_io(obs) for c in _expected_copies(obs, t, b)}   # another I/O's copy into an overlapping buffer
    copies = [e for e in _call_copies(obs) if (e.src, e.dst) not in legit]
    for t, b in _eligible_io(obs):
        staged = [e for e in copies if (e.src is not None and b.contains(e.src)) or
                  (e.dst is not None and b.contains(e.dst))]
        if staged:
            c = staged[0]
            yield violation(f"buffer {t.name!r}", f"is eligible for zero copy, yet the call copied "
                            f"{_hex(c.src)} -> {_hex(c.dst)} ({c.size} bytes) through its user buffer "
                            f"({len(staged)} cop(ies))", copies=len(staged))
        if next(users(obs.load, t), None) is not None and not any(b.contains(s.value) for s in obs.slots):
            yield violation(f"buffer {t.name!r}", "is eligible for zero copy, yet no task argument was pointed "
                            f"into its user buffer [{_hex(b.address)}, {_hex(b.address + b.size)})")


ZERO_COPY_WHEN_ELIGIBLE = Invariant(
    id="V1-ZERO-COPY-WHEN-ELIGIBLE",
    title="An I/O that can be zero copy is zero copy",
    statement="In a successful v1 execution, every model input or output bound to a device buffer that the spec "
              "deems eligible for zero copy (none of the copy rules of V1-COPY-ONLY-ONCE applies) is neither "
              "copied nor staged (no copy writes its user buffer, and none reads it but the one that copies an "
              "I/O its allocation holds) and, when some task argument points into its logical address range, "
              "some task argument points into its buffer. An input no task reads and an output no task writes "
              "are eligible: GE makes them refreshable allocations no slot uses, and nothing copies them.",
    rationale="Zero copy is the point of the design: a runtime that copies what it could bind wastes a device "
              "copy per I/O per execution and still passes every claim that only asks whether copied I/O is "
              "copied right. The eligible set comes from the model file's tasks and the spec's SoC table, "
              "never from the runtime's own copy-only decision.",
    ge_source=V1 + "davinci_model.cc (DavinciModel::GenInputMemAllocations, GenOutputMemAllocations, "
              "ConstructZeroCopyIoActiveBaseAddrs); zero_copy_offset.cc (ZeroCopyOffset::SetOutsideAddrsValue)",
    applies_to="execution", concern="runtime_v1", predicate=_zero_copy_when_eligible,
    precondition=lambda obs: next(_eligible_io(obs), None) is not None,
)

INVARIANTS = (SLOT_REFRESH, NO_MODEL_IO_SLOT, COPY_ONLY_ONCE, ZERO_COPY_WHEN_ELIGIBLE, REUSE_ZC_MEMORY, HCCL_COPY,
              BUFFER_SIZE, VALID_CALL_SUCCEEDS)
