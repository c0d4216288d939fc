"""Copy the inputs a continuous-input node cannot have in place.

A continuous-input node (HCCL collectives: padding; PhonyConcat: no padding,
ge-facts.md 2.5.6-2.5.7) needs its inputs back to back in one block. That is
impossible when an input's memory is already pinned elsewhere: a weight or
variable (fixed address), a tensor that another continuous node (or an
earlier input of the same node) already places, including through a view or
an in-place alias. GE inserts a copy before such inputs (its HCCL memcpy
passes); so does this pass: a ``MemcpyAddrAsync`` (its addresses sit in its
argument table, so it stays refreshable when it reads a model input) named
``<node>_MemcpyAddrAsync_<i>``, on the consumer's stream and batch branch. Graph inputs are not copied: they
join the block and lose zero copy instead (2.6.1), except when the block is
itself a graph output (a PhonyConcat feeding the NetOutput): the user's input
cannot live in the user's output buffer, so it is copied there.

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
    return root in graph.weight or rules.zero_memory(graph.node[graph.producer[root]])


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
