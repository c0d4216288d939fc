"""Blocks: which tensors may share planner memory (applies to plans).

GE's reuse rules forbid sharing for zero-copy, atomic, continuous and fixed
memory (GE: block_mem_assigner.cc `ReuseBlock`, `AddLifeReuseBlock`); these claims check the outcome in the plan, not the
rules' implementation.
"""
from __future__ import annotations

from zcspec.spec.capabilities import TABLE, capabilities, granularities
from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._util import (
    GE_MEM, align_up, byte_overlaps, continuous_inputs, continuous_outputs, families,
)
from zcspec.spec.observables.plan import PlanObservation



def _roots(plan: PlanObservation, names) -> list[str]:
    return sorted({plan.root(n) for n in names})


# -- MEM-ZC-NOMERGE ---------------------------------------------------------------------------

def _zc_nomerge(plan: PlanObservation):
    for b in plan.blocks:
        if not b.zero_copy:
            continue
        roots = _roots(plan, b.tensors)
        if len(roots) > 1:
            yield violation(f"block {b.id!r}", f"is a zero-copy block holding {len(roots)} separate tensors "
                            f"{roots}; it must hold one tensor and its aliases", tensors=roots)


ZC_NOMERGE = Invariant(
    id="MEM-ZC-NOMERGE",
    title="Zero-copy blocks are never merged",
    statement="Every zero-copy block holds exactly one tensor (with its aliases).",
    rationale="A zero-copy block is re-pointed at the user's own buffer at every execution. Two graph inputs "
              "or outputs merged into one block would both be re-pointed at one user buffer, and the user's "
              "buffers are not contiguous, so one of them would be read from or written to the wrong place.",
    ge_source=GE_MEM + "block_mem_assigner.cc (CanReuseBlock, AddLifeReuseBlock: two zero-copy blocks never "
              "merge); graph_mem_assigner.h",
    applies_to="plan", concern="blocks", predicate=_zc_nomerge,
    precondition=lambda plan: any(b.zero_copy for b in plan.blocks),
    ge_only=True,
)


# -- MEM-ZC-NOREUSE ---------------------------------------------------------------------------

def _zc_noreuse(plan: PlanObservation):
    for t in plan.tensors:
        b = plan.block.get(t.block) if t.block is not None else None
        if b is not None and b.zero_copy != t.zero_copy:
            yield violation(f"tensor {t.name!r}", f"has zero_copy={t.zero_copy} but lives in block {b.id!r} "
                            f"with zero_copy={b.zero_copy}")
        if (t.region == "zero_copy") != t.zero_copy:
            yield violation(f"tensor {t.name!r}", f"has zero_copy={t.zero_copy} but is placed in region "
                            f"{t.region!r}; zero-copy tensors, and only they, live in the zero_copy region")
    zc = [f for f in families(plan) if plan.tensor[f.root].zero_copy]
    for target, other in byte_overlaps(families(plan), zc):
        yield violation(f"tensor {other.root!r}", f"uses bytes [{max(target.offset, other.offset)}, "
                        f"{min(target.end, other.end)}) of zero-copy tensor {target.root!r}",
                        zero_copy_tensor=target.root)


ZC_NOREUSE = Invariant(
    id="MEM-ZC-NOREUSE",
    title="Zero-copy memory is never reused",
    statement="A tensor is zero-copy exactly when its block is and exactly when it is placed in the zero_copy "
              "region, and no other tensor (other than its aliases) ever uses any byte of a zero-copy tensor's "
              "memory, whatever the lifetimes.",
    rationale="At run time the zero-copy bytes are the user's buffer, not the model's: an intermediate tensor "
              "placed there would be written into the user's input or output. GE never takes a zero-copy block "
              "at first-stage reuse and lays zero-copy blocks out separately. (GE's io-reuse options, "
              "ge.exec.inputReuseMemIndexes / outputReuseMemIndexes, deliberately allow children in zero-copy "
              "blocks; zcspec does not model those options, so this claim holds without exception.)",
    ge_source=GE_MEM + "block_mem_assigner.cc (ReuseBlock, AddZeroCopyLifeReuseBlock); graph_mem_assigner.cc "
              "(AssignZeroCopyMemory)",
    applies_to="plan", concern="blocks", predicate=_zc_noreuse,
    precondition=lambda plan: any(t.zero_copy for t in plan.tensors),
    ge_only=True,
)


