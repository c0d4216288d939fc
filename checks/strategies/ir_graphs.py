"""Hypothesis strategies for arbitrary well-formed IR graphs (structure, not semantics).

``ir_graphs()`` draws valid graphs over the whole op table with arbitrary
names, attribute values (every type the IR carries, including NaN and
infinities), streams, dtypes and weights: what the JSON form must carry
losslessly. Executable graphs with consistent shapes come from the checker's
own strategies; these only have to pass ``validate``.
"""
from __future__ import annotations

from hypothesis import strategies as st

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.ir import Graph, Node, TensorDesc, Weight
from zcspec.impl.platform import dtypes

_names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)
_scalars = st.one_of(
    st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=True), st.text(max_size=6)
)
attr_values = st.one_of(
    _scalars,
    st.lists(st.integers(-5, 5), max_size=4).map(tuple),
    st.lists(st.floats(allow_nan=False), max_size=3).map(tuple),
    st.lists(st.text(max_size=3), max_size=3).map(tuple),
)
shapes = st.lists(st.integers(1, 6), max_size=4).map(tuple)
_simple_ops = sorted(
    op for op, i in ops.OPS.items()
    if i.kind in ("compute", "view") and i.inputs[0] <= 1 <= (i.inputs[1] or 1) and i.outputs[0] <= 1
    and op != "Merge"   # its attributes have a meaning validation checks (labels of branches), not arbitrary
)


@st.composite
def ir_graphs(draw, *, min_nodes: int = 0, max_nodes: int = 8, max_inputs: int = 3) -> Graph:
    names = iter(draw(st.lists(_names, min_size=64, max_size=64, unique=True)))
    tensors: list[TensorDesc] = []
    nodes: list[Node] = []
    weights: list[Weight] = []
    available: list[str] = []
    for index in range(draw(st.integers(0, max_inputs))):
        t = next(names)
        tensors.append(TensorDesc(t, draw(shapes), draw(st.sampled_from(sorted(dtypes.DTYPES)))))
        nodes.append(Node(t, "Data", (), (t,), {"index": index}, draw(st.integers(0, 3))))
        available.append(t)
    for _ in range(draw(st.integers(0, 2))):
        w = next(names)
        shape = draw(shapes)
        tensors.append(TensorDesc(w, shape, "float32"))
        count = 1
        for d in shape:
            count *= d
        splat = draw(st.booleans())
        data = draw(st.binary(min_size=4 if splat else 4 * count, max_size=4 if splat else 4 * count))
        weights.append(Weight(w, data, splat))
        available.append(w)
    if not available:
        w = next(names)
        tensors.append(TensorDesc(w, (1,), "int8"))
        weights.append(Weight(w, b"\x01"))
        available.append(w)
    for _ in range(draw(st.integers(min_nodes, max_nodes))):
        op = draw(st.sampled_from(_simple_ops))
        src = draw(st.sampled_from(available))
        out = next(names)
        tensors.append(TensorDesc(out, draw(shapes), draw(st.sampled_from(["float32", "float16", "bfloat16", "int4"])), draw(st.sampled_from(["ND", "NCHW"]))))
        attrs = draw(st.dictionaries(st.text(max_size=5), attr_values, max_size=3))
        nodes.append(Node(next(names), op, (src,), (out,), attrs, draw(st.integers(0, 3))))
        available.append(out)
    outs = draw(st.lists(st.sampled_from(available), min_size=1, max_size=3))
    nodes.append(Node(next(names), "NetOutput", tuple(outs), ()))
    return Graph(draw(_names), nodes, tensors, weights)
