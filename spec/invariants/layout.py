"""Layout: where tensors sit in the model's memory (applies to plans).

Each claim below is an :class:`Invariant`; its predicate recomputes what it
needs from the plan's placements (first/last, offsets, alias chains) and
never trusts the planner's own bookkeeping.
"""
from __future__ import annotations

from zcspec.spec.capabilities import GE_DEFAULT, TABLE, granularities
from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._util import align_up, continuous_inputs, families, space_time_overlaps, time_overlapping_pairs
from zcspec.spec.observables.plan import PlanObservation

GE_MEM = "compiler/graph/build/memory/"


# -- LAYOUT-NO-OVERLAP ------------------------------------------------------------------------

def _no_overlap(plan: PlanObservation):
    by_region: dict[str, list] = {}
    for f in families(plan):
        by_region.setdefault(f.region, []).append(f)
    for region, fs in sorted(by_region.items()):
        for a, b in space_time_overlaps(fs):
            if plan.exclusive(a.root, b.root):
                continue
            lo, hi = max(a.offset, b.offset), min(a.end, b.end)
            s0, s1 = max(a.first, b.first), min(a.last, b.last)
            yield violation(
                f"tensor {a.root!r} and tensor {b.root!r}",
                f"both live during steps {s0}..{s1} and share bytes [{lo}, {hi}) of region {region!r}",
                region=region, tensors=[a.root, b.root], bytes=[lo, hi], steps=[s0, s1])


def _some_lifetimes_overlap(plan: PlanObservation) -> bool:
    by_region: dict[str, list] = {}
    for f in families(plan):
        by_region.setdefault(f.region, []).append(f)
    return any(next(time_overlapping_pairs(fs), None) for fs in by_region.values())


NO_OVERLAP = Invariant(
    id="LAYOUT-NO-OVERLAP",
    title="Tensors alive at the same time never share memory",
    statement="For any two tensors of one region whose lifetimes [first, last] intersect, the byte ranges "
              "[offset, offset + size) are disjoint. An alias (alias_of) shares its root's memory, so a root "
              "and its aliases count as one piece of memory alive from the earliest first to the latest last. "
              "Tensors of different dynamic-batch branches (batch_labels) never run together and are exempt.",
    rationale="This is the safety property of static planning: a tensor is overwritten while it is still "
              "needed exactly when it shares bytes with a tensor alive at the same step. The check recomputes "
              "overlaps with a sweep over time (O(N log N) for a valid plan), never from the planner's blocks.",
    ge_source=GE_MEM + "block_mem_assigner.cc (ReuseBlock, CanReuseBlock, ReuseBlocksByLifeTime)",
    applies_to="plan", concern="layout", predicate=_no_overlap, precondition=_some_lifetimes_overlap,
)


# -- LAYOUT-ALIGN -----------------------------------------------------------------------------

def _nopadding_members(plan: PlanObservation) -> set[str]:
    return {n for g in continuous_inputs(plan) if not g.padding for n in g.tensors[1:]}


def _align(plan: PlanObservation):
    block_g, tensor_g = granularities(plan)
    for b in plan.blocks:
        g = block_g.get(b.region)
        if g and (b.offset % g or b.size % g):
            yield violation(f"block {b.id!r}", f"offset={b.offset}, size={b.size} in region {b.region!r}: "
                            f"both must be multiples of the block granularity {g}", granularity=g)
    exempt = _nopadding_members(plan)
    for t in plan.tensors:
        g = block_g.get(t.region)
        if not g or t.alias_of is not None or t.name in exempt:
            continue
        if t.offset % tensor_g:
            yield violation(f"tensor {t.name!r}", f"offset={t.offset} is not a multiple of the tensor "
                            f"granularity {tensor_g}", granularity=tensor_g)
        if t.aligned_size != align_up(t.size, g):
            yield violation(f"tensor {t.name!r}", f"aligned_size={t.aligned_size}, expected size={t.size} "
                            f"rounded up to {g} = {align_up(t.size, g)}", granularity=g)


