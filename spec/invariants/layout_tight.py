"""Where GE's rules fix a number, not only a bound: the work memory packed from offset 0, with no spare bytes.

The safety claims (LAYOUT-NO-OVERLAP, LAYOUT-REGION-COVER, ...) hold for any layout that is merely
large enough: a feature map that starts 512 bytes in, a zero-copy region one block longer than its
blocks, a model attribute that asks for more memory than the layout uses. GE leaves no such room.
``ResizeMemoryBlocks`` lays the feature-map blocks out back to back from the pool's offset 0, atomic
outputs follow at the running end (``ReAssignAtomicMemory``), and ``AssignZeroCopyMemory`` places
each zero-copy block, sized by ``MemoryBlock::Resize``, at the running end, so that region is exactly
the sum of its blocks; ``BuildModelDefForMem`` then writes the pool's end as ``memory_size`` and the
zero-copy region's size as ``zero_copy_memory_size``. These claims recompute those numbers from the
transcribed blocks and tensors and the spec's granularities (spec/capabilities.py), never from the
planner's region sizes, and apply to plans in GE's terms only.

The weight region is not judged here: GE places the first weight at ``kWeightsStartOffset`` (512,
``compiler/graph/build/model_builder.cc``, the ``ModelBuilder`` constructor and
``AdjustConstWeightSize``), where zcspec starts at 0 (docs/ge-deviations.md, row P21).
"""
from __future__ import annotations

from zcspec.spec.capabilities import granularities
from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._util import GE_MEM, align_up
from zcspec.spec.observables.plan import PlanObservation

FM, ZC = "feature_map", "zero_copy"
MODEL_BUILDER = "compiler/graph/build/model_builder.cc"


def _blocks(plan: PlanObservation, region: str):
    return sorted((b for b in plan.blocks if b.region == region), key=lambda b: (b.offset, b.end, str(b.id)))


def feature_map_bytes(plan: PlanObservation) -> int:
    """The feature map as GE's layout makes it from these blocks: the bytes they cover (laid out from 0 with
    no gap, GE's feature map ends there)."""
    covered, end = 0, 0
    for b in _blocks(plan, FM):
        covered += max(0, b.end - max(b.offset, end))
        end = max(end, b.end)
    return covered


def zero_copy_sum(plan: PlanObservation) -> int:
    """The zero-copy region as GE's AssignZeroCopyMemory makes it: the sum of its blocks' sizes."""
    return sum(b.size for b in plan.blocks if b.region == ZC)


def _feature_map_packed(plan: PlanObservation):
    """The feature-map blocks (children inside their parents, atomic blocks after them) cover [0, end) with
    no byte that no block uses, and the region is exactly that long."""
    covered = 0
    for b in _blocks(plan, FM):
        if b.offset > covered:
            yield violation(f"block {b.id!r}", f"starts at feature_map+{b.offset}, but the blocks before it end at "
                            f"{covered}: GE lays the feature-map blocks out back to back from offset 0, leaving no "
                            f"gap of {b.offset - covered} bytes", offset=b.offset, expected=covered)
        covered = max(covered, b.end)
    size = plan.regions.get(FM, 0)
    if size != covered:
        yield violation(f"region {FM!r}", f"is {size} bytes, but its blocks end at {covered}: GE's feature map ends "
                        f"where its last block ends", size=size, expected=covered)


def _zero_copy_packed(plan: PlanObservation):
    """Each zero-copy block is its members' bytes rounded to the block granularity, the blocks lie back to
    back from offset 0, and the region is their sum."""
    grain = granularities(plan)[0].get(ZC, 1)
    end = 0
    for b in _blocks(plan, ZC):
        members = [plan.tensor[n] for n in b.tensors if n in plan.tensor]
        need = align_up(max((t.end for t in members), default=b.offset) - b.offset, grain)
        if b.size != need:
            yield violation(f"block {b.id!r}", f"is {b.size} bytes, but its tensors need {need} (their bytes "
                            f"rounded to {grain}): GE sizes a zero-copy block by MemoryBlock::Resize, with no "
                            f"spare unit", size=b.size, expected=need)
        if b.offset != end:
            yield violation(f"block {b.id!r}", f"starts at zero_copy+{b.offset}, but the zero-copy blocks before it "
                            f"end at {end}: AssignZeroCopyMemory places each block where the previous one ends",
                            offset=b.offset, expected=end)
        end = max(end, b.end)
    size = plan.regions.get(ZC, 0)
    if size != zero_copy_sum(plan):
        yield violation(f"region {ZC!r}", f"is {size} bytes, but its blocks add up to {zero_copy_sum(plan)}: "
                        f"GE's zero-copy memory size is the sum of its blocks", size=size,
                        expected=zero_copy_sum(plan))


