"""The structure of an ONNX graph before any type is known: names, inputs, producers, order.

``structure(graph)`` checks what shape inference and folding rely on and
returns an :class:`OnnxStructure`:

- node names: an ONNX node keeps its own name when it has one; an unnamed node
  is called ``<op_type>_<index>`` (its position in the file). Names are made
  unique and never equal a Data node's name (the graph input's tensor name) or
  ``NetOutput``: a clash gets a ``_1``, ``_2``... suffix. Named nodes claim
  their names before unnamed ones are numbered, so a name never depends on a
  later node.
- real inputs: ``graph.input`` minus the initializers (ONNX IR v3 lists every
  initializer as an input too; those are constants, not Data nodes).
- every tensor a node reads (or the graph outputs) is produced exactly once, by
  a real input, an initializer or a node output: else MissingTensorError or a
  GraphError naming both writers.
- the nodes in a stable topological order (file order among ready nodes);
  a cycle raises CycleError naming its nodes.
- graph inputs and outputs are tensors: a sequence, map or optional value is an
  UnsupportedFeatureError (the IR holds dense tensors only).
"""
from __future__ import annotations

import attrs
import networkx as nx
import onnx

from zcspec.impl.compiler import op_limits
from zcspec.impl.compiler.errors import CycleError, DuplicateNameError, GraphError, MissingTensorError
from zcspec.impl.compiler.frontend.errors import UnsupportedFeatureError

NETOUTPUT = "NetOutput"


@attrs.frozen(eq=False)
class OnnxStructure:
    """Node i of ``nodes`` is called ``names[i]``; both are in execution order."""

    nodes: tuple[onnx.NodeProto, ...]
    names: tuple[str, ...]
    inputs: tuple[onnx.ValueInfoProto, ...]
    initializers: dict[str, onnx.TensorProto]
    outputs: tuple[str, ...]


def node_names(nodes, reserved) -> list[str]:
    """A unique IR name for each ONNX node (see the module docstring for the rule)."""
    taken = set(reserved)
    names: list[str | None] = [None] * len(nodes)

    def claim(i: int, wanted: str) -> None:
        name, k = wanted, 0
        while name in taken:
            k += 1
            name = f"{wanted}_{k}"
        taken.add(name)
        names[i] = name

    for i, n in enumerate(nodes):
        if n.name:
            claim(i, n.name)
    for i, n in enumerate(nodes):
        if not n.name:
            claim(i, f"{n.op_type}_{i}")
    return names


def _producers(graph: onnx.GraphProto, names: list[str], inputs) -> dict[str, str]:
    """Tensor -> who writes it ("" for inputs and initializers); GraphError on a second writer."""
    writer: dict[str, str] = {}

    def write(tensor: str, who: str) -> None:
        if tensor in writer:
            first = writer[tensor] or "a graph input or initializer"
            second = who or "a graph input or initializer"
            raise GraphError(
                f"tensor {tensor!r} is written more than once (by {first} and by {second}); "
                "ONNX requires a single assignment per tensor",
                tensor=tensor, node=writer[tensor] or who,
            )
        writer[tensor] = who

    for v in inputs:
        write(v.name, "")
    for t in graph.initializer:
        write(t.name, "")
    for name, n in zip(names, graph.node):
        for t in n.output:
            if t:
                write(t, name)
    return writer


def _check_reads(graph: onnx.GraphProto, names: list[str], writer: dict[str, str]) -> None:
    for name, n in zip(names, graph.node):
        for t in n.input:
            if t and t not in writer:
                raise MissingTensorError(t, node=name)
    for out in graph.output:
        if out.name not in writer:
            raise MissingTensorError(out.name, role="output")


def _execution_order(graph: onnx.GraphProto, names: list[str], writer: dict[str, str]) -> list[int]:
    dg = nx.DiGraph()
    dg.add_nodes_from(range(len(names)))
    index = {name: i for i, name in enumerate(names)}
    for i, n in enumerate(graph.node):
        for t in n.input:
            if t and writer.get(t):
                dg.add_edge(index[writer[t]], i)
    try:
        return list(nx.lexicographical_topological_sort(dg))
    except nx.NetworkXUnfeasible:
        cycle = nx.find_cycle(dg)
        raise CycleError(tuple(names[edge[0]] for edge in cycle)) from None


def _type_name(t: onnx.TypeProto) -> str:
    """ONNX's spelling of a type: ``tensor(float)``, ``seq(tensor(float))``, ``optional(...)``, ``map(...)``."""
    kind = t.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        elem = onnx.TensorProto.DataType.Name(getattr(t, kind).elem_type).lower()
        return f"{'sparse_' if kind == 'sparse_tensor_type' else ''}tensor({elem})"
    if kind == "sequence_type":
        return f"seq({_type_name(t.sequence_type.elem_type)})"
    if kind == "optional_type":
        return f"optional({_type_name(t.optional_type.elem_type)})"
    if kind == "map_type":
        key = onnx.TensorProto.DataType.Name(t.map_type.key_type).lower()
        return f"map({key}, {_type_name(t.map_type.value_type)})"
    return kind or "of no type"


def _check_tensor_types(graph: onnx.GraphProto, names: list[str], inputs) -> None:
    """Every graph input and output is a tensor: a sequence, map or optional value is refused,
    naming the node that reads (or writes) it and the op_limits feature."""
    for value, role in [*((v, "input") for v in inputs), *((v, "output") for v in graph.output)]:
        if value.type.WhichOneof("value") in (None, "tensor_type", "sparse_tensor_type"):
            continue
        i = next((k for k, n in enumerate(graph.node) if value.name in (n.input if role == "input" else n.output)), None)
        op, node = (graph.node[i].op_type, names[i]) if i is not None else ("", "")
        what = f"graph {role} {value.name!r} is {_type_name(value.type)}"
        raise UnsupportedFeatureError(node, op_limits.message(op, op_limits.find(op, "non-tensor"), what),
                                      tensor=value.name)


def structure(graph: onnx.GraphProto) -> OnnxStructure:
    """Check and order ``graph`` (see the module docstring); raises the first GraphError found."""
    init_names = {t.name for t in graph.initializer}
    inputs = tuple(v for v in graph.input if v.name not in init_names)
    seen: set[str] = set()
    for v in inputs:
        if v.name in seen:
            raise DuplicateNameError("graph input", v.name)
        seen.add(v.name)
    names = node_names(graph.node, reserved=[v.name for v in inputs] + [NETOUTPUT])
    writer = _producers(graph, names, inputs)
    _check_reads(graph, names, writer)
    _check_tensor_types(graph, names, inputs)
    order = _execution_order(graph, names, writer)
    return OnnxStructure(
        nodes=tuple(graph.node[i] for i in order),
        names=tuple(names[i] for i in order),
        inputs=inputs,
        initializers={t.name: t for t in graph.initializer},
        outputs=tuple(o.name for o in graph.output),
    )