ALIGN = Invariant(
    id="LAYOUT-ALIGN",
    title="Blocks are aligned to their region's granularity",
    statement="In each region with a block granularity G (GE: 512 bytes for the feature map and for the "
              "zero-copy region alike), every block's offset and size are multiples of G and every tensor's "
              "aligned_size is its size rounded up to G (0 stays 0); every tensor that owns its memory starts "
              "at a multiple of the tensor granularity (GE: 32). Both granularities are parameters of the plan "
              "(the spec's capability table for the plan's SoC; alignment.block and alignment.tensor for a "
              "plan that names none).",
    rationale="Kernels and DMA engines expect aligned buffers, and GE sizes every block, zero-copy blocks "
              "included, with AlignMemOffset = ceil(x/512)*512 (MEM_ALIGN_SIZE). A common misreading says "
              "zero-copy memory is 32-byte aligned: in the source 32 is only the tensor-size granularity "
              "(align32(bytes) + 32 padding) and the size of a zero-copy output's atomic-clean range. Because "
              "the granularities are parameters, a layout that really uses 32-byte zero-copy blocks can be "
              "modelled and checked against its own claim. Tensors inside a NoPadding continuous group and "
              "aliases are exempt from the tensor rule: they start wherever their group or root puts them.",
    ge_source=GE_MEM + "mem_assigner.h (MEM_ALIGN_SIZE); mem_reuse_strategy.cc (AlignMemOffset); "
              "graph_mem_assigner.h (CleanMemInfo::size)",
    applies_to="plan", concern="layout", predicate=_align,
    precondition=lambda plan: any(b.region in granularities(plan)[0] for b in plan.blocks),
    ge_only=True,
)


# -- LAYOUT-TENSOR-SIZE -----------------------------------------------------------------------

def _group_owners(plan: PlanObservation) -> set[str]:
    """Outputs of NoPadding continuous-input nodes: their memory spans all of their pieces."""
    nodes = {g.consumer for g in continuous_inputs(plan) if not g.padding}
    return {t for t, n in plan.producers.items() if n in nodes}


def _sized(plan: PlanObservation):
    """(tensor, expected size, exact?) for every tensor whose raw bytes are known and that owns its memory."""
    caps = TABLE.get(plan.soc, GE_DEFAULT)
    owners = _group_owners(plan)
    for t in plan.tensors:
        if t.nbytes is None or t.alias_of is not None or t.region not in ("feature_map", "zero_copy"):
            continue
        if t.name in plan.workspaces:     # a kernel's scratch bytes are taken as it declares them
            yield t, t.nbytes, True
        else:
            yield t, caps.tensor_size(t.nbytes), t.name not in owners


def _tensor_size(plan: PlanObservation):
    for t, want, exact in _sized(plan):
        if t.size != want if exact else t.size < want:
            yield violation(f"tensor {t.name!r}", f"size={t.size} for {t.nbytes} raw bytes; expected "
                            f"{'' if exact else 'at least '}{want}", nbytes=t.nbytes, expected=want)


TENSOR_SIZE = Invariant(
    id="LAYOUT-TENSOR-SIZE",
    title="A tensor's size is GE's padded size of its raw bytes",
    statement="Every tensor of the feature map or the zero-copy region that owns its memory has size = "
              "align(nbytes, tensor granularity) + padding (GE: align32(bytes) + 32; an empty tensor gets the "
              "padding), with the granularity and padding of the plan's SoC from the spec's capability table; "
              "a workspace's size is the byte count its node declares; the output of a NoPadding continuous "
              "node is at least that large (it spans its pieces).",
    rationale="Sizes decide everything downstream: the block a tensor asks for, the live bytes of the lower "
              "bound, the model's padded I/O size that runtime v1 compares user buffers against (user + 64 >= "
              "size). The spec recomputes the size from the tensor's shape and dtype instead of trusting the "
              "planner's figure, so a rounding slip (one unit too many or too few) shows at once.",
    ge_source="compiler/engines/nn_engine/utils/common/op_tensor_utils.cc (OpTensorUtils::CalibrateTensorSize); "
              "graph_metadef/graph/utils/tensor_size_utils.cc (TensorUtilsEx::GetTensorMemorySizeInBytesWithAutoPadding)",
    applies_to="plan", concern="layout", predicate=_tensor_size,
    precondition=lambda plan: next(_sized(plan), None) is not None,
    ge_only=True,
)


