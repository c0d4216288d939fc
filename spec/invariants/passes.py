"""Passes: graph rewrites that exist for zero copy (applies to model files).

The spec recomputes where GE's MemcpyAddrAsyncPass must insert a MemcpyAddrAsync,
and where GE's MemLayoutConflictOptimizer must insert an Identity between user
memory and a task that cannot refresh its addresses, from the compiled graph
(looking through the inserted copies), the model file's tasks (their kind, node,
loop flag and slot roles) and the build facts; whether a task can have its
arguments refreshed is read from the spec's own SoC capability table
(spec/capabilities.py), never from the compiler.
"""
from __future__ import annotations

import attrs

from zcspec.spec.capabilities import TABLE, Capabilities, capabilities
from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._conflicts import Conflicts, is_copy
from zcspec.spec.observables.model_file import Cut, ModelFileObservation, NodeInfo, Task

MEMCPY = "MemcpyAddrAsync"
IDENTITY = "Identity"   # a conflict copy has a task; a plain Identity is a view
DATA_TYPES = {"Data", "AippData", "RefData"}
CONST_TYPES = {"Const", "Constant"}
HCCL_PREFIX = "Hcom"


def _source(node: dict, name: str) -> NodeInfo:
    """The node whose memory ``name``'s output is: follow views (no task, alias of input 0)."""
    n = node[name]
    seen = {name}
    while n.view and n.inputs and n.inputs[0] not in seen:
        seen.add(n.inputs[0])
        n = node[n.inputs[0]]
    return n


def _copy(n: NodeInfo) -> bool:
    """A node the passes inserted: a MemcpyAddrAsync, or an Identity with a task (not a view)."""
    return n.type == MEMCPY or (n.type == IDENTITY and not n.view)


def _logical_edges(mf: ModelFileObservation):
    """(src, dst, through, direct) for every edge of the graph before the passes, looking through views:
    an edge through inserted copies counts as src -> dst with ``through`` the copies, nearest dst first;
    ``direct``: the edge passes no view (src feeds dst, or the first copy, itself)."""
    node = {n.name: n for n in mf.nodes}
    for dst in mf.nodes:
        if _copy(dst) or dst.view:
            continue
        for src_name in dict.fromkeys(dst.inputs):
            src, through = _source(node, src_name), []
            plain = src.name == src_name
            while _copy(src) and src.inputs and src.name not in through:
                through.append(src)
                src = _source(node, src.inputs[0])
                plain = plain and src.name == through[-1].inputs[0]
            yield src, dst, tuple(through), plain


def _tasks_of(mf: ModelFileObservation) -> dict[str, list[Task]]:
    out: dict[str, list[Task]] = {}
    for t in mf.tasks:
        out.setdefault(t.node, []).append(t)
    return out


def _touches(task: Task, role: str) -> bool:
    """Whether ``task`` references the node's inputs (``in``) or outputs (``out``); a slot of
    unknown role counts for both. A task with no slots (an exporter that lists none) counts too."""
    return not task.slots or any(s.role in (role, "") for s in task.slots)


def stuck(caps: Capabilities, tasks: list[Task], role: str) -> Task | None:
    """The first of ``tasks`` that references the node's ``role`` side and that the SoC cannot
    refresh (GE: block_mem_assigner.cc `IsNodeSupportZeroCopy`,
    task_args_refresh_type_classifier.cc `FixedAddrInferrer`), or None when every such task can be refreshed."""
    return next((t for t in tasks if _touches(t, role) and not caps.can_refresh(t.kind, in_loop=t.in_loop)), None)


def _overlap(a, b) -> bool:
    return a.region == b.region and a.offset < b.offset + max(b.size, 1) and b.offset < a.offset + max(a.size, 1)


def _writers(mf: ModelFileObservation, tasks: dict, name: str) -> list[Task]:
    """The tasks that write the memory of node ``name``'s output: its own, and, where one of its tasks
    works in place (an input slot on the bytes of an output slot), the writers of that input's memory
    too (an atomic producer's memset among them), read from the slots' addresses and tensor names."""
    out, seen, todo = [], set(), [name]
    by_tensor: dict[str, list[Task]] = {}
    for t in mf.tasks:
        for slot in t.slots:
            if slot.role == "out" and slot.tensor:
                by_tensor.setdefault(slot.tensor, []).append(t)
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        for t in tasks.get(node, []):
            out.append(t)
            outs = [x for x in t.slots if x.role == "out"]
            for s_in in (x for x in t.slots if x.role == "in" and x.tensor):
                if any(_overlap(s_in, o) for o in outs):
                    todo += [w.node for w in by_tensor.get(s_in.tensor, ())]
    return out