# -- MEM-ZC-IO --------------------------------------------------------------------------------

DATA_TYPES = frozenset({"Data", "AippData", "RefData", "AnnData"})


def _zc_io_facts(plan: PlanObservation) -> bool:
    return plan.soc in TABLE and bool(plan.producers) and bool(plan.graph_inputs or plan.netoutput_inputs)


def expected_zero_copy(plan: PlanObservation) -> dict[str, str | None]:
    """Memory root -> why GE makes that graph I/O zero copy ("input"/"output"), or None when it does
    not; only roots of graph I/O are listed (GE: block_mem_assigner.cc `IsZeroCopyBlock`,
    `GetOutputFlowToNetoutputNum`, `IsNodeSupportZeroCopy`), computed from the graph facts
    and the spec's capability table, never from the planner's flags."""
    caps = capabilities(plan.soc)
    fixed = _fixed_names(plan)
    grouped = {plan.root(n) for g in (*continuous_inputs(plan), *continuous_outputs(plan)) for n in g.tensors}
    slots: dict[str, int] = {}
    for n in plan.netoutput_inputs:
        slots[plan.root(n)] = slots.get(plan.root(n), 0) + 1
    outputs = set(plan.netoutput_inputs)
    out: dict[str, str | None] = {}
    for f in plan.families:
        root = f.root
        producer = plan.producers.get(root)
        is_data = plan.node_types.get(producer) in DATA_TYPES
        if root in fixed or producer is None or not (is_data or slots.get(root)):
            continue
        nodes = {plan.producers[m] for m in f.members if m in plan.producers}
        nodes |= {plan.order[s] for m in f.members for s in plan.consumers.get(m, ())}
        supported = not any(plan.node_types.get(n) in caps.hccl_no_zero_copy for n in nodes)
        if root in grouped or not supported:
            out[root] = None
        elif is_data:
            out[root] = "input"
        else:
            out[root] = "output" if slots[root] == 1 and _output_holds(plan, f, outputs) else None
    return out


def _output_holds(plan: PlanObservation, f, outputs: set[str]) -> bool:
    """The user's buffer of the output can be the symbol's memory only when the output starts the
    symbol and is as large as the bytes its tasks write (a piece of a larger symbol is copied)."""
    root = plan.tensor[f.root]
    ms = [plan.tensor[m] for m in f.members]
    if any(m.nbytes is None for m in ms):
        return True
    extent = max(m.offset - root.offset + m.nbytes for m in ms)
    return all(m.offset == root.offset and m.nbytes >= extent for m in ms if m.name in outputs)


def _zc_io(plan: PlanObservation):
    if not _zc_io_facts(plan):
        return
    for root, why in sorted(expected_zero_copy(plan).items()):
        t = plan.tensor[root]
        if why and not (t.zero_copy and t.region == "zero_copy"):
            yield violation(f"tensor {root!r}", f"is a graph {why} GE places zero copy, but the plan puts it in "
                            f"{t.region!r} with zero_copy={t.zero_copy}", expected=why)
        elif not why and t.zero_copy:
            yield violation(f"tensor {root!r}", "is placed zero copy, but it feeds a continuous input or is a "
                            "continuous output, touches an "
                            "op without zero-copy support on this SoC, feeds several NetOutput slots or is a "
                            "piece of a larger tensor", expected=None)


