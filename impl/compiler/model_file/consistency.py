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
from zcspec.impl.compiler.memory import sizes
from zcspec.impl.compiler.memory.sizes import alias_sizes
from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.tasks.io_offsets import io_offsets
from zcspec.impl.compiler.tasks.tasklist import ZeroCopyRef
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
        if t.zero_copy != (t.region == "zero_copy"):
            _fail(f"{where}.zero_copy", f"{t.zero_copy}, but the tensor is in region {t.region!r} (zero-copy "
                                        f"tensors, and only they, are placed in the zero-copy region)")
        if t.alias_of == t.name:
            _fail(f"{where}.alias_of", "a tensor cannot alias itself")
        b = blocks.get(t.block)
        if b is None or b.region != t.region:
            _fail(where, f"block {t.block!r} missing or in another region")
        if not b.offset <= t.offset <= t.offset + t.size <= b.offset + b.size:
            _fail(where, f"[{t.offset}, {t.offset + t.size}) lies outside its block {b.id}'s "
                         f"[{b.offset}, {b.offset + b.size})")
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
        if parent is not None and not parent.offset <= b.offset <= b.offset + b.size <= parent.offset + parent.size:
            _fail(f"plan.blocks[{i}].parent", f"block {b.id} [{b.offset}, {b.offset + b.size}) lies outside its "
                                              f"parent {parent.id}'s [{parent.offset}, {parent.offset + parent.size})")
        if b.zero_copy != (b.region == "zero_copy"):
            _fail(f"plan.blocks[{i}].zero_copy", f"{b.zero_copy}, but the block is in region {b.region!r}")
        if b.size < 0 or list(b.tensors) != members.get(b.id, []):
            _fail(f"plan.blocks[{i}]", f"size {b.size} / tensors {list(b.tensors)} disagree with the tensors placed "
                                       f"in block {b.id} ({members.get(b.id, [])})")
        if b.offset < 0 or b.offset + b.size > plan.regions.get(b.region, -1):
            _fail(f"plan.blocks[{i}]", f"[{b.offset}, {b.offset + b.size}) outside region {b.region!r}")
        if b.region in ("feature_map", "zero_copy") and b.offset % align:
            _fail(f"plan.blocks[{i}]", f"block offset {b.offset} is not a multiple of {align}")
    _block_sizes(plan, tensors)
    return tensors


def _block_sizes(plan: MemoryPlan, tensors: dict) -> None:
    """A feature-map or zero-copy block is as large as what it holds, rounded to blocks: its tensors and
    its child blocks from its offset (layout.resize: the largest member, the stacked children or the
    widest batch, rounded up to ``block_align``; a child past the parent's end widens it)."""
    align, extent = plan.options.block_align, {}
    for b in plan.blocks:
        ends = [tensors[n].offset + tensors[n].size for n in b.tensors]
        extent[b.id] = max(ends, default=b.offset) - b.offset
    for b in plan.blocks:
        if b.parent is not None:
            parent = next(p for p in plan.blocks if p.id == b.parent)
            extent[parent.id] = max(extent[parent.id], b.offset + b.size - parent.offset)
    for i, b in enumerate(plan.blocks):
        if b.region in ("feature_map", "zero_copy") and b.size != sizes.align(extent[b.id], align):
            _fail(f"plan.blocks[{i}].size", f"{b.size}, but block {b.id} holds {extent[b.id]} bytes from its offset "
                                            f"(its tensors and child blocks), {sizes.align(extent[b.id], align)} "
                                            f"rounded to {align}-byte blocks")