# -- LAYOUT-REGION-COVER ----------------------------------------------------------------------

def _region_cover(plan: PlanObservation):
    for b in plan.blocks:
        size = plan.regions.get(b.region)
        if size is None or b.offset < 0 or b.end > size:
            yield violation(f"block {b.id!r}", f"[{b.offset}, {b.end}) is not inside region {b.region!r} "
                            f"of size {size}", region=b.region)
        for name in b.tensors:
            if name not in plan.tensor or plan.tensor[name].block != b.id:
                yield violation(f"block {b.id!r}", f"lists tensor {name!r}, whose block is "
                                f"{getattr(plan.tensor.get(name), 'block', None)!r}")
    for t in plan.tensors:
        yield from _tensor_cover(plan, t)


def _tensor_cover(plan: PlanObservation, t):
    size = plan.regions.get(t.region)
    if size is None or t.offset < 0 or t.end > size or t.first > t.last:
        yield violation(f"tensor {t.name!r}", f"[{t.offset}, {t.end}) steps {t.first}..{t.last} is not inside "
                        f"region {t.region!r} of size {size} (or its lifetime is empty)", region=t.region)
    if t.block is None:
        return
    b = plan.block.get(t.block)
    if b is None:
        yield violation(f"tensor {t.name!r}", f"names block {t.block!r}, which the plan does not have")
    elif b.region != t.region or t.offset < b.offset or t.end > b.end or t.name not in b.tensors:
        yield violation(f"tensor {t.name!r}", f"[{t.offset}, {t.end}) in {t.region!r} is not inside its block "
                        f"{b.id!r} [{b.offset}, {b.end}) in {b.region!r} (or the block does not list it)")


REGION_COVER = Invariant(
    id="LAYOUT-REGION-COVER",
    title="Regions cover every placement",
    statement="Every tensor and every block lies inside its region: 0 <= offset and offset + size <= the "
              "region's size; every tensor with a block lies inside that block, in the same region, and the "
              "block lists it (and lists only tensors that name it); every lifetime is non-empty.",
    rationale="The runtime allocates each region with exactly the recorded size; a placement past the end is "
              "an out-of-bounds access on the device, and a tensor outside its block escapes every reuse "
              "decision that was made about the block.",
    ge_source=GE_MEM + "block_mem_assigner.cc (ResizeMemoryBlocks, MemoryBlock::SetHeadOffset)",
    applies_to="plan", concern="layout", predicate=_region_cover,
    precondition=lambda plan: bool(plan.tensors),
)


# -- LAYOUT-IO-ATTRIBUTES ---------------------------------------------------------------------

def _io_attributes(plan: PlanObservation):
    a = plan.attributes
    fm_end = a.memory_size - a.zero_copy_memory_size
    base = {"feature_map": 0, "zero_copy": fm_end}
    for t in plan.tensors:
        if t.region == "feature_map" and t.end > fm_end:
            yield violation(f"tensor {t.name!r}", f"ends at feature_map+{t.end}, past memory_size - "
                            f"zero_copy_memory_size = {fm_end}: the runtime backs only that much work memory",
                            end=t.end, backed=fm_end)
        if t.region == "zero_copy" and t.end > a.zero_copy_memory_size:
            yield violation(f"tensor {t.name!r}", f"ends at zero_copy+{t.end}, past zero_copy_memory_size="
                            f"{a.zero_copy_memory_size}", end=t.end, zero_copy_memory_size=a.zero_copy_memory_size)
    for name, basic in sorted(a.basic_offsets.items()):
        t = plan.tensor.get(name)
        if t is not None and t.region in base and basic != base[t.region] + t.offset:
            yield violation(f"tensor {name!r}", f"its basic offset attribute is {basic}, but it sits at "
                            f"{t.region}+{t.offset} = {base[t.region] + t.offset} of the work memory",
                            basic_offset=basic, expected=base[t.region] + t.offset)
    for name, flag in sorted(a.is_zero_copy_block.items()):
        t = plan.tensor.get(name)
        if t is not None and flag != t.zero_copy:
            yield violation(f"tensor {name!r}", f"_is_zero_copy_block={flag}, but the tensor is placed with "
                            f"zero_copy={t.zero_copy} in region {t.region!r}", attribute=flag)