def refresh_caps(mf: ModelFileObservation) -> Capabilities:
    """What the conflict optimizer counts as refreshable: the SoC's capabilities, and in a build for a
    refreshable feature base (``ge.featureBaseRefreshable=1``) HCCL as a kind it can refresh too (GE:
    mem_layout_conflict_util.cc ``IsAddressRefreshable``: an HCCL op without address refresh is refreshable
    when ``IsGraphFeatureMapRefreshable``). Tasks in loops keep the SoC's loop rule."""
    caps = capabilities(mf.soc.name)
    if mf.build.feature_base_refreshable:
        return attrs.evolve(caps, refreshable_tasks=caps.refreshable_tasks | {"hccl"})
    return caps


def required(mf: ModelFileObservation, src: NodeInfo, dst: NodeInfo, tasks=None,
             direct: bool = True) -> tuple[str, str] | None:
    """(why, the copy's type) when GE must put a copy on src -> dst, else None: a MemcpyAddrAsync from
    MemcpyAddrAsyncPass or an Identity from MemLayoutConflictOptimizer between user memory and a task that
    cannot refresh its addresses. ``tasks``: node name -> its tasks (computed from ``mf`` when not given);
    ``direct``: src feeds dst with no view between (GE's ``InsertMemAddrAsyncNodeBeforeNetoutput`` looks
    only at the NetOutput's direct inputs). The graph is static: GE's pass skips an unknown-shape graph
    (``GetGraphUnknownFlag``), and zcspec's compiler refuses any dimension that is not a fixed integer
    (impl/compiler/validate.py), so a model file never is one."""
    if mf.soc is None or mf.soc.name not in TABLE:
        return None   # a SoC the capability table does not know: the claim is not exercised
    caps = capabilities(mf.soc.name)
    if not caps.zero_copy_memcpy:
        return None
    tasks = _tasks_of(mf) if tasks is None else tasks
    if src.type in DATA_TYPES and dst.type == "StreamMerge":
        return "a graph input feeds a StreamMerge", MEMCPY
    if dst.type == "NetOutput" and src.type in CONST_TYPES and direct:
        return "a constant feeds the graph output", MEMCPY
    if dst.type == "NetOutput" and src.type in DATA_TYPES and direct and (mf.build.offline or mf.build.single_op):
        return "a graph input feeds the graph output in an offline or single-op build", MEMCPY
    if (src.type == "RefData" and dst.type.startswith(HCCL_PREFIX) and stuck(caps, tasks.get(dst.name, []), "in")
            and not mf.build.feature_base_refreshable):   # IsFeatureMapRefreshable
        return "a RefData feeds an HCCL op that cannot refresh its addresses", MEMCPY
    caps = refresh_caps(mf)
    if src.type in DATA_TYPES and (t := stuck(caps, tasks.get(dst.name, []), "in")):
        return (f"a graph input feeds a {t.kind} task{' in a loop' if t.in_loop else ''} {caps.name} cannot "
                "refresh", IDENTITY)
    if dst.type == "NetOutput" and (t := stuck(caps, _writers(mf, tasks, src.name), "out")):
        return (f"a {t.kind} task{' in a loop' if t.in_loop else ''} {caps.name} cannot refresh writes a graph "
                "output", IDENTITY)
    return None


def _memcpy_addr_async(mf: ModelFileObservation):
    tasks = _tasks_of(mf)
    for src, dst, through, direct in _logical_edges(mf):
        need = required(mf, src, dst, tasks, direct)
        memcpy = [n for n in through if n.type == MEMCPY]
        if need and need[1] == MEMCPY and not memcpy:
            yield violation(f"edge {src.name!r} -> {dst.name!r}", f"needs a MemcpyAddrAsync ({need[0]}) and has none",
                            reason=need[0])
        elif memcpy and not (need and need[1] == MEMCPY):
            yield violation(f"node {memcpy[0].name!r}", f"is a MemcpyAddrAsync on {src.name!r} -> {dst.name!r}, "
                            f"where none is required (soc={getattr(mf.soc, 'name', None)!r})")