ZC_IO = Invariant(
    id="MEM-ZC-IO",
    title="Graph I/O is zero copy exactly where GE makes it so",
    statement="A graph input (the output of a root Data node) is zero copy unless its memory feeds a continuous "
              "input or a node touching it has no zero-copy support on the plan's SoC (the spec's capability "
              "table); a tensor feeding the NetOutput is zero copy exactly when its memory feeds exactly one "
              "NetOutput slot, no node touching it lacks zero-copy support, it feeds no continuous input, is "
              "no continuous output, and "
              "the output starts its memory and is as large as every write into it. Everything else is not zero "
              "copy.",
    rationale="The spec recomputes which I/O is zero copy from the graph, instead of believing the plan's flag: "
              "a planner that quietly drops the flag (and lets the tensor take a freed feature-map block) "
              "satisfies every claim that starts from the flag, while the runtime then copies where GE binds "
              "the user's buffer, or an intermediate tensor shares bytes with the user's data.",
    ge_source=GE_MEM + "block_mem_assigner.cc (BlockMemAssigner::IsZeroCopyBlock, GetOutputFlowToNetoutputNum, "
              "IsNodeSupportZeroCopy, ApplyContinuousMemory)",
    applies_to="plan", concern="blocks", predicate=_zc_io,
    precondition=lambda plan: _zc_io_facts(plan) and bool(expected_zero_copy(plan)),
    ge_only=True,
)


# -- MEM-ATOMIC-NOREUSE -----------------------------------------------------------------------

def _group_mates(plan: PlanObservation, root: str) -> set[str]:
    """Roots sharing a continuous-input group or a node's continuous outputs with ``root``, and the groups
    chained to those through a shared root (continuous outputs feeding continuous inputs lie in one block,
    GE's ``ContinuousMemMng``): they share its block by design."""
    groups = [{plan.root(n) for n in g.tensors} for g in (*continuous_inputs(plan), *continuous_outputs(plan))]
    mates, grew = {root}, True
    while grew:
        grew = False
        for roots in groups:
            if roots & mates and not roots <= mates:
                mates |= roots
                grew = True
    return mates


def _exclusive(plan: PlanObservation, names: set[str], what: str):
    """Tensors in ``names`` own their block (apart from their continuous-input group, whose
    members are laid out together in one block: GE's block_mem_assigner.cc
    `AssignContinuousBlocks`, `GetNoNeedAssignMemoryFlag`) and their bytes."""
    fams = families(plan)
    targets = [f for f in fams if set(f.members) & names]
    for f in targets:
        t = plan.tensor[f.root]
        b = plan.block.get(t.block) if t.block is not None else None
        others = [r for r in _roots(plan, b.tensors) if r != f.root and r not in _group_mates(plan, f.root)] if b else []
        if others:
            yield violation(f"block {b.id!r}", f"holds {what} tensor {f.root!r} and also {others}")
    for target, other in byte_overlaps(fams, targets):
        yield violation(f"tensor {other.root!r}", f"uses bytes [{max(target.offset, other.offset)}, "
                        f"{min(target.end, other.end)}) of {what} tensor {target.root!r}", owner=target.root)


ATOMIC_NOREUSE = Invariant(
    id="MEM-ATOMIC-NOREUSE",
    title="Atomic-clean outputs are not reused by other nodes",
    statement="A tensor written by an atomic (memset-cleaned) output owns its block and its bytes for the "
              "whole run: no other tensor, at any step, uses any of its bytes. The one exception is a "
              "continuous-input group it feeds, whose members share one block side by side (with the "
              "continuous outputs and continuous-input groups chained to it through a shared tensor).",
    rationale="An atomic output is cleaned by a separate memset task before the kernel accumulates into it; GE "
              "gives atomic outputs a whole-graph life and places them after the feature-map blocks so the "
              "clean can never wipe another tensor's data, and blocks holding atomic memory never share with "
              "Data blocks.",
    ge_source=GE_MEM + "graph_mem_assigner.cc (ReAssignAtomicMemory, AssignAtomicOutputMemory); block_type_list.cc",
    applies_to="plan", concern="blocks",
    predicate=lambda plan: _exclusive(plan, set(plan.atomic), "atomic"),
    precondition=lambda plan: bool(plan.atomic),
)


# -- MEM-FIXED-NOREUSE ------------------------------------------------------------------------

