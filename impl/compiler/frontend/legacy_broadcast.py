"""Opset 1-6 broadcasting (the ``broadcast`` and ``axis`` attributes) rewritten as numpy broadcasting.

Before opset 7, the element-wise binary ops (Add, Sub, Mul, Div, Pow, And, Or, Xor,
Equal, Greater, Less) broadcast by their attributes, not by numpy's rule:

- ``broadcast=0`` (the default): A and B have the same shape;
- ``broadcast=1``: B is broadcast to A's shape (never the other way). B's dims line up
  with A's starting at ``axis`` (A (2,3,4,5), B (3,4), axis=1: B acts as (1,3,4,1)),
  with A's trailing dims when ``axis`` is absent (numpy's suffix rule), and a B of one
  element acts as a scalar. Each of B's dims equals the A dim it lines up with, or is 1.

Gemm-6 says the same of C: (M, N) with ``broadcast=0``, broadcast to (M, N) with ``broadcast=1``.

The IR, its kernels, ONNX's reference implementation (which folds constants) and
opset 7's schemas broadcast the numpy way, and ONNX's opset-6 shape inference gives the
output A's shape without looking at B. ``numpy_broadcasting(model, shapes)`` therefore
rewrites such a model before the import's shape inference, so that numpy's rule gives the
opset-6 result: it types the model once (its inputs fixed as ``--shape`` fixes them),
checks every opset-6 binary node against the rules above, and

- gives B its aligned shape when ``axis`` leaves trailing dims of A uncovered: B's dims
  followed by 1s (B (3,4) -> (3,4,1) above; numpy's rule then adds the leading 1). A B that
  is an initializer of the graph gets the new dims (a reshaped copy called
  ``<node>/aligned_<B>`` when something else reads B too); any other B (a computed tensor,
  a Constant node's output) goes through an ``Unsqueeze`` node called ``<node>/align_<B>``
  writing ``<node>/aligned_<B>``, which folding turns into a constant when B is one;
- removes ``broadcast`` and ``axis`` from the node, so nothing downstream mistakes it for
  anything but a numpy-broadcasting op. Opset-6 shape inference still gives A's shape,
  which the checks made the numpy result as well.

A node that breaks the rules (B of unequal shape with ``broadcast=0``, a dim that neither
matches nor is 1, B of higher rank than A, an ``axis`` out of range) is a
``LegacyBroadcastError`` naming it, as is a Gemm whose C does not fit (M, N). When the
rules cannot be checked because an operand's shape is unknown before folding (a dim only
a later fold decides), the node is refused with op_limits' ``legacy-broadcast`` feature.

Subgraphs (the branches of an ``If`` not yet inlined) are rewritten too: their nodes are
inlined into the main graph later, past this step. Ops whose opset-1..5 schema has no
shape inference (Add-1, Gemm-1, ...) are left as they are: op_limits refuses those opsets.
A model of opset 7 or later, or without such nodes, is returned unchanged (the same object).
"""
from __future__ import annotations

import functools
from typing import Iterator, Mapping

import onnx
from onnx import defs, helper

from zcspec.impl.compiler.errors import GraphError
from zcspec.impl.compiler.frontend.errors import UnsupportedFeatureError
from zcspec.impl.compiler.frontend.onnx_graph import NETOUTPUT, node_names, structure
from zcspec.impl.compiler.frontend.onnx_shapes import Shape, fixed_input_shapes, inference_model, inferred_model
from zcspec.impl.compiler.op_limits import Unsupported, find, message

LAST_LEGACY_OPSET = 6
# Initializers up to this many elements go to the typing run by value (a Reshape's shape operand must),
# larger ones by type alone: copying a large model's weights for it would double its memory.
BY_VALUE = 4096


class LegacyBroadcastError(GraphError):
    """An opset 1-6 node whose operands break that opset's broadcasting rules."""

    def __init__(self, node: str, op_type: str, attrs: str, why: str, *, tensor: str = ""):
        super().__init__(f"node {node!r}: opset 1-6 {op_type} with {attrs}: {why}",
                         node=node, tensor=tensor)