def conflicts(mf: ModelFileObservation, *, inplace: bool = True, keep: frozenset = frozenset()) -> Conflicts | None:
    """The graph GE's conflict optimizer saw and the anchors its table makes copy, or None when the file does
    not say enough: a SoC the capability table does not know, or nodes without their tensors. The switches:
    see Conflicts."""
    if mf.soc is None or mf.soc.name not in TABLE or not any(n.out_tensors for n in mf.nodes):
        return None
    caps = refresh_caps(mf)
    return Conflicts(mf, caps if caps.zero_copy_memcpy else None, inplace=inplace, keep=keep)


def _readings(mf: ModelFileObservation, keep: frozenset, wide: Conflicts | None = None) -> list[dict]:
    """The anchors the table wants copied in each reading of the file (with and without the outputs written
    over an input as one memory with it, Conflicts), with the conflict copies ``keep`` names left in the graph;
    ``wide``: the first reading's Conflicts when the caller has it already."""
    wide = wide or conflicts(mf, keep=keep)
    return [wide.chosen(), conflicts(mf, inplace=False, keep=keep).chosen()]


def _unwanted(mf: ModelFileObservation, c: Conflicts, readings: list[dict]):
    """The conflict copies no order of GE's work explains. GE solves one symbol after another on the graph as
    the earlier ones left it (``MemLayoutConflictOptimizer::Process``), so a copy may answer a conflict that
    earlier copies made: starting from the graph without copies, every copy the table wants in some reading
    is made, and the rest are judged again with the made ones in the graph, until none is added."""
    made: frozenset = frozenset()
    left, graph = list(c.copies), c
    while left:
        copies = {x.name: x for x in graph.copies}
        wanted = []
        for copy in left:
            mine = copies[copy.name]
            keys = [("in", node, i) for node, i in mine.readers] + [("out", graph.producer.get(mine.source), mine.source)]
            if any(k in r for k in keys for r in readings):
                wanted.append(copy.name)
        if not wanted:
            break
        made |= frozenset(wanted)
        left = [x for x in left if x.name not in made]
        graph = conflicts(mf, keep=made)
        readings = _readings(mf, made, graph)
    return left


def _layout_conflict(mf: ModelFileObservation):
    tasks, reported = _tasks_of(mf), set()
    for src, dst, through, direct in _logical_edges(mf):
        need = required(mf, src, dst, tasks, direct)
        if need and need[1] == IDENTITY and not through:
            reported.add(dst.name)
            yield violation(f"edge {src.name!r} -> {dst.name!r}", f"needs a copy ({need[0]}) and has none",
                            reason=need[0])
    if (c := conflicts(mf)) is None:
        return
    # The file cannot say which outputs written over an input were one memory with it when the optimizer ran
    # (Conflicts): a copy is demanded only where the table wants it in both readings, and each copy must be
    # wanted in some reading, in some order of GE's work (_unwanted).
    readings = _readings(mf, frozenset(), c)
    chosen = {k: v for k, v in readings[0].items() if all(k in r for r in readings[1:])}
    for copy in _unwanted(mf, c, readings):
        readers = ", ".join(f"{node} input {i}" for node, i in copy.readers) or "nothing"
        yield violation(f"node {copy.name!r}", f"is a conflict copy of {copy.source!r} (read by {readers}) where no "
                        "pair of that memory's anchors conflicts in GE's checker table", reason="extra copy")
    writes = {t: n for n in mf.nodes for t in n.out_tensors}
    for anchor, why in chosen.values():
        if anchor.side == "in":
            reads = c.node[anchor.node].in_tensors[anchor.index]
            copied = reads in writes and is_copy(writes[reads])
            said = anchor.node in reported and "unrefreshable" in why   # the edge's violation above says it
            if not copied and not c.decoupled(anchor.tensor) and not said:
                yield violation(f"node {anchor.node!r} input {anchor.index}", f"reads {anchor.tensor!r} with no copy "
                                f"between, where GE's checker table puts one ({why})", reason="missing copy")
        else:
            readers = c.readers.get(anchor.tensor, [])
            if len(readers) == 1 and is_copy(c.node[readers[0][0]]):
                continue
            direct = [f"{node} input {i}" for node, i in readers if c.node[node].in_tensors[i] == anchor.tensor]
            if direct:
                yield violation(f"tensor {anchor.tensor!r}", f"is read by {', '.join(direct)} with no copy after "
                                f"its producer {anchor.node!r}, where GE's checker table puts one ({why})",
                                reason="missing copy")