# GE's zero-memory node types (block_mem_assigner.cc CheckIsZeroMemNodeType): their outputs take no
# feature-map block and keep fixed addresses.
ZERO_MEMORY_TYPES = frozenset({"Variable", "Const", "Constant", "MultiShape", "HvdWait", "FileConstant",
                               "ConstPlaceHolder"})


def _fixed_names(plan: PlanObservation) -> set[str]:
    by_type = {t for t, n in plan.producers.items() if plan.node_types.get(n) in ZERO_MEMORY_TYPES}
    in_fixed_arena = {t.name for t in plan.tensors if getattr(plan.arena(t.region), "kind", "") in ("constants", "state")}
    return set(plan.fixed) | by_type | in_fixed_arena


FIXED_NOREUSE = Invariant(
    id="MEM-FIXED-NOREUSE",
    title="Fixed addresses (constants, variables) are never reused",
    statement="A constant, variable or other fixed-address tensor (a weight, the output of one of GE's "
              "zero-memory node types such as Variable, or placed in the weight or fixed region, or in any arena "
              "of kind constants or state) owns its block and its bytes for the whole run.",
    rationale="Weights and variables are written once at load (or persist across runs) and are read by every "
              "execution; GE gives them no feature-map block at all (zero-memory node types) and their "
              "addresses are never refreshed, so sharing their bytes with anything would corrupt later runs.",
    ge_source=GE_MEM + "block_mem_assigner.cc (BlockMemAssigner::CheckIsZeroMemNodeType); "
              "runtime/v1/graph/load/model_manager/memory_app_type_classifier.h (kMemoryTypeFix)",
    applies_to="plan", concern="blocks",
    predicate=lambda plan: _exclusive(plan, _fixed_names(plan), "fixed-address"),
    precondition=lambda plan: bool(_fixed_names(plan)),
)


# -- MEM-CONT-INPUT ---------------------------------------------------------------------------

def _continuous(plan: PlanObservation):
    for g in continuous_inputs(plan):
        ts = [plan.tensor[n] for n in g.tensors]
        for i, (a, b) in enumerate(zip(ts, ts[1:])):
            yield from _next_piece(plan, g, i, a, b)
        for t in ts:
            if t.zero_copy:
                yield violation(f"tensor {t.name!r}", f"feeds continuous consumer {g.consumer!r} and so must not "
                                f"be zero-copy", consumer=g.consumer)


def _next_piece(plan: PlanObservation, g, i: int, a, b):
    """Input i+1 must start where input i's piece ends (padded size, known NoPadding piece, or, for a
    NoPadding group without piece sizes, somewhere after a's start and no later than its end)."""
    if g.padding or g.pieces:
        step = align_up(a.size, granularities(plan)[0].get(a.region, 1)) if g.padding else g.pieces[i]
        ok, want = b.offset == a.offset + step, f"{a.region}+{a.offset + step}"
    else:
        ok, want = a.offset < b.offset <= a.end, f"{a.region}+({a.offset}, {a.end}]"
    if b.region != a.region or not ok:
        yield violation(f"tensor {b.name!r}", f"input {i + 1} of continuous consumer {g.consumer!r} is at "
                        f"{b.region}+{b.offset}, expected {want}, right after input {i} {a.name!r}",
                        consumer=g.consumer, expected=want)


CONT_INPUT = Invariant(
    id="MEM-CONT-INPUT",
    title="Continuous inputs are contiguous in input order",
    statement="The inputs of a continuous-input node sit back to back in input order, in one region: each "
              "starts where the previous one's piece ends: its size rounded up to the block granularity, or for "
              "NoPadding groups its piece (raw size with the dims before the concat axis set to 1; when the "
              "pieces are not given, after the previous input's start and no later than its end). None of them "
              "is zero-copy.",
    rationale="Continuous-input kernels (HCCL collectives, concat-by-placement) take one base address and "
              "read all inputs from it. A zero-copy input would be re-pointed at a user buffer that is not "
              "next to the others, so GE never makes data flowing into a continuous input zero-copy.",
    ge_source=GE_MEM + "block_mem_assigner.cc (AssignContinuousBlocks); graph_mem_assigner.cc "
              "(ReAssignContinuousMemory)",
    applies_to="plan", concern="blocks", predicate=_continuous,
    precondition=lambda plan: any(continuous_inputs(plan)),
    ge_only=True,
)


