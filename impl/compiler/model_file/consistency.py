"""Cross-checks between the parts of a loaded model file: the plan must agree with the tasks, the I/O
table, the weights, the options and the regions, and its figures must be recomputable.

A crafted file that changes a size or offset in one place but not in the others is rejected here,
with the field named. Every expectation is recomputed by the rule's one home (the lower bound by
``memory.bounds``, the I/O table by ``tasks.taskgen.io_table``), so the loader and the compiler can
never disagree about a file the compiler wrote. Fields with no redundancy at all (a tensor's
lifetime, say) cannot be checked by any loader; the checksum covers accidental damage there
(docs/model-format.md).
"""
from __future__ import annotations

from types import SimpleNamespace

from zcspec.impl.compiler.memory import bounds
from zcspec.impl.compiler.memory.plan_types import REGIONS, MemoryPlan
from zcspec.impl.compiler.memory.sizes import alias_sizes
from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.tasks.taskgen import io_table

MAX_SIZE = 2**62  # any size or offset beyond this is an overflow attempt


def _fail(where: str, why: str):
    raise ModelFormatError(where, why)


def check_regions(plan: MemoryPlan) -> None:
    """Every region known and sized sensibly; checked before any slot is compared with a region."""
    for name, size in plan.regions.items():
        if name not in REGIONS:
            _fail(f"plan.regions.{name}", f"unknown region; known: {', '.join(REGIONS)}")
        if not 0 <= size <= MAX_SIZE:
            _fail(f"plan.regions.{name}", f"{size!r} is not an integer in [0, {MAX_SIZE}]")
    missing = [r for r in REGIONS if r not in plan.regions]
    if missing:
        _fail("plan.regions", f"missing region(s) {missing}")


def _options(plan: MemoryPlan, options: CompileOptions) -> None:
    try:
        expected = options.plan_options()
    except ValueError as e:  # an unknown SoC or strategy: the options name it
        _fail("options", str(e))
    if plan.options != expected:
        _fail("plan.options", f"{plan.options!r} are not what the compile options {options!r} give")
    if plan.strategy != plan.options.strategy:
        _fail("plan.strategy", f"{plan.strategy!r} differs from plan.options.strategy {plan.options.strategy!r}")


def _tensors(plan: MemoryPlan) -> dict:
    order, align = plan.order, plan.options.block_align
    if len(set(order)) != len(order):
        _fail("plan.order", "node names must be unique")
    tensors, blocks = {}, {b.id: b for b in plan.blocks}
    for i, t in enumerate(plan.tensors):
        where = f"plan.tensors[{i}] ({t.name!r})"
        if t.name in tensors:
            _fail(where, "duplicate tensor")
        if t.region not in plan.regions or t.offset < 0 or t.offset + t.size > plan.regions[t.region]:
            _fail(where, f"tensor lies outside region {t.region!r}")
        if not (0 <= t.first <= t.last < len(order)):
            _fail(where, f"lifetime [{t.first}, {t.last}] outside the {len(order)} steps")
        if t.alias_of is None and (not (0 < t.size <= t.aligned_size < t.size + align) or t.aligned_size % align):
            _fail(where, f"size {t.size} / aligned_size {t.aligned_size} inconsistent with {align}-byte blocks")
        b = blocks.get(t.block)
        if b is None or b.region != t.region:
            _fail(where, f"block {t.block!r} missing or in another region")
        tensors[t.name] = t
    for i, t in enumerate(plan.tensors):
        if t.alias_of is None:
            continue
        root = tensors.get(t.alias_of)
        if root is None:
            _fail(f"plan.tensors[{i}] ({t.name!r})", f"alias_of {t.alias_of!r} is not a planned tensor")
        if t.region != root.region or t.offset < root.offset:
            _fail(f"plan.tensors[{i}] ({t.name!r})", f"lies outside its root {root.name!r}")
        # An alias's sizes are its root's memory, nothing of its own (sizes.alias_sizes); a file can only
        # repeat them. The planner clips from the tensor's own GE size, which the alias's raw bytes bound.
        if (t.size, t.aligned_size) != alias_sizes(t.size, t.offset, root.offset, root.size, root.aligned_size,
                                                   plan.options) or t.size <= 0:
            _fail(f"plan.tensors[{i}] ({t.name!r})", f"size {t.size} / aligned_size {t.aligned_size} are not its "
                                                     f"root {root.name!r}'s memory from offset {t.offset}")
    members: dict[int, list[str]] = {}
    for t in plan.tensors:
        members.setdefault(t.block, []).append(t.name)
    if len(blocks) != len(plan.blocks):
        _fail("plan.blocks", "block ids must be unique")
    for region in ("weight", "fixed"):   # packed in order, whole blocks each (plan._fixed_blocks)
        end = max((t.offset + t.aligned_size for t in plan.tensors if t.region == region and t.alias_of is None),
                  default=0)
        if plan.regions[region] != end:
            _fail(f"plan.regions.{region}", f"{plan.regions[region]} bytes, but its tensors end at {end}")
    for i, b in enumerate(plan.blocks):
        parent = blocks.get(b.parent) if b.parent is not None else None
        if b.parent is not None and (parent is None or parent.region != b.region or b.parent == b.id):
            _fail(f"plan.blocks[{i}]", f"parent {b.parent!r} is not another block of region {b.region!r}")
        if b.size < 0 or list(b.tensors) != members.get(b.id, []):
            _fail(f"plan.blocks[{i}]", f"size {b.size} / tensors {list(b.tensors)} disagree with the tensors placed "
                                       f"in block {b.id} ({members.get(b.id, [])})")
        if b.offset < 0 or b.offset + b.size > plan.regions.get(b.region, -1):
            _fail(f"plan.blocks[{i}]", f"[{b.offset}, {b.offset + b.size}) outside region {b.region!r}")
        if b.region in ("feature_map", "zero_copy") and b.offset % align:
            _fail(f"plan.blocks[{i}]", f"block offset {b.offset} is not a multiple of {align}")
    return tensors


