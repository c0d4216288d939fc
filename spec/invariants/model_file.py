"""Model file: what a compiled model file must satisfy to be loaded (applies to model files)."""
from __future__ import annotations

from zcspec.spec import op_facts
from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.observables.model_file import ModelFileObservation, Task


# -- MF-WELL-FORMED ---------------------------------------------------------------------------

def _well_formed(mf: ModelFileObservation):
    problems = mf.header.problems()
    if mf.load is not None and mf.load.accepted and problems:
        yield violation("model file header", "the loader accepted a malformed file: " + "; ".join(problems),
                        problems=list(problems))


WELL_FORMED = Invariant(
    id="MF-WELL-FORMED",
    title="Only well-formed model files load",
    statement="A model file is accepted by the loader only if its magic is the expected one, its version is "
              "supported, its declared length is its real length and its stored checksum equals the checksum "
              "recomputed from its bytes.",
    rationale="A truncated or corrupted file loaded anyway gives tasks whose argument slots point anywhere; "
              "the device would fault (or silently compute garbage) far from the cause. GE validates the om "
              "header and partition table at load (a static om with one partition is rejected, E10055).",
    ge_source="runtime/v1/graph/load/model_manager/model_manager.cc (ModelManager::GetModelMemAndWeightSize)",
    applies_to="model_file", concern="model_file", predicate=_well_formed,
    # Only a malformed file can tell a loader that checks from one that does not.
    precondition=lambda mf: mf.load is not None and bool(mf.header.problems()),
)


# -- MF-SLOT-IN-REGION ------------------------------------------------------------------------

def _slot_in_region(mf: ModelFileObservation):
    for task in mf.tasks:
        for s in task.slots:
            size = mf.regions.get(s.region)
            if size is None or s.offset < 0 or s.offset + s.size > size or (s.size == 0 and s.offset > size):
                yield violation(f"task {task.id} slot {s.index}", f"references {s.region}+{s.offset} "
                                f"({s.size} bytes), outside region {s.region!r} of size {size}",
                                region=s.region, offset=s.offset, size=s.size, region_size=size)
    slots = {(t.id, s.index) for t in mf.tasks for s in t.slots}
    for e in mf.zero_copy_table:
        if (e.task, e.slot) not in slots:
            yield violation(f"task {e.task} slot {e.slot}", f"is in the zero-copy table for {e.io!r} but the "
                            f"task has no such argument slot", io=e.io)


SLOT_IN_REGION = Invariant(
    id="MF-SLOT-IN-REGION",
    title="Every argument slot lies inside its region",
    statement="Every task argument slot references an address range (region + offset, size bytes) that lies "
              "inside a region of the model file, and every entry of the zero-copy offset table names an "
              "existing task argument slot.",
    rationale="At load the runtime turns region + offset into a device address and, for zero-copy entries, "
              "rewrites the slot with the user's buffer each execution; a slot outside its region is an "
              "out-of-bounds access waiting to happen, a table entry naming no slot is a refresh that "
              "silently does nothing.",
    ge_source="runtime/v1/graph/load/model_manager/task_info/args_io_addrs_updater.cc; "
              "[legacy] 910/ge/graph/load/model_manager/zero_copy_task.cc (offset + 8 <= args size)",
    applies_to="model_file", concern="model_file", predicate=_slot_in_region,
    precondition=lambda mf: any(t.slots for t in mf.tasks),
)

# -- MF-DETERMINED ----------------------------------------------------------------------------

# The metadata fields no other part of a model file repeats (docs/model-format.md, "What the loader
# checks"): a loader cannot tell a changed value from the original, only the checksum guards them.
# JSON paths, "*" matching any key or index. Every other field is determined by another part of the
# file, so a changed value must be refused or give the identical model.
FREE_FIELDS = {
    ("name",): "the model's label; nothing else names it",
    ("options", "offline"): "leaves a trace (a copy) only when a Data feeds the NetOutput directly",
    ("options", "single_op"): "as offline: leaves a trace (a copy) only when a Data feeds the NetOutput directly",
    ("options", "feature_base_refreshable"): "leaves a trace (a copy fewer) only where user memory meets an HCCL "
                                             "task on a SoC that cannot refresh HCCL tasks",
    ("tasks", "tasks", "*", "attrs"): "a kernel's attributes are its node's own semantics, with no second copy",
    ("tasks", "tasks", "*", "in_loop"): "whether the node sits in a loop is the graph's, not repeated elsewhere",
    ("tasks", "tasks", "*", "stream"): "the stream assignment is the graph's (node.stream); the plan records no "
                                       "stream, so any small stream id is as good as another (only its range is "
                                       "checked)",
    ("tasks", "tasks", "*", "after"): "the waits are the graph's (its control edges, and the nodes without a task "
                                      "that hold their stream), not repeated elsewhere: only their form is "
                                      "checked (earlier tasks, ascending, each once)",
    ("tasks", "tasks", "*", "node"): "which nodes run tasks is not in the file (a task-less node's op type is not "
                                     "recorded): only the plan order and the lifetimes of its slots bound it",
    ("tasks", "tasks", "*", "slots", "*", "tensor"): "another tensor at the same address (an alias) is the same "
                                                     "memory; a name the plan does not place there is rejected",
    ("plan", "tensors", "*", "first"): "a lifetime has no second copy; only the tasks' uses bound it",
    ("plan", "tensors", "*", "last"): "as first",
}