MEMCPY_ADDR_ASYNC = Invariant(
    id="PASS-MEMCPY-ADDR-ASYNC",
    title="MemcpyAddrAsync is present exactly where the SoC profile requires it",
    statement="When the SoC supports zero-copy memcpy (the spec's capability table) and the graph is static (GE's pass "
              "skips an unknown-shape graph; zcspec's compiler refuses one), a MemcpyAddrAsync node sits on "
              "exactly these edges (seen through views and other copies): graph input -> StreamMerge; Const -> "
              "NetOutput and, in offline or single-op builds, graph input -> NetOutput, both with no view "
              "between (the NetOutput's direct inputs); RefData -> an HCCL op that "
              "cannot refresh its addresses, unless the feature map is refreshable. Otherwise there is none "
              "(user memory bound to other unrefreshable tasks gets the conflict optimizer's Identity, "
              "PASS-LAYOUT-CONFLICT).",
    rationale="A MemcpyAddrAsync keeps its source and destination in its device arguments, so the runtime can "
              "re-point them at user buffers each execution; GE's pass puts one where a weight must land in the "
              "user's output buffer, where queue-based or single-op execution needs a real copy from input to "
              "output, and as a stop-gap before unrefreshable HCCL ops reading a RefData. An extra one costs a "
              "device copy per execution; a missing one breaks zero copy on that edge. (GE's own design note "
              "omits the StreamMerge, Const, offline and HCCL rules.)",
    ge_source="compiler/graph/passes/memory_conflict/memcpy_addr_async_pass.cc (MemcpyAddrAsyncPass::Run, "
              "AddMemcpyAddrAsyncNode, InsertMemAddrAsyncNodeBeforeNetoutput, NeedInsertMemAddrAsyncNodeAfterData); "
              "runtime/v1/graph/load/model_manager/task_info/rts/memcpy_addr_async_task_info.cc",
    applies_to="model_file", concern="passes", predicate=_memcpy_addr_async,
    precondition=lambda mf: _exercised(mf, MEMCPY),
)


def _exercised(mf: ModelFileObservation, kind: str) -> bool:
    if mf.soc is None or mf.soc.name not in TABLE:
        return False
    tasks = _tasks_of(mf)
    return any((need := required(mf, s, d, tasks, direct)) and need[1] == kind or any(n.type == kind for n in t)
               for s, d, t, direct in _logical_edges(mf))


def _conflicts_exercised(mf: ModelFileObservation) -> bool:
    """GE's checker table has a say: the file has a conflict copy, or some pair of anchors conflicts."""
    c = conflicts(mf)
    return c is not None and (bool(c.copies) or bool(c.chosen()))