IO_ATTRIBUTES = Invariant(
    id="LAYOUT-IO-ATTRIBUTES",
    title="The model attributes the runtime reads agree with the placements",
    statement="With memory_size and zero_copy_memory_size the model attributes: every feature-map tensor ends "
              "at or before memory_size - zero_copy_memory_size; every zero-copy tensor ends within "
              "zero_copy_memory_size of the zero-copy region's start; every graph I/O's basic offset attribute "
              "is where it sits in the work memory (the feature map at 0, the zero-copy region after it); and "
              "a graph input's _is_zero_copy_block attribute is true exactly when it is placed zero copy.",
    rationale="The runtime never sees the planner's blocks: it backs memory_size - zero_copy_memory_size bytes of "
              "work memory (a user work buffer needs no more), treats every address past it as model I/O, finds "
              "each I/O at its basic offset, and under reuseZeroCopyMemory copies every input whose "
              "_is_zero_copy_block is false. An attribute that disagrees with the layout makes the runtime "
              "back too little memory, refresh the wrong bytes, or copy where it should not.",
    ge_source="compiler/graph/build/memory/graph_mem_assigner.cc (GraphMemoryAssigner::AssignZeroCopyMemory); "
              "compiler/graph/passes/memory_conflict/set_input_output_offset_pass.cc (SetInputOutputOffsetPass::Run); "
              "runtime/v1/graph/load/model_manager/davinci_model.cc (InitFeatureMapAndP2PMem, InitInputZeroCopy)",
    applies_to="plan", concern="layout", predicate=lambda plan: _io_attributes(plan) if plan.attributes else (),
    precondition=lambda plan: plan.attributes is not None and any(t.region in ("feature_map", "zero_copy")
                                                                   for t in plan.tensors),
    ge_only=True,
)


# -- LAYOUT-INPUTS-SORTED ---------------------------------------------------------------------

def _input_blocks(plan: PlanObservation):
    inputs = set(plan.graph_inputs)
    out = []
    for b in plan.blocks:
        members = [n for n in b.tensors if n in inputs]
        if b.zero_copy and members:
            out.append((b, plan.tensor[members[0]].size))
    return sorted(out, key=lambda bs: bs[0].offset)


def _inputs_sorted(plan: PlanObservation):
    ins = _input_blocks(plan)
    if not ins:
        return
    in_ids = {b.id for b, _ in ins}
    outs_end = max((b.end for b in plan.blocks if b.zero_copy and b.id not in in_ids), default=0)
    if ins[0][0].offset < outs_end:
        yield violation(f"block {ins[0][0].id!r}", f"graph-input block starts at {ins[0][0].offset}, before the "
                        f"end of the zero-copy output blocks ({outs_end})", output_blocks_end=outs_end)
    for (a, sa), (b, sb) in zip(ins, ins[1:]):
        if b.offset != a.end:
            yield violation(f"block {b.id!r}", f"graph-input block starts at {b.offset}, but the previous input "
                            f"block {a.id!r} ends at {a.end}: input blocks must be contiguous")
        if sb < sa:
            yield violation(f"block {b.id!r}", f"holds an input of {sb} bytes after block {a.id!r} with "
                            f"{sa} bytes: input blocks must be sorted by ascending input size")