def is_free(path) -> bool:
    """Whether the metadata field at JSON ``path`` lies in one of the FREE_FIELDS (or below one)."""
    return any(len(path) >= len(p) and all(a in ("*", b) for a, b in zip(p, path)) for p in FREE_FIELDS)


def _determined(mf: ModelFileObservation):
    e = mf.edit
    if e is not None and mf.load is not None and mf.load.accepted and e.identical is False:
        where = ".".join(map(str, e.path))
        yield violation(f"model file {where}", f"the loader accepted the file with {where} changed (re-signed, so "
                        f"the checksum is valid) and loaded a different model; another part of the file "
                        f"determines that field, so the change must be refused", path=list(e.path))


DETERMINED = Invariant(
    id="MF-DETERMINED",
    title="A field the file repeats cannot be changed alone",
    statement="When one metadata field of a model file that another part of the file determines is changed and "
              "the file re-signed, the loader refuses the file or loads exactly the model the file was built from.",
    rationale="The checksum only catches accidental damage: a crafted or buggy writer signs what it writes. A "
              "size, an offset or a placement that disagrees with the rest of the file gives tasks whose "
              "arguments point somewhere the plan never put that tensor; the redundancy of the file is what "
              "lets the loader refuse it at load instead of the device faulting later. GE's om loader checks "
              "the header and the partition table; the .zcm format repeats sizes and placements so that its "
              "loader can check every field against another (a property of zcspec's format, not GE's).",
    ge_source="runtime/v1/graph/load/model_manager/model_manager.cc (ModelManager::GetModelMemAndWeightSize: "
              "the partition table GE checks)",
    applies_to="model_file", concern="model_file", predicate=_determined,
    # Only a file with a determined field changed can tell a loader that cross-checks from one that does not.
    precondition=lambda mf: mf.edit is not None and not is_free(mf.edit.path),
)


# -- MF-ATOMIC-CLEAN --------------------------------------------------------------------------

def _cleans(clean: Task, slot) -> bool:
    return any(c.region == slot.region and c.offset <= slot.offset and slot.offset + slot.size <= c.offset + c.size
               for c in clean.slots)


def _atomic_clean(mf: ModelFileObservation):
    tasks: dict[str, list[Task]] = {}
    for t in mf.tasks:
        tasks.setdefault(t.node, []).append(t)
    for n in mf.nodes:
        mine = tasks.get(n.name, [])
        memsets = [t for t in mine if t.kind == "memset"]
        if not op_facts.atomic(n.type):
            for t in memsets:
                yield violation(f"task {t.id}", f"cleans outputs of node {n.name!r} ({n.type}), which is not atomic "
                                "(spec/op_facts.py): GE cleans only before atomic nodes", node=n.name)
            continue
        for k in (t for t in mine if t.kind != "memset"):
            for s in (s for s in k.slots if s.role == "out"):
                if not any(c.id < k.id and c.stream == k.stream and _cleans(c, s) for c in memsets):
                    yield violation(f"task {k.id} slot {s.index}", f"atomic node {n.name!r} ({n.type}) accumulates "
                                    f"into {s.tensor!r} ({s.region}+{s.offset}, {s.size} bytes), but no memset task "
                                    f"of the node before it on stream {k.stream} cleans those bytes",
                                    node=n.name, tensor=s.tensor)


def _atomic_clean_facts(mf: ModelFileObservation) -> bool:
    """Nodes are known (the graph was given) and one is atomic or a task is a clean."""
    return bool(mf.nodes) and (any(op_facts.atomic(n.type) for n in mf.nodes)
                               or any(t.kind == "memset" for t in mf.tasks))