def _tensor_sizes(plan: MemoryPlan, tensors: dict, tasks) -> None:
    """A root tensor that a task or the I/O table accesses is GE-sized from the bytes accessed
    (sizes.tensor_size): it is always accessed whole. A root with an alias elsewhere in it (a NoPadding
    concat, whose size is its pieces' raw bytes) is left to the alias checks: a slot may name it for the
    piece at its address."""
    used: dict[str, int] = {}
    for task in tasks.tasks:
        for s in task.slots:
            used[s.tensor] = max(used.get(s.tensor, 0), s.nbytes)
    for d in tasks.inputs + tasks.outputs:
        used[d.tensor] = max(used.get(d.tensor, 0), d.nbytes)
    pieces = {t.alias_of for t in plan.tensors if t.alias_of in tensors and t.offset != tensors[t.alias_of].offset}
    for i, t in enumerate(plan.tensors):
        if t.alias_of is None and t.name not in pieces and t.name in used and t.size != sizes.tensor_size(used[t.name], plan.options):
            _fail(f"plan.tensors[{i}] ({t.name!r}).size", f"{t.size}, but its tasks access {used[t.name]} bytes, "
                                                         f"which GE sizes {sizes.tensor_size(used[t.name], plan.options)}")


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
        _fail("plan.attributes", "memory_size / zero_copy_memory_size disagree with the regions "
                                 "(GE: model_builder.cc BuildModelDefForMem)")
    for role, attrs_, table in (("inputs", a.inputs, tasks.inputs), ("outputs", a.outputs, tasks.outputs)):
        if len(attrs_) != len(table):
            _fail(f"plan.attributes.{role}", f"{len(attrs_)} entries for {len(table)} model {role}")
        for attr, io in zip(attrs_, table):
            where = f"plan.attributes.{role}[{io.index}]"
            p = plan.tensor(io.tensor) if io.tensor in {t.name for t in plan.tensors} else None
            base = regions["feature_map"] if io.region == "zero_copy" else 0
            if p is None or (attr.tensor, attr.basic_offset, attr.is_zero_copy_block) != (
                    io.tensor, base + io.offset, p.zero_copy):
                _fail(where, f"disagrees with the I/O table entry for {io.tensor!r}")
            if attr.index != io.index:
                _fail(f"{where}.index", f"{attr.index!r}, but it is the I/O table's {role[:-1]} {io.index}")
            if attr.region != p.region:
                _fail(f"{where}.region", f"{attr.region!r}, but the plan places {io.tensor!r} in {p.region!r}")
            _relative_offsets(plan, attr, p, base, f"{where}.relative_offsets")
    # Each input is its own Data node; every output an input of the one NetOutput (plan._io_attributes).
    out_nodes, order = {x.node for x in a.outputs}, set(plan.order)
    if len(out_nodes) > 1 or not out_nodes <= order:
        _fail("plan.attributes.outputs", f"nodes {sorted(out_nodes)}: every output is an input of the one "
                                         f"NetOutput node of the plan's order")
    nodes = [x.node for x in a.inputs]
    for i, node in enumerate(nodes):
        why = ("is not in the plan's order" if node not in order else "is also an earlier input's Data node"
               if node in nodes[:i] else "is the outputs' NetOutput node" if node in out_nodes else None)
        if why:
            _fail(f"plan.attributes.inputs[{i}].node", f"{node!r} {why}")


def _relative_offsets(plan: MemoryPlan, attr, p, base: int, where: str) -> None:
    """GE's _zero_copy_relative_offset (set_input_output_offset_pass.cc `SetInputOutputOffsetPass::Run`): (0,)
    for a plain tensor, the pieces' offsets
    from the basic one for a no-padding concat's output. Which pieces there are is the graph's (a
    PhonyConcat runs no task, so the file never names its inputs); what the file does fix is that the
    first piece starts the tensor, the pieces ascend inside it and each is a tensor the plan places there."""
    rel = attr.relative_offsets
    if not rel or rel[0] != 0 or list(rel) != sorted(set(rel)) or not all(0 <= r < max(p.size, 1) for r in rel):
        _fail(where, f"{list(rel)!r}: must start at 0 and ascend inside {p.name!r}'s {p.size} bytes")
    starts = {t.offset for t in plan.tensors if t.region == p.region}
    for r in rel[1:]:
        if p.offset + r not in starts:
            _fail(where, f"piece at +{r} ({p.region}+{p.offset + r}) is no tensor the plan places there")


def _copied_inputs(tasks) -> dict[str, str]:
    """Tensor -> the model input MemcpyAddrAsync tasks copy into it, directly or through a chain of such
    copies: the only outputs whose caller's name is not their tensor's are such copies of a graph input
    the passes put before the NetOutput (the copy cannot take the input's name,
    graph_edit.insert_before_output; the I/O table keeps it, taskgen.generate_tasks). A chain arises when
    one pass's copy reads another's: an offline build's copy of a graph input that the conflict pass had
    already copied for a NoPadding concat."""
    inputs = {io.tensor for io in tasks.inputs}
    source = {}   # a copy's output -> its input
    for task in tasks.tasks:
        ins = [s.tensor for s in task.slots if s.role == "in"]
        if task.kind == "memcpy_addr" and len(ins) == 1:
            source.update((s.tensor, ins[0]) for s in task.slots if s.role == "out")
    out = {}
    for t in source:
        seen, s = {t}, source[t]
        while s not in inputs and s in source and s not in seen:   # a cycle of copies reaches no input
            seen.add(s)
            s = source[s]
        if s in inputs:
            out[t] = s
    return out


def _io(plan: MemoryPlan, tensors: dict, tasks) -> None:
    """Each I/O table must be exactly the one the compiler's rule gives for this plan: an input's name is its
    tensor's, an output's its tensor's or, for a copy of a model input, that input's."""
    copied = _copied_inputs(tasks)
    for role, table in (("input", tasks.inputs), ("output", tasks.outputs)):
        for io in table:
            if io.tensor not in tensors:
                _fail(f"{role}s[{io.index}] ({io.tensor!r})", "is not a planned tensor")
            allowed = {io.tensor} | ({copied[io.tensor]} if role == "output" and io.tensor in copied else set())
            if io.name not in allowed:
                _fail(f"{role}s[{io.index}].name", f"{io.name!r}, but {role} {io.index} can only be called "
                                                   f"{' or '.join(map(repr, sorted(allowed)))}")
        descs = [SimpleNamespace(nbytes=io.nbytes, shape=io.shape, dtype=io.dtype) for io in table]
        expected = io_table(plan, role, [io.tensor for io in table], descs, [io.name for io in table])
        for io, want in zip(table, expected):
            if io != want:
                _fail(f"{role}s[{io.index}] ({io.tensor!r})", "disagrees with the plan's placement")