def _regions_packed(plan: PlanObservation):
    yield from _feature_map_packed(plan)
    yield from _zero_copy_packed(plan)


def _ge_blocks(plan: PlanObservation) -> bool:
    return bool(plan.blocks) and any(t.region in (FM, ZC) for t in plan.tensors)


REGIONS_PACKED = Invariant(
    id="LAYOUT-REGIONS-PACKED",
    title="The feature map and the zero-copy region are packed from offset 0 with no spare bytes",
    statement="The feature-map blocks cover [0, the feature map's size) with no byte that no block uses, and the "
              "region ends where its last block ends; every zero-copy block is the bytes of its tensors (from the "
              "block's start to the last tensor's end) rounded up to the zero-copy block granularity (spec/"
              "capabilities.py), the zero-copy blocks lie back to back from offset 0, and the zero-copy region is "
              "the sum of their sizes.",
    rationale="A layout that leaves a gap, or a block or region one unit larger than its tensors, is still safe, "
              "so no safety claim sees it; but it is not GE's layout, and every byte of it is work memory the "
              "runtime allocates per model (or the caller must provide under reuseZeroCopyMemory) for nothing. "
              "GE's numbers are fixed: ResizeMemoryBlocks advances the pool's running offset by each block's "
              "Resize'd size from 0, ReAssignAtomicMemory continues at the running end, and AssignZeroCopyMemory "
              "places the output blocks, then the input blocks, each at the running end, so its size is end - "
              "start.",
    ge_source=GE_MEM + "block_mem_assigner.cc (BlockMemAssigner::ResizeMemoryBlocks, MemoryBlock::Resize); " +
              GE_MEM + "graph_mem_assigner.cc (GraphMemoryAssigner::ReAssignAtomicMemory, "
              "GraphMemoryAssigner::AssignZeroCopyMemory)",
    applies_to="plan", concern="layout_tight", predicate=_regions_packed, precondition=_ge_blocks, ge_only=True,
)


def _size_attributes(plan: PlanObservation):
    a = plan.attributes
    if a is None:
        return
    fm, zc = feature_map_bytes(plan), zero_copy_sum(plan)
    if a.zero_copy_memory_size != zc:
        yield violation("attribute zero_copy_memory_size", f"is {a.zero_copy_memory_size}, but the zero-copy blocks "
                        f"add up to {zc}", attribute=a.zero_copy_memory_size, expected=zc)
    if a.memory_size != fm + zc:
        yield violation("attribute memory_size", f"is {a.memory_size}, but the feature-map blocks cover {fm} bytes "
                        f"and the zero-copy blocks add {zc}: GE writes the pool's end, {fm + zc}",
                        attribute=a.memory_size, expected=fm + zc)


SIZE_ATTRIBUTES = Invariant(
    id="LAYOUT-SIZE-ATTRIBUTES",
    title="memory_size and zero_copy_memory_size are what the blocks add up to",
    statement="The model attribute zero_copy_memory_size equals the sum of the zero-copy blocks' sizes, and "
              "memory_size equals the bytes the feature-map blocks cover plus that sum.",
    rationale="The runtime allocates memory_size (or memory_size - zero_copy_memory_size under "
              "reuseZeroCopyMemory) and takes the last zero_copy_memory_size bytes for the model's I/O; these two "
              "numbers are all it knows of the layout. GE writes the HBM pool's end, which AssignZeroCopyMemory "
              "left past the zero-copy blocks, and the zero-copy region's size: an attribute larger than the "
              "blocks makes every load allocate memory no tensor uses, and moves the I/O region's start.",
    ge_source=MODEL_BUILDER + " (ModelBuilder::BuildModelDefForMem, which sets the model attributes "
              "memory_size and zero_copy_memory_size); " + GE_MEM + "graph_mem_assigner.cc "
              "(GraphMemoryAssigner::AssignZeroCopyMemory: zero_copy_mem_size = end - start)",
    applies_to="plan", concern="layout_tight", predicate=_size_attributes,
    precondition=lambda plan: plan.attributes is not None and _ge_blocks(plan), ge_only=True,
)

INVARIANTS = (REGIONS_PACKED, SIZE_ATTRIBUTES)