ATOMIC_CLEAN = Invariant(
    id="MF-ATOMIC-CLEAN",
    title="Atomic outputs are cleaned before their kernel, and only they are",
    statement="For every node the spec's op table lists as atomic (its outputs are accumulated into), every "
              "output argument of its kernel task lies inside a slot of a memset task of the same node that comes "
              "earlier on the same stream; a memset task belongs to an atomic node.",
    rationale="The kernel adds into its output, so the bytes must be zero when it starts: without the clean the "
              "result depends on whatever the memory held (a previous execution, another tensor that shared the "
              "block). The model file is where the clean lives, so the claim reads its tasks against the op "
              "type, not the compiler's own table: an op table that lost its atomic flag otherwise compiles a "
              "model whose layout claims all hold, and only a comparison of outputs notices. A clean of a node "
              "that accumulates nothing is a memset GE never issues.",
    ge_source="compiler/graph/passes/memory_conflict/atomic_addr_clean_pass.cc (AtomicAddrCleanPass::Run, "
              "HandleNormalGraph, LinkToAtomicNode: a memset node with a control edge to every atomic node); "
              "graph_mem_assigner.cc (SetAtomicCleanOffset: the ranges it cleans)",
    applies_to="model_file", concern="model_file", predicate=_atomic_clean, precondition=_atomic_clean_facts,
)


# -- MF-ZERO-COPY-TABLE -----------------------------------------------------------------------

IO_REGION = "zero_copy"   # the region holding the model's I/O blocks (docs/model-format.md)


def _io_tensors(mf: ModelFileObservation) -> dict[str, str]:
    """The model's I/O as the file's nodes name them: a Data's output is an input, a NetOutput's input an
    output ({} when the file records no nodes)."""
    io = {t: "output" for n in mf.nodes if n.type == "NetOutput" for t in n.in_tensors}
    io.update({t: "input" for n in mf.nodes if n.type in ("Data", "RefData") for t in n.out_tensors})
    return io


def _zero_copy_table(mf: ModelFileObservation):
    table = {(e.task, e.slot): e for e in mf.zero_copy_table}
    slots = {(t.id, s.index): (t, s) for t in mf.tasks for s in t.slots}
    for (task, index), (t, s) in slots.items():
        listed = (task, index) in table
        if s.region == IO_REGION and not listed:
            yield violation(f"task {task} slot {index}", f"points into the I/O region ({s.region}+{s.offset}, tensor "
                            f"{s.tensor!r}) but is not in the zero-copy table: the runtime never puts the user's "
                            f"buffer there, so the {t.kind} task of {t.node!r} uses the model's placeholder",
                            tensor=s.tensor)
        if s.zero_copy is not None and s.zero_copy != listed:
            yield violation(f"task {task} slot {index}", f"the {t.kind} task of {t.node!r} records its buffer as "
                            f"{'' if s.zero_copy else 'not '}zero-copy, but the table "
                            f"{'does not list' if s.zero_copy else 'lists'} the slot", tensor=s.tensor)
    io = _io_tensors(mf)
    bases: dict[str, dict[int, tuple[int, int]]] = {}
    for key, e in table.items():
        if key not in slots:
            continue   # MF-SLOT-IN-REGION
        s = slots[key][1]
        if s.region != IO_REGION:
            yield violation(f"task {e.task} slot {e.slot}", f"is in the zero-copy table for {e.io!r} but points into "
                            f"region {s.region!r}, not the I/O region: the refresh would overwrite the address of "
                            f"{s.tensor!r}", io=e.io, region=s.region)
            continue
        if io and io.get(e.io) != e.role:
            yield violation(f"task {e.task} slot {e.slot}", f"is registered as {e.role} {e.io!r}, which is "
                            + (f"the model's {io[e.io]}" if e.io in io else "no Data output or NetOutput input"),
                            io=e.io, role=e.role)
        bases.setdefault(e.io, {}).setdefault(s.offset - e.relative_offset, key)
    for name, found in bases.items():
        if len(found) > 1:
            where = ", ".join(f"task {t} slot {i} says {b}" for b, (t, i) in sorted(found.items()))
            yield violation(f"I/O {name!r}", f"its table entries disagree on where it starts in the I/O region "
                            f"(slot offset minus relative offset): {where}", io=name)


ZERO_COPY_TABLE = Invariant(
    id="MF-ZERO-COPY-TABLE",
    title="The zero-copy table lists exactly the slots that point at the model's I/O",
    statement="In a model file, every task argument slot that points into the I/O region is in the zero-copy "
              "table and every table entry's slot points into it; an entry names a Data output as an input or a "
              "NetOutput input as an output; the entries of one I/O agree on its start (slot offset minus "
              "relative offset); and an HCCL task's slot is in the table exactly when the task records that "
              "buffer as zero-copy.",
    rationale="The table is all a runtime reads to put the caller's buffers into the tasks: a slot it misses "
              "keeps the address of the model's own placeholder (the task reads an input nobody wrote, or writes "
              "an output the caller never sees), an entry on another region overwrites a feature-map address with "
              "the user's buffer, and two starts for one I/O put one of them off by the difference. The runtime "
              "claims (V1-SLOT-REFRESH) take the table as given; this claim holds the table to the tasks.",
    ge_source="runtime/v1/graph/load/model_manager/davinci_model.cc (DavinciModel::SetZeroCopyAddr: every task "
              "slot holding an I/O's address is registered); zero_copy_offset.cc (SetInputOutsideAddrs, "
              "SetOutputOutsideAddrs, SetOutsideAddrsValue); hccl_task_info.cc (HcclTaskInfo::InitZeroCopyInfos)",
    applies_to="model_file", concern="model_file", predicate=_zero_copy_table,
    precondition=lambda mf: bool(mf.zero_copy_table) or any(s.region == IO_REGION for t in mf.tasks for s in t.slots),
)