LAYOUT_CONFLICT = Invariant(
    id="PASS-LAYOUT-CONFLICT",
    title="Conflict copies sit exactly where GE's checker table puts them",
    statement="When the SoC supports zero-copy memcpy (the spec's capability table) and the graph is static, a copy "
              "(the conflict optimizer's Identity, or a MemcpyAddrAsync) "
              "sits on every edge (seen through views) from a graph input into a task whose input arguments the "
              "SoC cannot refresh, and from a task whose output arguments it cannot refresh into the NetOutput (a "
              "task kind the profile cannot refresh, or a task inside a loop subgraph; in a build for a "
              "refreshable feature base, ge.featureBaseRefreshable, HCCL counts as a kind the profile can refresh; "
              "an output written in place "
              "over its input counts that input's writers too, e.g. an atomic producer's memset). On every SoC, "
              "the conflict copies sit exactly where GE's checker table puts them, judged on the graph the "
              "optimizer saw (the compiled graph with its conflict copies taken out): per symbol (the tensors "
              "that share memory through views and outputs written over an input), every anchor is typed (graph "
              "input or output, immutable output, unrefreshable input or output, continuous or NoPadding "
              "continuous input or output), and for every pair the table lists as conflicting (and its checker "
              "does not spare) the anchor it names reads or writes through a copy, unless a copy with a single "
              "reader already decouples it; a tensor reaching several continuous inputs is copied before all but "
              "the first in execution order (a NoPadding concat cascade excepted); and every conflict copy in the "
              "file sits at such an anchor.",
    rationale="The runtime re-points a task at the caller's buffers on every execution only through its "
              "argument table; a task that cannot be refreshed would keep the first call's buffers. The Identity "
              "takes the user's buffer instead, so the input stays zero copy at the cost of one device copy. "
              "Continuous layouts are one block each: memory two of them, or one and the user's buffer, would "
              "have to share cannot be laid out, so GE copies. A copy GE would not insert costs a device copy "
              "per execution and a block, silently: a layout stays valid, only the count of copies shows it.",
    ge_source="compiler/graph/optimize/mem_layout_conflict_optimize/ (MemLayoutConflictOptimizer::Run, "
              "checker/checker.cc RegAllAbsoluteConflict and the registrations of checker/funcs/*.cc: "
              "user_out_and_unrefresh_out_checker.cc, user_out_and_unrefresh_in_checker.cc, "
              "user_out_and_continuous_input.cc, continuous_output_and_continuous_input.cc, "
              "continuous_input_and_continuous_input.cc, nopadding_continuous_input_and_nopadding_continuous_out.cc; "
              "mem_layout_conflict_util.cc GetNodeOutputTypes, GetNodeInputTypes, IsAddressRefreshable, "
              "IsSameOrPartialSame, IsSkipInsert, CreateIdentityOpDesc); task_args_refresh_type_classifier.cc "
              "(TaskArgsRefreshTypeClassifier::ClassifyMultiTasks)",
    applies_to="model_file", concern="passes", predicate=_layout_conflict,
    precondition=lambda mf: _exercised(mf, IDENTITY) or _conflicts_exercised(mf),
)


# -- PASS-VIEW-CONTIGUOUS ---------------------------------------------------------------------

def kept_range(cut: Cut, k: int) -> range:
    """The indexes of axis ``cut.axes[k]`` the cut keeps, counted as ONNX's Slice counts them: negative bounds
    from the axis's end, then clamped to it ([0, dim] for a positive step, [-1, dim - 1] for a negative one)."""
    dim = cut.shape[cut.axes[k] % len(cut.shape)]
    lo, hi, step = cut.starts[k], cut.ends[k], cut.steps[k] or 1
    lo, hi = (lo + dim if lo < 0 else lo), (hi + dim if hi < 0 else hi)
    low, high = (0, dim) if step > 0 else (-1, dim - 1)
    return range(min(max(lo, low), high), min(max(hi, low), high), step)


def contiguous_cut(cut: Cut) -> str | None:
    """Why the bytes a cut keeps are not one run of its input's bytes (row-major), or None when they are:
    every axis after the last one it cuts is kept whole, that one keeps consecutive indexes in order, and
    every axis before it keeps a single index (an axis of size 1, or one cut to one index)."""
    rank = len(cut.shape)
    kept = {i: range(d) for i, d in enumerate(cut.shape)}
    for k, a in enumerate(cut.axes):
        if not -rank <= a < rank:
            return f"axis {a} is not an axis of a rank-{rank} input"
        kept[a % rank] = kept_range(cut, k)
    cut_axes = [i for i, r in kept.items() if r != range(cut.shape[i])]
    if not cut_axes:
        return None
    last = max(cut_axes)
    if len(kept[last]) > 1 and kept[last].step != 1:
        return f"it keeps the indexes of axis {last} in steps of {kept[last].step}"
    wide = [i for i in range(last) if len(kept[i]) > 1]
    if wide:
        i = wide[0]
        return (f"it cuts axis {last} of {list(cut.shape)} and keeps {len(kept[i])} indexes of axis {i} before it: "
                f"each of those rows holds a piece, apart from the others")
    return None


def _view_contiguous(mf: ModelFileObservation):
    for n in mf.nodes:
        if n.view and n.cut is not None and (why := contiguous_cut(n.cut)):
            yield violation(f"node {n.name!r}", f"is a view of its input (no task, its output aliases input 0), but "
                            f"a {n.type} whose output is not one run of the input's bytes: {why}", type=n.type)