INPUTS_SORTED = Invariant(
    id="LAYOUT-INPUTS-SORTED",
    title="Graph-input blocks are contiguous, last, and sorted by size",
    statement="In the zero-copy region, the blocks holding graph inputs come after every other zero-copy "
              "block, are contiguous, and are in ascending order of the input's size (ties in any order).",
    rationale="GE places zero-copy output blocks first and then the graph-input blocks sorted by their raw "
              "size, so that small inputs copied to the model (when zero copy cannot be used) are adjacent and "
              "can be merged into one host-to-device copy. std::sort is unstable, so equal sizes may come in "
              "any order.",
    ge_source=GE_MEM + "graph_mem_assigner.cc (AssignZeroCopyMemory, pass B)",
    applies_to="plan", concern="layout", predicate=_inputs_sorted,
    precondition=lambda plan: len({size for _, size in _input_blocks(plan)}) >= 2,
    ge_only=True,
)


# -- LAYOUT-ALIAS-SHARES-ROOT -----------------------------------------------------------------

def _alias_shares_root(plan: PlanObservation):
    for t in plan.tensors:
        if t.alias_of is None:
            continue
        root = plan.tensor[plan.root(t.name)]
        inside = t.region == root.region and root.offset <= t.offset and t.end <= root.end
        if not inside:
            yield violation(f"tensor {t.name!r}", f"aliases {root.name!r} but sits at [{t.offset}, {t.end}) of "
                            f"{t.region!r}, outside the root's [{root.offset}, {root.end}) of {root.region!r}",
                            root=root.name)
        elif t.block is not None and root.block is not None and t.block != root.block:
            yield violation(f"tensor {t.name!r}", f"aliases {root.name!r} but is in block {t.block!r}, "
                            f"the root is in block {root.block!r}", root=root.name)


ALIAS_SHARES_ROOT = Invariant(
    id="LAYOUT-ALIAS-SHARES-ROOT",
    title="Aliases share their root's memory",
    statement="A tensor with alias_of (a view, a ref or in-place output) lies inside the memory of the root "
              "of its alias chain: same region, inside the root's byte range, and in the root's block.",
    rationale="GE plans one block per symbol (the set of anchors that must share a buffer) and gives ref "
              "outputs their input's offset; a view that does not sit in its root's memory reads stale data. "
              "The non-overlap check treats root and aliases as one piece of memory, which is sound only if "
              "this holds.",
    ge_source=GE_MEM + "block_mem_assigner.cc (ApplyOutMemory, IsSymbolExist); graph_mem_assigner.cc "
              "(AssignReferenceMemory)",
    applies_to="plan", concern="layout", predicate=_alias_shares_root,
    precondition=lambda plan: any(t.alias_of is not None for t in plan.tensors),
)


# -- LAYOUT-LIFETIME-COVERS-USES --------------------------------------------------------------

def _lifetime_covers_uses(plan: PlanObservation):
    end = len(plan.order) - 1
    for name, steps in sorted(plan.consumers.items()):
        t = plan.tensor[name]
        late = [s for s in steps if not t.first <= s <= t.last]
        if late:
            yield violation(f"tensor {name!r}", f"is read at step(s) {late} outside its lifetime "
                            f"{t.first}..{t.last}", steps=late)
    hull = {f.root: f for f in families(plan)}
    for name in plan.graph_outputs:
        f = hull[plan.root(name)]
        if f.last < end:
            yield violation(f"tensor {name!r}", f"is a graph output but its memory ({f.root!r} and its aliases) is "
                            f"only kept until step {f.last}, not to the last step {end}", last_step=end)


