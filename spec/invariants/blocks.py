"""Blocks: which tensors may share planner memory (applies to plans).

GE's reuse rules forbid sharing for zero-copy, atomic, continuous and fixed
memory (ge-facts.md 2.5); these claims check the outcome in the plan, not the
rules' implementation.
"""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._util import align_up, byte_overlaps, families
from zcspec.spec.observables.plan import PlanObservation

GE_MEM = "compiler/graph/build/memory/"


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
              "merge); graph_mem_assigner.h; ge-facts.md 2.4.2, 2.5.10, 3.6.2",
    applies_to="plan", concern="blocks", predicate=_zc_nomerge,
    precondition=lambda plan: any(b.zero_copy for b in plan.blocks),
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
              "(AssignZeroCopyMemory); ge-facts.md 2.4.2, 2.5.10, 2.7.4, 3.2",
    applies_to="plan", concern="blocks", predicate=_zc_noreuse,
    precondition=lambda plan: any(t.zero_copy for t in plan.tensors),
)


# -- MEM-ATOMIC-NOREUSE -----------------------------------------------------------------------

def _group_mates(plan: PlanObservation, root: str) -> set[str]:
    """Roots sharing a continuous-input group with ``root``: they share its block by design."""
    mates: set[str] = set()
    for g in plan.continuous_groups:
        roots = {plan.root(n) for n in g.tensors}
        if root in roots:
            mates |= roots
    return mates


def _exclusive(plan: PlanObservation, names: set[str], what: str):
    """Tensors in ``names`` own their block (apart from their continuous-input group, whose
    members are laid out together in one block, ge-facts.md 2.4.4, 2.5.4) and their bytes."""
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
              "continuous-input group it feeds, whose members share one block side by side.",
    rationale="An atomic output is cleaned by a separate memset task before the kernel accumulates into it; GE "
              "gives atomic outputs a whole-graph life and places them after the feature-map blocks so the "
              "clean can never wipe another tensor's data, and blocks holding atomic memory never share with "
              "Data blocks.",
    ge_source=GE_MEM + "graph_mem_assigner.cc (ReAssignAtomicMemory, AssignAtomicOutputMemory); block_type_list.cc; "
              "ge-facts.md 2.5.4, 2.5.11, 3.3.2",
    applies_to="plan", concern="blocks",
    predicate=lambda plan: _exclusive(plan, set(plan.atomic), "atomic"),
    precondition=lambda plan: bool(plan.atomic),
)


# -- MEM-FIXED-NOREUSE ------------------------------------------------------------------------

def _fixed_names(plan: PlanObservation) -> set[str]:
    return set(plan.fixed) | {t.name for t in plan.tensors if t.region in ("weight", "fixed")}


FIXED_NOREUSE = Invariant(
    id="MEM-FIXED-NOREUSE",
    title="Fixed addresses (constants, variables) are never reused",
    statement="A constant, variable or other fixed-address tensor (listed in fixed, or placed in the weight "
              "or fixed region) owns its block and its bytes for the whole run.",
    rationale="Weights and variables are written once at load (or persist across runs) and are read by every "
              "execution; GE gives them no feature-map block at all (zero-memory node types) and their "
              "addresses are never refreshed, so sharing their bytes with anything would corrupt later runs.",
    ge_source=GE_MEM + "block_mem_assigner.cc (CheckIsZeroMemNodeType); runtime/v1/.../memory_app_type_classifier.cc "
              "(kMemoryTypeFix); ge-facts.md 2.5.3, 6.7.1",
    applies_to="plan", concern="blocks",
    predicate=lambda plan: _exclusive(plan, _fixed_names(plan), "fixed-address"),
    precondition=lambda plan: bool(_fixed_names(plan)),
)


# -- MEM-CONT-INPUT ---------------------------------------------------------------------------

def _continuous(plan: PlanObservation):
    for g in plan.continuous_groups:
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
        step = align_up(a.size, plan.alignment.block.get(a.region, 1)) if g.padding else g.pieces[i]
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
              "(ReAssignContinuousMemory); ge-facts.md 2.5.6-2.5.7, 2.6.4, 3.5.2",
    applies_to="plan", concern="blocks", predicate=_continuous,
    precondition=lambda plan: any(len(g.tensors) >= 2 for g in plan.continuous_groups),
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
    ge_source=GE_MEM + "block_mem_assigner.cc (workspace release queue); ge-facts.md 2.2.5",
    applies_to="plan", concern="blocks", predicate=_ws_owner,
    precondition=lambda plan: bool(plan.workspaces),
)


INVARIANTS = (ZC_NOMERGE, ZC_NOREUSE, ATOMIC_NOREUSE, FIXED_NOREUSE, CONT_INPUT, WS_OWNER)