# -- MEM-CONT-OUTPUT --------------------------------------------------------------------------

def _continuous_out(plan: PlanObservation):
    for g in continuous_outputs(plan):
        ts = [plan.tensor[n] for n in g.tensors]
        if all(t.alias_of for t in ts):
            continue   # its outputs reuse its inputs (a view): GE's ApplyContinuousMemory skips such a node
        for i, (a, b) in enumerate(zip(ts, ts[1:])):
            want = a.offset + align_up(a.size, granularities(plan)[0].get(a.region, 1))
            if b.region != a.region or b.offset != want:
                yield violation(f"tensor {b.name!r}", f"output {i + 1} of continuous-output node {g.node!r} is at "
                                f"{b.region}+{b.offset}, expected {a.region}+{want}, right after output {i} "
                                f"{a.name!r}", node=g.node, expected=want)
        for t in ts:
            if t.zero_copy:
                yield violation(f"tensor {t.name!r}", f"is a continuous output of {g.node!r} and so must not be "
                                "zero-copy", node=g.node)


CONT_OUTPUT = Invariant(
    id="MEM-CONT-OUTPUT",
    title="Continuous outputs are contiguous in output order",
    statement="The outputs of a node with continuous outputs (GE's continuous_output attribute and two or more "
              "outputs: fused HCCL) sit back to back in output order, in one region: each starts where the "
              "previous one ends, its size rounded up to the block granularity. None of them is zero-copy. A "
              "node whose outputs all reuse its inputs (a view: an outer-axis Split) is not judged: GE lays out no "
              "continuous memory for it.",
    rationale="A fused collective writes all its outputs from one base address. A zero-copy output would be "
              "re-pointed at a user buffer that is not next to the others, so GE plans one block for all of "
              "them and never makes one zero copy; a graph output of such a node gets a copy before the "
              "NetOutput (the conflict optimizer's Identity).",
    ge_source=GE_MEM + "block_mem_assigner.cc (BlockMemAssigner::ApplyContinuousMemory, which skips a node whose "
              "outputs reuse its inputs); graph_mem_assigner.cc (AssignContinuousOutputMemory); compiler/graph/optimize/mem_layout_conflict_optimize/"
              "mem_layout_conflict_util.cc (MemLayoutConflictUtil::IsContinuousOutput)",
    applies_to="plan", concern="blocks", predicate=_continuous_out,
    precondition=lambda plan: any(continuous_outputs(plan)),
    ge_only=True,
)


# -- MEM-WS-OWNER -----------------------------------------------------------------------------

def _ws_owner(plan: PlanObservation):
    for name, owner in sorted(plan.workspaces.items()):
        t, step = plan.tensor[name], plan.order.index(owner)
        if (t.first, t.last) != (step, step):
            yield violation(f"tensor {name!r}", f"is a workspace of {owner!r} (step {step}) but its lifetime is "
                            f"{t.first}..{t.last}", owner=owner, step=step)


WS_OWNER = Invariant(
    id="MEM-WS-OWNER",
    title="A workspace lives exactly during its node",
    statement="A workspace tensor's lifetime is exactly the step of the node that owns it.",
    rationale="Workspaces are scratch memory of one kernel; GE releases them at the next node. A longer "
              "lifetime wastes memory, a different step lets another node's tensor overwrite the scratch "
              "while the kernel runs.",
    ge_source=GE_MEM + "block_mem_assigner.cc (workspace release queue)",
    applies_to="plan", concern="blocks", predicate=_ws_owner,
    precondition=lambda plan: bool(plan.workspaces),
)


INVARIANTS = (ZC_NOMERGE, ZC_NOREUSE, ZC_IO, ATOMIC_NOREUSE, FIXED_NOREUSE, CONT_INPUT, CONT_OUTPUT, WS_OWNER)