LIFETIME_COVERS_USES = Invariant(
    id="LAYOUT-LIFETIME-COVERS-USES",
    title="A tensor's lifetime covers every read of it",
    statement="Every step that reads a tensor (consumers) lies within [first, last], and the memory of every "
              "graph output (its root and the root's aliases together) lives to the last step.",
    rationale="Non-overlap is only as good as the lifetimes it is checked against: a lifetime that ends before "
              "the last read lets the planner hand the memory to another tensor too early. The spec recomputes "
              "this from the consumer steps, as tinygrad's planner test recomputes lifetimes independently. A "
              "graph output that is a view or an in-place result keeps its root's memory alive through the "
              "family's lifetime (the hull of its members'), so the root's own lifetime need not be widened.",
    ge_source=GE_MEM + "block_mem_assigner.cc (ReleaseMemory, ref_count_, kMaxLifeTime for graph outputs)",
    applies_to="plan", concern="layout", predicate=_lifetime_covers_uses,
    precondition=lambda plan: bool(plan.consumers) or bool(plan.graph_outputs),
)


# -- LAYOUT-LIFETIME-COVERS-WRITES ------------------------------------------------------------

def _write_steps(plan: PlanObservation) -> dict[str, set[int]]:
    """The steps that write each tensor: the plan's ``writes`` and the step of its producer node."""
    at = {n: i for i, n in enumerate(plan.order)}
    out = {name: set(steps) for name, steps in plan.writes.items()}
    for name, node in plan.producers.items():
        out.setdefault(name, set()).add(at[node])
    return out


def _lifetime_covers_writes(plan: PlanObservation):
    for name, steps in sorted((n, sorted(s)) for n, s in _write_steps(plan).items()):
        t = plan.tensor[name]
        early = [s for s in steps if not t.first <= s <= t.last]
        if early:
            yield violation(f"tensor {name!r}", f"is written at step(s) {early} outside its lifetime "
                            f"{t.first}..{t.last}", steps=early)


LIFETIME_COVERS_WRITES = Invariant(
    id="LAYOUT-LIFETIME-COVERS-WRITES",
    title="A tensor's lifetime covers every write of it",
    statement="Every step that writes a tensor (writes: its producer, an in-place update; and the step of "
              "its producer node, producers) lies within [first, last].",
    rationale="A planner that starts a lifetime at the first read instead of the write (or forgets an op that "
              "writes its output early, or a scratch tensor written before its consumer runs) lets another "
              "tensor alive at the write step share the bytes, and the write clobbers it. Reads alone do not "
              "show this: the clobbered tensor is read correctly planned, just with wrong data. The spec takes "
              "the write steps from the program's own op list, never from the planner's lifetimes (the bug "
              "class of ONNX Runtime's pull request 21019 and TFLite Micro's issue 712).",
    ge_source=GE_MEM + "block_mem_assigner.cc (ApplyMemory at the producing node: a life starts at its "
              "node's topological index)",
    applies_to="plan", concern="layout", predicate=_lifetime_covers_writes,
    precondition=lambda plan: bool(plan.writes) or bool(plan.producers),
)


# -- LAYOUT-ARENA-ALIGN -----------------------------------------------------------------------

def _aligned_arenas(plan: PlanObservation) -> dict[str, int]:
    return {name: a.alignment for name, a in plan.arenas.items() if a.alignment > 1}


def _arena_align(plan: PlanObservation):
    aligned = _aligned_arenas(plan)
    for t in plan.tensors:
        g = aligned.get(t.region)
        if g and t.alias_of is None and t.size > 0 and t.offset % g:
            yield violation(f"tensor {t.name!r}", f"starts at offset {t.offset} of arena {t.region!r}, not a "
                            f"multiple of the arena's alignment {g}", alignment=g, arena=t.region)


ARENA_ALIGN = Invariant(
    id="LAYOUT-ARENA-ALIGN",
    title="Tensors start at their arena's alignment",
    statement="In every declared arena with an alignment A > 1, every tensor that owns its memory (no alias_of) "
              "and has bytes starts at a multiple of A.",
    rationale="Other planners align offsets only (XLA's CPU backend to 64 bytes, ExecuTorch's memory planner "
              "to its alignment argument), not sizes; a kernel handed a misaligned pointer faults or silently "
              "takes a slow path. Views and in-place results start wherever their root puts them. GE's plans "
              "are judged by LAYOUT-ALIGN instead, which also rounds sizes.",
    ge_source=GE_MEM + "mem_reuse_strategy.cc (MemReuseUtils::AlignMemOffset): GE's own form of the rule",
    applies_to="plan", concern="layout", predicate=_arena_align,
    precondition=lambda plan: any(t.region in _aligned_arenas(plan) and t.alias_of is None for t in plan.tensors),
)