# -- MF-TASK-ON-NODE-STREAM -------------------------------------------------------------------

def _task_stream(mf: ModelFileObservation):
    if mf.edit is not None or not mf.nodes:
        return   # an edited file's tasks are MF-DETERMINED's; without the graph there is no node's stream
    stream = {n.name: n.stream for n in mf.nodes}
    for t in mf.tasks:
        if t.node not in stream:
            yield violation(f"task {t.id}", f"its {t.kind} task names node {t.node!r}, which the graph does not hold",
                            node=t.node)
        elif t.stream != stream[t.node]:
            yield violation(f"task {t.id}", f"the {t.kind} task of {t.node!r} runs on stream {t.stream}, but the "
                            f"node is assigned stream {stream[t.node]}", node=t.node, stream=t.stream,
                            node_stream=stream[t.node])


TASK_ON_NODE_STREAM = Invariant(
    id="MF-TASK-ON-NODE-STREAM",
    title="Every task runs on its node's stream",
    statement="In a model file as the compiler built it, every task belongs to a node of the graph after the "
              "passes and runs on the stream that node is assigned.",
    rationale="The stream is what orders a task with the rest: the planner reuses memory across tasks of one "
              "stream in their order and across streams only after the events the graph's edges put between "
              "them. A task put on another stream than its node's runs unordered with the tasks it reads from "
              "or writes for, and the plan's reuse becomes a race. The loader cannot tell (the file records no "
              "node's stream), so the claim reads the graph beside the file; an edited file is MF-DETERMINED's.",
    ge_source="compiler/graph/build/task_generator.cc (TaskGenerator::GenTaskForNormalNode, RefreshStreamId: a "
              "node's task definitions take its stream id)",
    applies_to="model_file", concern="model_file", predicate=_task_stream,
    precondition=lambda mf: mf.edit is None and bool(mf.nodes) and bool(mf.tasks),
)


# -- MF-SLOT-BYTES ----------------------------------------------------------------------------

def _sized_slots(mf: ModelFileObservation):
    """(task, slot, raw bytes) for every slot of a built file whose tensor the graph gives a shape and dtype."""
    if mf.edit is not None:
        return
    for t in mf.tasks:
        for s in t.slots:
            if s.tensor in mf.tensor_bytes:
                yield t, s, mf.tensor_bytes[s.tensor]


def _slot_bytes(mf: ModelFileObservation):
    for t, s, want in _sized_slots(mf):
        if s.size != want:
            yield violation(f"task {t.id}", f"slot {s.index} ({s.role} {s.tensor!r}) spans {s.size} bytes, but the "
                            f"graph's shape and dtype of {s.tensor!r} make {want} raw bytes", tensor=s.tensor,
                            slot=s.index, size=s.size, raw_bytes=want)


SLOT_BYTES = Invariant(
    id="MF-SLOT-BYTES",
    title="Every argument slot spans its tensor's raw bytes",
    statement="In a model file as the compiler built it, every argument slot of a task whose tensor the graph "
              "describes spans that tensor's raw dense bytes: its element count times the element width of its "
              "dtype, sub-byte types (int4, uint4, float4, int2, ...) packed and rounded up to whole bytes, the "
              "widths taken from the spec's own dtype table.",
    rationale="A slot's bytes are what the kernel reads or writes through the address in it, and what the "
              "runtime compares the caller's buffers against. A compiler whose element width is wrong for one "
              "dtype plans, tasks and checks that dtype with the wrong byte counts; the padded block sizes "
              "often hide it (a 12-element uint4 tensor is 64 bytes padded whether it holds 6 raw bytes or 5), "
              "the slot's raw count does not.",
    ge_source="graph_metadef/graph/type/types.cc (GetSizeInBytes: sub-byte types packed and rounded up); "
              "graph_metadef/graph/utils/tensor_utils.cc (TensorUtils::GetTensorSizeInBytes)",
    applies_to="model_file", concern="model_file", predicate=_slot_bytes,
    precondition=lambda mf: next(_sized_slots(mf), None) is not None,
)


INVARIANTS = (WELL_FORMED, SLOT_IN_REGION, DETERMINED, ATOMIC_CLEAN, ZERO_COPY_TABLE, TASK_ON_NODE_STREAM,
              SLOT_BYTES)