class UnknownLegacyShapeError(UnsupportedFeatureError):
    """An opset 1-6 broadcasting node whose operand shapes are not known before folding."""

    def __init__(self, node: str, op_type: str, detail: str, *, tensor: str = ""):
        super().__init__(node, message(op_type, _limit(op_type), detail), tensor=tensor)


def _limit(op_type: str) -> Unsupported:
    """op_limits' ``legacy-broadcast`` entry of ``op_type``; an op outside the op table (Equal, And...)
    is met here only to be folded away, and hits the same limit as Add."""
    try:
        return find(op_type, "legacy-broadcast")
    except KeyError:
        return find("Add", "legacy-broadcast")


@functools.cache
def legacy_schema(op_type: str, opset: int) -> defs.OpSchema | None:
    """The default-domain schema of ``op_type`` at ``opset`` when it has the ``broadcast`` attribute."""
    if opset > LAST_LEGACY_OPSET or not defs.has(op_type, ""):
        return None
    try:
        schema = defs.get_schema(op_type, opset, "")
    except defs.SchemaError:  # the op did not exist yet at this opset
        return None
    return schema if "broadcast" in schema.attributes else None


def _default_opset(model: onnx.ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def _handled(node: onnx.NodeProto, opset: int) -> bool:
    """A node this rewrite checks: an op with opset-1..6 broadcasting whose schema ONNX can infer
    (Add-1's cannot, and op_limits refuses it for that)."""
    if node.domain not in ("", "ai.onnx"):
        return False
    schema = legacy_schema(node.op_type, opset)
    return schema is not None and schema.has_type_and_shape_inference_function


def _graphs(graph: onnx.GraphProto, prefix: str = "") -> Iterator[tuple[onnx.GraphProto, str]]:
    """``graph`` and every subgraph under it, each with the prefix that names its nodes in errors
    (``<If node>/``: the node holding it)."""
    yield graph, prefix
    names = _node_names(graph)
    for node, name in zip(graph.node, names):
        for a in node.attribute:
            subs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)
            for g in subs:
                yield from _graphs(g, f"{prefix}{name}/")


def _attr(node: onnx.NodeProto, name: str, default=None):
    return next((helper.get_attribute_value(a) for a in node.attribute if a.name == name), default)


def _types(model: onnx.ModelProto, shapes) -> dict[str, Shape | None]:
    """Tensor -> dims (None for an unknown dim; None for an unknown rank), in every graph of ``model``
    typed once, its inputs fixed by ``shapes`` as the import fixes them (same errors)."""
    st = structure(model.graph)
    fixed = fixed_input_shapes(st.inputs, shapes, initializers=st.initializers)
    consts = [t if _numel(t.dims) <= BY_VALUE else helper.make_tensor_value_info(t.name, t.data_type, t.dims)
              for t in st.initializers.values()]
    typing = inference_model(model, st.inputs, fixed, st.nodes, st.names, consts)
    typed = inferred_model(typing, strict=False)
    out: dict[str, Shape | None] = {}
    for g, _ in _graphs(typed.graph):
        for t in g.initializer:
            out[t.name] = tuple(t.dims)
        for v in (*g.input, *g.value_info, *g.output):
            tt = v.type.tensor_type
            if v.type.HasField("tensor_type") and tt.HasField("shape"):
                out[v.name] = tuple(d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim)
            else:
                out.setdefault(v.name, None)
    return out