# -- LAYOUT-IN-PLACE-READS -------------------------------------------------------------------

def _in_place_reads(plan: PlanObservation):
    for s in plan.in_place:
        root = plan.root(s.tensor)
        for r in s.reads:
            if r.to == r.lo:
                continue
            for w in s.writes:
                lo, hi = max(r.lo, w.lo), min(r.hi, w.hi)
                if lo < hi:
                    yield violation(
                        f"tensor {s.tensor!r}",
                        f"is computed at step {s.step} in place over {root!r}, and that step reads bytes [{r.lo}, "
                        f"{r.hi}) into [{r.to}, {r.to + r.hi - r.lo}) while it writes [{w.lo}, {w.hi}): bytes "
                        f"[{lo}, {hi}) are read at another position than they are written, so the result depends "
                        "on the order the kernel visits them in", step=s.step, root=root, read=[r.lo, r.hi],
                        to=r.to, written=[w.lo, w.hi])
                    break


IN_PLACE_READS = Invariant(
    id="LAYOUT-IN-PLACE-READS",
    title="A step computing in place reads its root only where it writes it",
    statement="When a step computes a tensor in the bytes of its root (in_place), every range of the root it "
              "reads either lies outside every range the step writes or is read element by element (its bytes "
              "go to the same offsets, to = lo).",
    rationale="Sharing an operand's buffer with the output is safe only if no element is overwritten before "
              "every read of it: an elementwise update reads each element exactly where it writes it, but a "
              "shifted copy (out[i + 1] = in[i]) reads bytes the same loop has already written unless it "
              "happens to run backwards. The plan, not the kernel, must rule that out; non-overlap cannot, "
              "since root and result are one family by design. This is the class of openxla/xla#49176, where "
              "an in-place dynamic-update-slice fusion reads a shifted slice of its own operand.",
    ge_source=GE_MEM + "block_mem_assigner.cc (ref and in-place outputs reuse their input's block only for ops "
              "that declare it, REF_VAR_SRC_VAR_NAME and the op's reuse-input attribute): GE's form of the rule",
    applies_to="plan", concern="layout", predicate=_in_place_reads,
    precondition=lambda plan: any(r.to != r.lo for s in plan.in_place for r in s.reads),
)


# -- LAYOUT-LOWER-BOUND -----------------------------------------------------------------------

def _live_peak(plan: PlanObservation, fams) -> list[int]:
    live = [0] * (len(plan.order) + 1)
    for f in fams:
        size = plan.tensor[f.root].aligned_size
        live[f.first] += size
        live[f.last + 1] -= size
    total, out = 0, []
    for d in live[:-1]:
        total += d
        out.append(total)
    return out


def _choices(plan: PlanObservation, root: str) -> list[tuple[str, str]]:
    """The (group, branch) choices a root runs under: dynamic batches count as one group."""
    out = [("batch labels", plan.batch_labels[root])] if plan.batch_labels.get(root) else []
    for g in plan.exclusive_groups:
        out += [(g.name, label) for label, names in g.branches.items() if root in names]
    return out


def arena_peak(plan: PlanObservation, region: str) -> int:
    """Max over steps of the summed aligned sizes of the memory live in ``region`` (aliases counted once),
    in the heaviest execution: at each step each choice (dynamic batches, an exclusive group) adds only
    its heaviest branch, as the branches of a choice never run together. A root under several choices
    at once counts in none (it is live only where all of them agree, which this bound does not follow),
    so the result stays a lower bound."""
    base, by_branch = [], {}
    for f in families(plan):
        if f.region != region:
            continue
        choices = _choices(plan, f.root)
        if not choices:
            base.append(f)
        elif len(choices) == 1:
            by_branch.setdefault(choices[0], []).append(f)
    steps = _live_peak(plan, base)
    groups: dict[str, list[list[int]]] = {}
    for (group, _), fs in by_branch.items():
        groups.setdefault(group, []).append(_live_peak(plan, fs))
    for peaks in groups.values():
        steps = [s + max(p[i] for p in peaks) for i, s in enumerate(steps)]
    return max(steps, default=0)