def _figures(plan: MemoryPlan) -> None:
    intervals = bounds.plan_intervals(plan.tensors)
    peak = bounds.lower_bound(intervals, len(plan.order))
    # The planner's bound may be tighter than the tensors' own: it counts what its rules reserve
    # (a continuous group whole over its joint lifetime, a no-reuse or cross-stream block kept for
    # the whole graph), which the file does not repeat. It must stay a bound the plan meets.
    if not peak <= plan.lower_bound <= plan.regions["feature_map"]:
        _fail("plan.lower_bound", f"{plan.lower_bound} is not between the tensors' peak live bytes {peak} and the "
                                  f"feature map's {plan.regions['feature_map']} bytes")
    if plan.naive != bounds.naive(intervals):
        _fail("plan.naive", f"{plan.naive} is not the sum of the feature-map tensors' aligned sizes")


def _attributes(plan: MemoryPlan, tasks) -> None:
    a, regions = plan.attributes, plan.regions
    if a.zero_copy_memory_size != regions["zero_copy"] or a.memory_size != regions["feature_map"] + regions["zero_copy"]:
        _fail("plan.attributes", "memory_size / zero_copy_memory_size disagree with the regions (ge-facts.md 3.2.6)")
    for role, attrs_, table in (("inputs", a.inputs, tasks.inputs), ("outputs", a.outputs, tasks.outputs)):
        if len(attrs_) != len(table):
            _fail(f"plan.attributes.{role}", f"{len(attrs_)} entries for {len(table)} model {role}")
        for attr, io in zip(attrs_, table):
            p = plan.tensor(io.tensor) if io.tensor in {t.name for t in plan.tensors} else None
            base = regions["feature_map"] if io.region == "zero_copy" else 0
            if p is None or (attr.tensor, attr.basic_offset, attr.is_zero_copy_block) != (
                    io.tensor, base + io.offset, p.zero_copy):
                _fail(f"plan.attributes.{role}[{io.index}]", f"disagrees with the I/O table entry for {io.tensor!r}")


def _io(plan: MemoryPlan, tensors: dict, tasks) -> None:
    """Each I/O table must be exactly the one the compiler's rule gives for this plan."""
    for role, table in (("input", tasks.inputs), ("output", tasks.outputs)):
        for io in table:
            if io.tensor not in tensors:
                _fail(f"{role}s[{io.index}] ({io.tensor!r})", "is not a planned tensor")
        descs = [SimpleNamespace(nbytes=io.nbytes, shape=io.shape, dtype=io.dtype) for io in table]
        expected = io_table(plan, role, [io.tensor for io in table], descs)
        for io, want in zip(table, expected):
            if io != want:
                _fail(f"{role}s[{io.index}] ({io.tensor!r})", "disagrees with the plan's placement")


def check_consistency(plan: MemoryPlan, options: CompileOptions, tasks, weights) -> None:
    """ModelFormatError naming the field at fault if the parts of a model file disagree."""
    check_regions(plan)
    _options(plan, options)
    tensors = _tensors(plan)
    _figures(plan)
    _attributes(plan, tasks)
    steps = {n: i for i, n in enumerate(plan.order)}
    for task in tasks.tasks:
        if task.node not in steps:
            _fail(f"tasks[{task.index}]", f"node {task.node!r} is not in the plan's order")
        for j, s in enumerate(task.slots):
            t = tensors.get(s.tensor)
            if t is None or (t.region, t.offset) != (s.region, s.offset) or s.nbytes > t.size:
                _fail(f"tasks[{task.index}].slots[{j}] ({s.tensor!r})", "disagrees with the plan's placement")
            if t.region in ("feature_map", "zero_copy") and not t.first <= steps[task.node] <= t.last:
                _fail(f"plan.tensors ({t.name!r})", f"lifetime [{t.first}, {t.last}] misses step "
                                                    f"{steps[task.node]}, where task {task.index} uses it")
    _io(plan, tensors, tasks)
    for w in weights:
        t = tensors.get(w.name)
        if t is None or (t.region, t.offset) != ("weight", w.offset):
            _fail(f"weight {w.name!r}", "offset disagrees with the plan's placement")