def _zero_copy(plan: MemoryPlan, options: CompileOptions, tasks) -> None:
    """An HCCL task's zero-copy flags and the zero-copy table follow from the plan, the SoC and the I/O
    table (taskgen._tasks_of, taskgen.generate_tasks with io_offsets: the rules' one homes)."""
    soc = options.profile
    for task in tasks.tasks:
        if task.kind != "hccl":
            continue
        supported = task.op_type not in soc.hccl_no_zero_copy and soc.zero_copy
        for role, flags in (("in", task.zero_copy_in), ("out", task.zero_copy_out)):
            want = tuple(supported and plan.tensor(s.tensor).zero_copy for s in task.slots if s.role == role)
            if flags != want:
                _fail(f"tasks[{task.index}].zero_copy_{role}", f"{list(flags)}, but on {soc.name} with these slots' "
                                                              f"placements it is {list(want)} "
                                                              "(GE: hccl_task_info.cc InitZeroCopyInfos)")
    graph = SimpleNamespace(inputs=[d.tensor for d in tasks.inputs], outputs=[d.tensor for d in tasks.outputs])
    owner = io_offsets(graph, plan).owner
    zero_copy_io = {(d.role, d.index) for d in tasks.inputs + tasks.outputs if d.zero_copy}
    want = [ZeroCopyRef(task.index, i, role, index, relative) for task in tasks.tasks
            for i, slot in enumerate(task.slots) for role, index, relative in owner.get(slot.tensor, ())
            if (role, index) in zero_copy_io]
    if list(tasks.zero_copy) != want:
        missing = [r for r in want if r not in tasks.zero_copy]
        extra = [r for r in tasks.zero_copy if r not in want]
        _fail("zero_copy", f"the table is not the one the plan and the I/O table give: missing {missing[:3]}, "
                           f"extra {extra[:3]}" + ("" if missing or extra else " (order differs)"))


def check_consistency(plan: MemoryPlan, options: CompileOptions, tasks, weights) -> None:
    """ModelFormatError naming the field at fault if the parts of a model file disagree."""
    check_regions(plan)
    _options(plan, options)
    tensors = _tensors(plan)
    _figures(plan)
    _attributes(plan, tasks)
    steps = {n: i for i, n in enumerate(plan.order)}
    for k, task in enumerate(tasks.tasks):
        if task.node not in steps:
            _fail(f"tasks[{task.index}]", f"node {task.node!r} is not in the plan's order")
        if k and steps[task.node] < steps.get(tasks.tasks[k - 1].node, 0):
            _fail(f"tasks[{task.index}].node", f"{task.node!r} comes before task {k - 1}'s node in the plan's "
                                               f"order, but tasks follow that order (taskgen.generate_tasks)")
        if list(task.after) != sorted(set(task.after)) or any(not 0 <= a < k for a in task.after):
            _fail(f"tasks[{task.index}].after", f"{list(task.after)} must name earlier tasks, ascending, each once")
        if task.kind == "memset":  # cleans exactly the outputs of its node's kernel, the next task
            nxt = tasks.tasks[k + 1] if k + 1 < len(tasks.tasks) else None
            if nxt is None or nxt.node != task.node or task.slots != tuple(s for s in nxt.slots if s.role == "out"):
                _fail(f"tasks[{task.index}].slots", f"a memset task cleans the outputs of its node's kernel task, "
                                                    f"which must follow it")
        for j, s in enumerate(task.slots):
            t = tensors.get(s.tensor)
            if t is None or (t.region, t.offset) != (s.region, s.offset) or s.nbytes > t.size:
                _fail(f"tasks[{task.index}].slots[{j}] ({s.tensor!r})", "disagrees with the plan's placement")
            if t.region in ("feature_map", "zero_copy") and not t.first <= steps[task.node] <= t.last:
                _fail(f"plan.tensors ({t.name!r})", f"lifetime [{t.first}, {t.last}] misses step "
                                                    f"{steps[task.node]}, where task {task.index} uses it")
    _tensor_sizes(plan, tensors, tasks)
    _io(plan, tensors, tasks)
    _zero_copy(plan, options, tasks)
    for w in weights:
        t = tensors.get(w.name)
        if t is None or (t.region, t.offset) != ("weight", w.offset):
            _fail(f"weight {w.name!r}", "offset disagrees with the plan's placement")