def activation_arenas(plan: PlanObservation) -> list[str]:
    """The reused arenas, in name order: GE's feature map, or every declared arena of kind activations."""
    return sorted(r for r in {t.region for t in plan.tensors} | set(plan.regions)
                  if getattr(plan.arena(r), "kind", "") == "activations")


def recompute_lower_bound(plan: PlanObservation) -> int:
    """The sum over the activation arenas of their peaks (:func:`arena_peak`)."""
    return sum(arena_peak(plan, r) for r in activation_arenas(plan))


def _lower_bound(plan: PlanObservation):
    arenas = activation_arenas(plan)
    peaks = {r: arena_peak(plan, r) for r in arenas}
    for r in arenas:
        size = plan.regions.get(r, 0)
        if size < peaks[r]:
            yield violation(f"region {r!r}", f"is {size} bytes, below the {peaks[r]} bytes live in it at its peak: "
                            "some live tensors must overlap", size=size, peak=peaks[r])
    if plan.lower_bound is None:
        return
    lb, total = sum(peaks.values()), sum(plan.regions.get(r, 0) for r in arenas)
    if plan.lower_bound < lb:
        yield violation("lower_bound", f"the plan reports lower_bound={plan.lower_bound}, but the live "
                        f"{' + '.join(repr(r) for r in arenas)} bytes already peak at {lb}",
                        reported=plan.lower_bound, recomputed=lb)
    elif total < plan.lower_bound:
        where = f"region {arenas[0]!r}" if len(arenas) == 1 else " + ".join(f"region {r!r}" for r in arenas)
        yield violation(where, f"{'is' if len(arenas) == 1 else 'are'} {total} bytes, below the reported lower "
                        f"bound {plan.lower_bound}: if the bound holds, some live tensors must overlap",
                        reported=plan.lower_bound, size=total)


LOWER_BOUND = Invariant(
    id="LAYOUT-LOWER-BOUND",
    title="The reported lower bound is a real bound, and the reused memory is no smaller",
    statement="Each activation arena (GE: the feature map) is at least its peak, the maximum over steps of "
              "the summed aligned sizes of its memory live at that step (aliases counted once; of the branches "
              "of a dynamic batch or an exclusive group only the heaviest); and where the plan reports a "
              "lower_bound: the sum of those peaks <= lower_bound <= the sum of those arenas' sizes.",
    rationale="The lower bound is how a plan's quality is judged (arena / LB); a planner that under-reports it "
              "flatters itself, and an arena below its live bytes is proof of an overlap. For interval "
              "lifetimes the plain bound equals the heaviest clique, so one sorted sweep computes it. A planner "
              "may report a tighter (higher) bound that accounts for its rules, e.g. a continuous group placed "
              "whole over its joint lifetime; the claim allows that and only requires it to stay a bound the "
              "plan itself meets.",
    ge_source="the max-live lower bound of dynamic storage allocation (docs/packing.md); " + GE_MEM + "hybrid_mem_assigner.cc (planner score); "
              "dynamic_batch_mem_assigner.cc (batches overlap)",
    applies_to="plan", concern="layout", predicate=_lower_bound,
    precondition=lambda plan: bool(activation_arenas(plan)) and any(t.region in activation_arenas(plan)
                                                                    for t in plan.tensors),
)


INVARIANTS = (NO_OVERLAP, ALIGN, TENSOR_SIZE, REGION_COVER, IO_ATTRIBUTES, INPUTS_SORTED, ALIAS_SHARES_ROOT,
              LIFETIME_COVERS_USES, LIFETIME_COVERS_WRITES, ARENA_ALIGN, IN_PLACE_READS, LOWER_BOUND)
