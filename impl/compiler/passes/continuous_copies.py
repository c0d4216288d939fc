"""Copy the inputs a continuous-input node cannot have in place.

A continuous-input node (HCCL collectives: padding; PhonyConcat: no padding,
ge-facts.md 2.5.6-2.5.7) needs its inputs back to back in one block. GE puts a
copy (an Identity) before an input whose memory cannot be a piece of that block;
so does this pass, with a ``MemcpyAddrAsync`` (its addresses sit in its argument
table, so it stays refreshable when it reads a model input) named
``<node>_MemcpyAddrAsync_<i>``, on the consumer's stream and batch branch. An input
is copied when

- its memory is pinned elsewhere: a weight or variable (fixed address), or a
  tensor that another continuous node (or an earlier input of the same node)
  already places, including through a view or an in-place alias
  (``HcclContinuousMemcpyPass::ContinuousInputProcess``: a Const or var-like
  producer, ``IsDataNode``, and an output feeding several continuous inputs,
  ``HasMultiPeerNodeRequireInputContinuous``);
- it is a graph input: the output of a root Data feeding it directly
  (``ContinuousInputProcess`` puts an Identity between a Data and a
  ``continuous_input`` op, whatever its input count), or the Data's memory reaching
  a node with more than one input through a view (``MemLayoutConflictOptimizer``:
  user input x (NoPadding) continuous input, ``user_in_and_continuous_in_out_checker.cc``).
  So the Data keeps its own zero-copy buffer and only the copy joins the block
  (ge-facts.md 2.6.4, 5.4.5). GE puts the optimizer's Identity right after the
  Data, for all its readers; the copy here serves the continuous input only, with
  the same effect on the block;
- its memory holds a piece of a larger tensor: an outer-axis Split/Slice view
  (GE's no-task Split, a NoPadding continuous output whose outputs reuse input 0,
  ``GraphUtils::IsNoPaddingRefFromInput``) is a member of its symbol, on a node
  with more than one input (``checker.cc`` absolute conflict continuous input x
  NoPadding continuous output; ``nopadding_continuous_input_and_nopadding_continuous_out.cc``
  for PhonyConcat, which spares a Split reading the concat's own output), or the
  input starts inside its root (no block can start there).

``insert_continuous_copies(graph, options) -> Graph`` is pure and returns its
input when nothing needs a copy; the planner raises PlanError on such graphs
when the pass is off.
"""
from __future__ import annotations

import attrs

from zcspec.impl.compiler.ir import Graph, Node, TensorDesc
from zcspec.impl.compiler.memory import rules
from zcspec.impl.compiler.memory.lifetimes import lifetimes
from zcspec.impl.compiler.validate import validate

NAME = "continuous_copies"
OP = "MemcpyAddrAsync"


def _pinned(graph: Graph, root: str) -> bool:
    """Memory at a fixed address: a weight or a variable's output."""
    return root in graph.weight or rules.zero_memory(graph.node[graph.producer[root]])


def _user_input(graph: Graph, node, t: str, root: str) -> bool:
    """Input ``t`` (memory ``root``) is the user's input buffer, which GE never lets a continuous block hold:
    a Data feeds it directly (HcclContinuousMemcpyPass), or through views into a node GE counts as
    continuous, one with more than one input (MemLayoutConflictUtil::IsContinuousInput)."""
    if not rules.is_data(graph.node[graph.producer[root]]):
        return False
    return t == root or len(node.inputs) > 1


def _piece_views(graph: Graph, lt, root: str):
    """The outer-axis Split/Slice views in ``root``'s symbol: each output is a piece of its input."""
    seen = set()
    for m in lt.members[root]:
        p = graph.node[graph.producer[m]] if m in graph.producer else None
        if p is not None and p.name not in seen and p.attr("_view_offsets") is not None:
            seen.add(p.name)
            yield p


def _holds_a_piece(graph: Graph, lt, node, root: str) -> bool:
    """GE's continuous input x NoPadding continuous output conflict: a symbol with a piece view in it
    cannot be one piece of a continuous block (the views' bytes belong to the larger tensor). A
    PhonyConcat whose own output a view cuts again (PhonyConcat -> PhonySplit) is spared."""
    if len(node.inputs) < 2:
        return False
    spared = rules.continuous_input(node) == "nopadding" and node.outputs
    return any(not (spared and v.inputs and v.inputs[0] == node.outputs[0]) for v in _piece_views(graph, lt, root))


def _block_is_an_output(graph: Graph, lt, node) -> bool:
    """A no-padding group whose joint block is (a view of) a graph output: its pieces are
    computed straight into the user's output buffer (ge-facts.md 5.2.2a)."""
    if rules.continuous_input(node) != "nopadding":
        return False
    return any(lt.root.get(t) == lt.root.get(node.outputs[0]) for t in graph.outputs) if node.outputs else False


def _copies_needed(graph: Graph) -> dict[str, set[int]]:
    """Continuous node -> input positions that need a copy."""
    lt = lifetimes(graph)
    claimed: set[str] = set()
    need: dict[str, set[int]] = {}
    inputs = set(graph.inputs)
    for name in lt.order:
        node = graph.node[name]
        if rules.continuous_input(node) is None:
            continue
        into_output = _block_is_an_output(graph, lt, node)
        for i, t in enumerate(node.inputs):
            r = lt.root[t]
            if (_pinned(graph, r) or r in claimed or (into_output and r in inputs)
                    or _user_input(graph, node, t, r) or _holds_a_piece(graph, lt, node, r)
                    or lt.offset.get(t, 0)):   # a piece inside another tensor's memory: no block starts there
                need.setdefault(name, set()).add(i)
            else:
                claimed.add(r)
        if rules.continuous_input(node) == "nopadding" and node.outputs:
            claimed.add(lt.root[node.outputs[0]])   # the joint block itself is now placed
    return need


def insert_continuous_copies(graph: Graph, options=None) -> Graph:
    need = _copies_needed(graph)
    if not need:
        return graph
    nodes, tensors = [], list(graph.tensors)
    for n in graph.nodes:
        if n.name not in need:
            nodes.append(n)
            continue
        inputs = list(n.inputs)
        for i in sorted(need[n.name]):
            copy, out = f"{n.name}_{OP}_{i}", f"{n.name}_{OP}_{i}:0"
            desc = graph.desc[inputs[i]]
            tensors.append(TensorDesc(out, desc.shape, desc.dtype, desc.format))
            label = {"_batch_label": rules.batch_label(n)} if rules.batch_label(n) else {}
            nodes.append(Node(copy, OP, (inputs[i],), (out,), {**label, "_inserted_by": NAME}, n.stream))
            inputs[i] = out
        nodes.append(attrs.evolve(n, inputs=tuple(inputs)))
    return validate(attrs.evolve(graph, nodes=nodes, tensors=tensors))