VIEW_CONTIGUOUS = Invariant(
    id="PASS-VIEW-CONTIGUOUS",
    title="A Split or Slice made a view keeps one run of its input's bytes",
    statement="A Split or Slice node that runs no task and whose output aliases its input 0 (a view) keeps a "
              "contiguous byte range of that input: along at most one axis it keeps less than the whole axis, "
              "with step 1, and every axis before that one has size 1 (or keeps one index). Judged from the "
              "node's attributes and its input's shape, not from the offsets the planner gave the pieces.",
    rationale="A view is an address inside its input: the consumer reads size bytes from there. A cut along an "
              "inner axis keeps one piece of every outer row, so a view reads the neighbouring rows' bytes in "
              "place of its own, silently (only the outputs show it). GE makes only its no-task Split a view, whose "
              "NoPadding continuous outputs sit back to back inside the input's block.",
    ge_source="compiler/graph/build/memory/graph_mem_assigner.cc (AssignContinuousOutputMemory: a no-task "
              "Split's outputs by their no-padding sizes, back to back); "
              "compiler/graph/passes/memory_conflict/set_input_output_offset_pass.cc (SetInputOutputOffsetPass::Run)",
    applies_to="model_file", concern="passes", predicate=_view_contiguous,
    precondition=lambda mf: any(n.view and n.cut is not None for n in mf.nodes),
)


# -- PASS-VIEW-NOT-OUTPUT ---------------------------------------------------------------------

def _path_to_output(mf: ModelFileObservation, start: NodeInfo) -> tuple[str, ...] | None:
    """The nodes from ``start`` to the NetOutput when one of its outputs reaches it through views (each reading
    it as its input 0) and the copies the passes inserted (the graph as the Split was judged on), else None."""
    readers: dict[str, list[NodeInfo]] = {}
    for n in mf.nodes:
        for src in n.inputs:
            readers.setdefault(src, []).append(n)
    todo, seen = [(start.name,)], {start.name}
    while todo:
        path = todo.pop()
        for r in readers.get(path[-1], ()):
            if r.type == "NetOutput":
                return path + (r.name,)
            if (r.view or _copy(r)) and r.inputs[0] == path[-1] and r.name not in seen:
                seen.add(r.name)
                todo.append(path + (r.name,))
    return None


def _view_not_output(mf: ModelFileObservation):
    for n in mf.nodes:
        if n.view and n.type in ("Split", "Slice") and (path := _path_to_output(mf, n)):
            yield violation(f"node {n.name!r}", f"is a view of its input (no task, its outputs inside input 0), but "
                            f"its output reaches the graph output: {' -> '.join(path)}", path=list(path))


VIEW_NOT_OUTPUT = Invariant(
    id="PASS-VIEW-NOT-OUTPUT",
    title="A Split or Slice made a view has no output the NetOutput reads",
    statement="A Split or Slice node that runs no task and whose outputs alias its input 0 (a view) has no output "
              "that the NetOutput reads, directly or through views (each reading it as its input 0) and the "
              "copies the passes inserted (a conflict Identity, a MemcpyAddrAsync). Such a node keeps its task.",
    rationale="GE's fusion engine makes a SplitD no-task (NoPadding continuous outputs inside its input) only when "
              "no consumer of any output is a NetOutput; GE removes a static graph's Reshapes before that, so "
              "a view on the way counts as the edge itself. A piece that is a model output cannot be the user's "
              "buffer while it lives inside its input: the conflict optimizer then copies it to the output, so the "
              "input's whole block stays live until the copy and the Split's kernel becomes a device copy, silently "
              "(the outputs are right, only the tasks and the plan show it).",
    ge_source="compiler/engines/nn_engine/fusion/graph_optimizer/node_optimizer/split_n_optimizer.cc "
              "(SplitNOptimizer::NeedSkip, OutputCheck, InvalidNodeType: NETOUTPUT); "
              "compiler/graph/passes/shape_optimize/reshape_remove_pass.cc (ReshapeRemovePass::Run)",
    applies_to="model_file", concern="passes", predicate=_view_not_output,
    precondition=lambda mf: any(n.view and n.type in ("Split", "Slice") for n in mf.nodes),
)

INVARIANTS = (MEMCPY_ADDR_ASYNC, LAYOUT_CONFLICT, VIEW_CONTIGUOUS, VIEW_NOT_OUTPUT)