def _numel(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _dims(shape: Shape | None) -> str:
    if shape is None:
        return "of unknown rank"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _aligned(name: str, node: onnx.NodeProto, a: Shape | None, b: Shape | None) -> Shape | None:
    """B's shape under numpy's rule that gives ``node``'s opset-1..6 result (None: B as it is);
    LegacyBroadcastError / UnknownLegacyShapeError when the rules are broken or cannot be checked."""
    op, (ta, tb) = node.op_type, node.input[:2]
    broadcast, axis = _attr(node, "broadcast", 0), _attr(node, "axis")
    said = f"broadcast={broadcast}" + ("" if _attr(node, "broadcast") is not None else " (the default)") + (
        "" if axis is None else f", axis={axis}")
    if a is None or b is None:
        unknown = ta if a is None else tb
        raise UnknownLegacyShapeError(name, op, f"{said}; the rank of {unknown!r} is unknown", tensor=unknown)
    if not broadcast:
        if len(a) != len(b) or any(x != y for x, y in zip(a, b) if x is not None and y is not None):
            raise LegacyBroadcastError(
                name, op, said, f"A {ta!r} is {_dims(a)} and B {tb!r} is {_dims(b)}: without broadcast=1 the "
                "two shapes must be equal", tensor=tb)
        if any(x is None or y is None for x, y in zip(a, b)):
            raise UnknownLegacyShapeError(name, op, f"{said}; A {ta!r} is {_dims(a)}, B {tb!r} is {_dims(b)}",
                                          tensor=tb)
        return None
    if len(b) > len(a):
        raise LegacyBroadcastError(name, op, said, f"B {tb!r} {_dims(b)} has a higher rank than A {ta!r} "
                                   f"{_dims(a)}; B is broadcast to A's shape, never the other way", tensor=tb)
    if all(d == 1 for d in b):
        return None  # one element: a scalar, wherever axis puts it; numpy's suffix rule agrees
    start = len(a) - len(b) if axis is None else axis
    if not 0 <= start <= len(a) - len(b):
        raise LegacyBroadcastError(name, op, said, f"B {tb!r} {_dims(b)} does not fit in A {ta!r} {_dims(a)} "
                                   f"from axis {axis}: the axis must be from 0 to {len(a) - len(b)} here (opsets 1-6 "
                                   "give a negative axis no meaning)", tensor=tb)
    for k, d in enumerate(b):
        want = a[start + k]
        if d == 1 or (d is not None and d == want):
            continue
        if d is None or want is None:
            raise UnknownLegacyShapeError(name, op, f"{said}; A {ta!r} is {_dims(a)}, B {tb!r} is {_dims(b)}",
                                          tensor=tb)
        raise LegacyBroadcastError(name, op, said, f"dim {k} of B {tb!r} {_dims(b)} is {d}, and dim {start + k} "
                                   f"of A {ta!r} {_dims(a)} it lines up with is {want}: they must be equal, or B's 1",
                                   tensor=tb)
    trailing = len(a) - start - len(b)
    return tuple(b) + (1,) * trailing if trailing else None


def _check_gemm(name: str, node: onnx.NodeProto, types: Mapping[str, Shape | None]) -> None:
    """Gemm-6's C against the output (M, N): equal with broadcast=0, broadcastable to it with broadcast=1."""
    if len(node.input) < 3 or not node.input[2]:
        return
    c, y = types.get(node.input[2]), types.get(node.output[0])
    broadcast = _attr(node, "broadcast", 0)
    said = f"broadcast={broadcast}"
    if c is None or y is None or None in c or None in y:
        raise UnknownLegacyShapeError(name, "Gemm", f"{said}; C {node.input[2]!r} is {_dims(c)}, the output "
                                      f"{node.output[0]!r} is {_dims(y)}", tensor=node.input[2])
    fits = tuple(c) == tuple(y) if not broadcast else (
        len(c) <= len(y) and all(d in (1, w) for d, w in zip(reversed(c), reversed(y))))
    if not fits:
        rule = "must be (M, N)" if not broadcast else "must broadcast to (M, N)"
        raise LegacyBroadcastError(name, "Gemm", said, f"C {node.input[2]!r} {_dims(c)} {rule}, here "
                                   f"{_dims(y)}", tensor=node.input[2])


class _Names:
    """Fresh tensor and node names in one model (a suffix _1, _2... on a clash)."""

    def __init__(self, model: onnx.ModelProto):
        self.taken: set[str] = set()
        for g, _ in _graphs(model.graph):
            self.taken.update(t.name for t in g.initializer)
            self.taken.update(v.name for v in (*g.input, *g.output, *g.value_info))
            self.taken.update(t for n in g.node for t in (*n.input, *n.output, n.name))

    def fresh(self, wanted: str) -> str:
        name, k = wanted, 0
        while name in self.taken:
            k += 1
            name = f"{wanted}_{k}"
        self.taken.add(name)
        return name


def _readers(model: onnx.ModelProto) -> dict[str, int]:
    """Tensor -> how many node inputs read it, in every graph."""
    count: dict[str, int] = {}
    for g, _ in _graphs(model.graph):
        for n in g.node:
            for t in n.input:
                count[t] = count.get(t, 0) + 1
    return count


def _strip(node: onnx.NodeProto) -> None:
    kept = [a for a in node.attribute if a.name not in ("broadcast", "axis")]
    del node.attribute[:]
    node.attribute.extend(kept)


def _node_names(graph: onnx.GraphProto) -> list[str]:
    """The import's names for ``graph``'s nodes (onnx_graph.structure's rule)."""
    initializers = {t.name for t in graph.initializer}
    return node_names(graph.node, reserved=[v.name for v in graph.input if v.name not in initializers] + [NETOUTPUT])


def numpy_broadcasting(model: onnx.ModelProto, shapes=None) -> onnx.ModelProto:
    """``model`` with its opset-1..6 broadcasting nodes rewritten for numpy's rule (see the module
    docstring); ``shapes`` fixes dynamic input dims as for the import. Does not modify ``model``."""
    opset = _default_opset(model)
    if not 0 < opset <= LAST_LEGACY_OPSET or not any(
            _handled(n, opset) for g, _ in _graphs(model.graph) for n in g.node):
        return model
    types = _types(model, shapes)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    fresh, readers = _Names(out), _readers(out)
    for graph, prefix in list(_graphs(out.graph)):
        names = _node_names(graph)
        initializers = {t.name: t for t in graph.initializer}
        listed = {v.name for v in (*graph.input, *graph.output)}
        added: list[tuple[int, onnx.NodeProto]] = []
        for i, (node, name) in enumerate(zip(list(graph.node), names)):
            if not _handled(node, opset):
                continue
            if "axis" not in legacy_schema(node.op_type, opset).attributes:   # Gemm: C's broadcast
                _check_gemm(prefix + name, node, types)
                _strip(node)
                continue
            b = node.input[1]
            target = _aligned(prefix + name, node, types.get(node.input[0]), types.get(b))
            _strip(node)
            if target is None:
                continue
            if b in initializers and b not in listed and readers.get(b) == 1:
                del initializers[b].dims[:]
                initializers[b].dims.extend(target)
                continue
            aligned = fresh.fresh(f"{name}/aligned_{b}")
            if b in initializers and b not in listed:
                copy = graph.initializer.add()
                copy.CopyFrom(initializers[b])
                copy.name = aligned
                del copy.dims[:]
                copy.dims.extend(target)
            else:
                start = len(types[b])
                added.append((i, helper.make_node("Unsqueeze", [b], [aligned], name=fresh.fresh(f"{name}/align_{b}"),
                                                  axes=list(range(start, len(target))))))
            node.input[1] = aligned
        if added:
            _insert(graph, names, added)
    return out


def _insert(graph: onnx.GraphProto, names: list[str], added: list[tuple[int, onnx.NodeProto]]) -> None:
    """Put each added node right before its reader (the graph stays in topological order). The graph's
    nodes first get their import names explicitly: an unnamed node is named after its position
    (``<op>_<i>``), and the insertions would otherwise rename every unnamed node after them."""
    for node, name in zip(graph.node, names):
        node.name = name
    nodes = list(graph.node)
    for i, n in reversed(added):
        nodes.insert(i, n)
    del graph.node[:]
    graph.node.extend(nodes)
