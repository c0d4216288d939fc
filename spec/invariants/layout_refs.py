"""Where GE's rules decide sharing: a ref output is computed in its input's memory.

A node whose output is declared a ref of one of its inputs (GE's ``IsRefFromInput``; a zcspec graph's
``_reuse_input``) writes that output over the input: block_mem_assigner.cc ``ApplyOutMemory`` gives the
output the input's block instead of a new one, and GE trusts the flag. zcspec keeps a guard GE does not
(docs/ge-deviations.md, row P9): the output gets memory of its own when writing over the input could
change a value something else still reads (a graph input, weight or variable; a symbol read later or on
another stream; a piece of a no-padding concat). Giving a ref output its own memory is always safe, so
no safety claim sees a planner that stops honouring refs; this one does. It applies only where the plan
itself shows that none of the guard's reasons holds, read from the plan's own facts (the ``alias_of``
chains, ``consumers``, ``producers``, ``streams``, ``node_types``, the spec's op facts), never from the
planner's decision:

- the input's memory is a computed tensor's (feature map, or the zero-copy region when a graph output
  shares it), not a graph input's, a weight's or a variable's;
- every tensor of that memory computed before the node (the input and its aliases) is neither a graph
  output nor read after the node, and every task that reads one of them runs on the node's stream;
- none of them is written or read by a no-padding concat (its pieces share one output).
"""
from __future__ import annotations

from zcspec.spec import op_facts
from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._util import GE_MEM
from zcspec.spec.observables.plan import PlanObservation, alias_root

# The regions a computed tensor lives in: the feature map, or the zero-copy region when it is a graph output.
WORK = ("feature_map", "zero_copy")
# Producers whose outputs are the model's fixed memory: graph inputs, state, constants.
FIXED_PRODUCERS = frozenset({"Data", "RefData", "AippData", "Variable", "Const", "Constant"})


def _nopadding(plan: PlanObservation, node: str | None) -> bool:
    return node is not None and op_facts.continuous_input(plan.node_types.get(node, "")) == "nopadding"


def _free_to_overwrite(plan: PlanObservation, out: str, into: str) -> bool:
    """Whether the plan's own facts show that the node writing ``out`` may write over ``into``'s memory."""
    step = {n: i for i, n in enumerate(plan.order)}
    node = plan.producers.get(out)
    if node is None or node not in step:
        return False
    here, by = step[node], plan.tensor
    root = alias_root(by, into)
    owner = plan.producers.get(root)
    if (by[root].region not in WORK or root in plan.fixed or root in plan.graph_inputs or owner is None
            or plan.node_types.get(owner) in FIXED_PRODUCERS):
        return False
    outputs, stream = set(plan.graph_outputs), plan.streams.get(node)
    for t in plan.tensors:
        if t.name == out or alias_root(by, t.name) != root:
            continue
        made = step.get(plan.producers.get(t.name, ""), -1)
        if made >= here:   # computed after the node: over the output, not the input
            continue
        if t.name in outputs or _nopadding(plan, plan.producers.get(t.name)):
            return False
        for r in plan.consumers.get(t.name, ()):
            reader = plan.order[r]
            if r > here or _nopadding(plan, reader):
                return False
            if reader != node and reader in plan.streams and plan.streams[reader] != stream:
                return False
    return True


def _applicable(plan: PlanObservation):
    return [(out, into) for out, into in sorted(plan.refs.items()) if _free_to_overwrite(plan, out, into)]


def _ref_shares_input(plan: PlanObservation):
    for out, into in _applicable(plan):
        o, i = plan.tensor[out], plan.tensor[into]
        if (o.region, o.offset) != (i.region, i.offset):
            yield violation(f"tensor {out!r}", f"is a ref of {into!r} (its node's _reuse_input), which nothing "
                            f"reads after it and no graph input, weight or variable owns, yet it lies at "
                            f"{o.region}+{o.offset} while {into!r} lies at {i.region}+{i.offset}: GE computes a "
                            f"ref output in its input's memory", offset=o.offset, expected=i.offset,
                            region=o.region, input=into)


REF_SHARES_INPUT = Invariant(
    id="LAYOUT-REF-SHARES-INPUT",
    title="A ref output that may overwrite its input lies in its input's memory",
    statement="For every tensor the graph declares a ref of an input of its node (refs), where the plan shows "
              "the node may overwrite that input (the input's memory is a computed tensor's, in the feature map "
              "or the zero-copy region, not a graph input's, a weight's or a variable's; every tensor of that memory computed before the node is no graph output, "
              "is read by no task after the node or on another stream, and is neither written nor read by a "
              "no-padding concat), the output starts at the input's region and offset.",
    rationale="A ref output with memory of its own is safe, so no safety claim notices a planner that stops "
              "honouring refs; but it is not GE's layout: GE gives the output its input's block "
              "(ApplyOutMemory, trusting IsRefFromInput), the kernel writes in place, and the memory the model "
              "asks for is smaller by the output's block. zcspec's guard (docs/ge-deviations.md, P9) gives the "
              "output its own memory only where writing in place could change a value something still reads; "
              "where the plan shows no such reader, the ref must be honoured.",
    ge_source=GE_MEM + "block_mem_assigner.cc (BlockMemAssigner::ApplyOutMemory, IsSymbolExist); graph_metadef/"
              "graph/utils/graph_utils.cc (GraphUtils::IsRefFromInput, GetRefMapping)",
    applies_to="plan", concern="layout_refs", predicate=_ref_shares_input,
    precondition=lambda plan: bool(_applicable(plan)), ge_only=True, needs=("refs",),
)

INVARIANTS = (REF_SHARES_INPUT,)
