"""Layout: where tensors sit in the model's memory (applies to plans).

Each claim below is an :class:`Invariant`; its predicate recomputes what it
needs from the plan's placements (first/last, offsets, alias chains) and
never trusts the planner's own bookkeeping. The claims about lifetimes (reads, writes, in-place
steps) live in layout_lifetimes.py, sharing across streams in layout_streams.py (GE's hold on memory read across
streams in layout_stream_hold.py) and the lower bound in
layout_bound.py; ``INVARIANTS`` below
lists the whole concern in document order.
"""
from __future__ import annotations

from zcspec.spec.capabilities import GE_DEFAULT, TABLE, arena_alignment, granularities
from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._util import (GE_MEM, align_up, continuous_inputs, families, space_time_overlaps,
                                          time_overlapping_pairs)
from zcspec.spec.invariants.layout_bound import LOWER_BOUND
from zcspec.spec.invariants.layout_io import IO_ATTRIBUTES
from zcspec.spec.invariants.layout_lifetimes import IN_PLACE_READS, LIFETIME_COVERS_USES, LIFETIME_COVERS_WRITES
from zcspec.spec.invariants.layout_stream_hold import STREAM_HOLD
from zcspec.spec.invariants.layout_streams import STREAM_ORDER
from zcspec.spec.observables.plan import PlanObservation



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
    """(tensor, expected size, exact?, why) for every tensor whose raw bytes or set size are known and that owns
    its memory."""
    caps = TABLE.get(plan.soc, GE_DEFAULT)
    owners = _group_owners(plan)
    for t in plan.tensors:
        if (t.nbytes is None and t.set_size is None) or t.alias_of is not None \
                or t.region not in ("feature_map", "zero_copy"):
            continue
        if t.name in plan.workspaces:     # a kernel's scratch bytes are taken as it declares them
            yield t, t.nbytes, True, f"{t.nbytes} declared workspace bytes"
        elif t.set_size is not None:      # the graph sets the size: GE plans by it as is
            yield t, t.set_size, t.name not in owners, f"set size {t.set_size}"
        else:
            yield t, caps.tensor_size(t.nbytes), t.name not in owners, f"{t.nbytes} raw bytes"


def _tensor_size(plan: PlanObservation):
    for t, want, exact, why in _sized(plan):
        if t.size != want if exact else t.size < want:
            yield violation(f"tensor {t.name!r}", f"size={t.size} for {why}; expected "
                            f"{'' if exact else 'at least '}{want}", nbytes=t.nbytes, expected=want)


TENSOR_SIZE = Invariant(
    id="LAYOUT-TENSOR-SIZE",
    title="A tensor's size is GE's padded size of its raw bytes, or the size its graph sets",
    statement="Every tensor of the feature map or the zero-copy region that owns its memory has size = "
              "align(nbytes, tensor granularity) + padding (GE: align32(bytes) + 32; an empty tensor gets the "
              "padding), with the granularity and padding of the plan's SoC from the spec's capability table, "
              "or, when its graph sets its size (set_size), that size; "
              "a workspace's size is the byte count its node declares; the output of a NoPadding continuous "
              "node is at least that large (it spans its pieces).",
    rationale="Sizes decide everything downstream: the block a tensor asks for, the live bytes of the lower "
              "bound, the model's padded I/O size that runtime v1 compares user buffers against (user + 64 >= "
              "size). The spec recomputes the size from the tensor's shape and dtype instead of trusting the "
              "planner's figure, so a rounding slip (one unit too many or too few) shows at once. A size the "
              "graph sets (GE's TensorUtils::SetSize, as GE's memory tests set every size) is what GE plans by, "
              "read from the graph, not from the planner; a planner that sized such a tensor by its shape "
              "would hand it fewer bytes than it asked for.",
    ge_source="compiler/engines/nn_engine/utils/common/op_tensor_utils.cc (OpTensorUtils::CalibrateTensorSize); "
              "graph_metadef/graph/utils/tensor_size_utils.cc (TensorUtilsEx::GetTensorMemorySizeInBytesWithAutoPadding); "
              "compiler/graph/build/memory/mem_reuse_strategy.cc (MemReuseUtils::GetTensorSize)",
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
        elif t.offset + t.aligned_size > root.offset + root.aligned_size:
            yield violation(f"tensor {t.name!r}", f"aliases {root.name!r} but reserves [{t.offset}, "
                            f"{t.offset + t.aligned_size}) of {t.region!r} (aligned_size={t.aligned_size}), past "
                            f"the root's reserved [{root.offset}, {root.offset + root.aligned_size})", root=root.name)


ALIAS_SHARES_ROOT = Invariant(
    id="LAYOUT-ALIAS-SHARES-ROOT",
    title="Aliases share their root's memory",
    statement="A tensor with alias_of (a view, a ref or in-place output) lies inside the memory of the root "
              "of its alias chain: same region, inside the root's byte range, and in the root's block; the "
              "range it reports as reserved (offset + aligned_size) ends no later than the root's: an alias "
              "reserves nothing of its own.",
    rationale="GE plans one block per symbol (the set of anchors that must share a buffer) and gives ref "
              "outputs their input's offset; a view that does not sit in its root's memory reads stale data. "
              "The non-overlap check treats root and aliases as one piece of memory, which is sound only if "
              "this holds.",
    ge_source=GE_MEM + "block_mem_assigner.cc (ApplyOutMemory, IsSymbolExist); graph_mem_assigner.cc "
              "(AssignReferenceMemory)",
    applies_to="plan", concern="layout", predicate=_alias_shares_root,
    precondition=lambda plan: any(t.alias_of is not None for t in plan.tensors),
)


# -- LAYOUT-ARENA-ALIGN -----------------------------------------------------------------------

def _aligned_arenas(plan: PlanObservation) -> dict[str, int]:
    """Arena -> its alignment (> 1): its planner's documented one or more (spec/capabilities.py PLANNERS)."""
    return {name: g for name in plan.arenas if (g := arena_alignment(plan, name)) > 1}


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
              "and has bytes starts at a multiple of A. A is the larger of the arena's declared alignment and, when "
              "the plan names its planner, the offset alignment that planner documents (the spec's planner table: "
              "XLA 64, ExecuTorch 16, LiteRT 64, IREE 64; TVM aligns only its storages, not offsets in them).",
    rationale="Other planners align offsets only (XLA's CPU backend to 64 bytes, ExecuTorch's memory planner "
              "to its alignment argument), not sizes; a kernel handed a misaligned pointer faults or silently "
              "takes a slow path. Views and in-place results start wherever their root puts them. The alignment "
              "comes from the planner's own sources, not from the plan: a reader that declares 1 (IREE's and "
              "TVM's dumps name no alignment) or a plan file written by hand would otherwise exempt itself. GE's "
              "plans are judged by LAYOUT-ALIGN instead, which also rounds sizes.",
    ge_source=GE_MEM + "mem_reuse_strategy.cc (MemReuseUtils::AlignMemOffset): GE's own form of the rule",
    applies_to="plan", concern="layout", predicate=_arena_align,
    precondition=lambda plan: any(t.region in _aligned_arenas(plan) and t.alias_of is None for t in plan.tensors),
)



INVARIANTS = (NO_OVERLAP, STREAM_ORDER, STREAM_HOLD, ALIGN, TENSOR_SIZE, REGION_COVER, IO_ATTRIBUTES, INPUTS_SORTED, ALIAS_SHARES_ROOT,
              LIFETIME_COVERS_USES, LIFETIME_COVERS_WRITES, ARENA_ALIGN, IN_PLACE_READS, LOWER_BOUND)
