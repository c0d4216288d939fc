"""Constant folding: every node whose inputs are all constant becomes constant data.

``fold(structure, types, opsets)`` walks the nodes in execution order. A node
is folded when all its inputs are constants (initializers or earlier folded
outputs; a node with no inputs, such as Constant, qualifies), or when it is a
Shape or Size of a tensor whose shape is static after inference. Its outputs
become :class:`Const` values; the node disappears. GE treats such data as
zero-memory Const nodes (GE: block_mem_assigner.cc ``CheckIsZeroMemNodeType``): weights, never feature-map
blocks.

How a node is evaluated, cheapest first:
1. ConstantOfShape: directly to a splat of the ``value`` attribute (never
   materialised, however large);
2. a view-like op (Reshape, Unsqueeze, Expand, ...) of a splat: the same
   splat with the inferred output shape;
3. an elementwise op whose inputs are splats or scalars: the op applied to the
   single values (through the ONNX reference implementation), splat to the
   inferred output shape;
4. anything else: the ONNX reference implementation (``onnx.reference``) on the
   full arrays. Inputs larger than ``MAX_FOLD_ELEMENTS`` are not expanded: the
   node stays in the graph as a compute node with weight inputs.

Not folded: random ops (their value changes per run, a Dropout that is not the identity
included), ops carrying subgraphs, and ops that are not standard ONNX (IR-only ops such as
MemcpyAsync have no reference implementation).

A node that stays can still have constant outputs: an identity Dropout's mask is all true
(``dropout_is_identity``), so it becomes a constant for whoever reads it.
"""
from __future__ import annotations

from typing import Mapping

import attrs
import numpy as np
import onnx
from onnx import helper
from onnx.reference import ReferenceEvaluator

from zcspec.impl.compiler.frontend.constants import Const
from zcspec.impl.compiler.frontend.errors import FoldError
from zcspec.impl.compiler.frontend.onnx_graph import OnnxStructure
from zcspec.impl.compiler.frontend.onnx_shapes import TypeInfo

MAX_FOLD_ELEMENTS = 1 << 24  # 16 Mi elements: larger constant computations are left to the device
NEVER_FOLD = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                        "Multinomial", "Bernoulli"})
# Output 0 holds only input 0's elements, rearranged or repeated: a splat stays a splat.
SPLAT_PRESERVING = frozenset({"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Expand",
                              "Transpose", "Tile"})
ELEMENTWISE = frozenset({"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Neg", "Abs",
                         "Relu", "Sqrt", "Exp", "Log", "Reciprocal", "Sigmoid", "Tanh", "Cast", "Clip",
                         "Floor", "Ceil", "Sign", "Not", "And", "Or", "Xor", "Equal", "Less", "Greater",
                         "LessOrEqual", "GreaterOrEqual", "Where"})


class ConstTable:
    """Tensor name -> Const. Initializers are decoded on first use, so unused ones cost nothing."""

    def __init__(self, initializers: Mapping[str, onnx.TensorProto]):
        self._protos = dict(initializers)
        self._values: dict[str, Const] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._values or name in self._protos

    def __getitem__(self, name: str) -> Const:
        if name not in self._values:
            self._values[name] = Const.from_tensor(self._protos[name])
        return self._values[name]

    def __setitem__(self, name: str, value: Const) -> None:
        self._values[name] = value


@attrs.frozen(eq=False)
class Folded:
    """The nodes left after folding (execution order, with their IR names) and every constant."""

    nodes: tuple[onnx.NodeProto, ...]
    names: tuple[str, ...]
    consts: ConstTable
    folded: tuple[str, ...]


def _static_shape(types: Mapping[str, TypeInfo], tensor: str) -> tuple[int, ...] | None:
    info = types.get(tensor)
    return info.shape if info is not None and info.static else None


def _elem(types: Mapping[str, TypeInfo], tensor: str, fallback: int) -> int:
    info = types.get(tensor)
    return info.elem if info is not None and info.elem else fallback


def _evaluate(node: onnx.NodeProto, feeds: dict[str, np.ndarray], opsets) -> list[np.ndarray]:
    """Run one node through the ONNX reference implementation at the model's opsets."""
    graph = helper.make_graph(
        [node], "fold",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), None) for n, a in feeds.items()],
        [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None) for o in node.output if o],
    )
    model = helper.make_model(graph, opset_imports=list(opsets))
    return [np.asarray(r) for r in ReferenceEvaluator(model).run(None, feeds)]


def _scalar(c: Const) -> np.ndarray | None:
    if c.is_splat:
        return c.fill
    return c.array.reshape(()) if c.numel == 1 else None


def _shape_of(node: onnx.NodeProto, types) -> list[Const] | None:
    """Shape/Size of a statically shaped tensor (Shape's start/end attributes are opset 15)."""
    shape = _static_shape(types, node.input[0])
    if shape is None:
        return None
    if node.op_type == "Size":
        return [Const.dense(np.array(int(np.prod(shape, dtype=np.int64)), dtype=np.int64))]
    at = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    dims = shape[at.get("start", 0): at.get("end", len(shape))]
    return [Const.dense(np.array(dims, dtype=np.int64))]


def _splat_shortcut(node, ins: list[Const], types) -> list[Const] | None:
    out_shape = _static_shape(types, node.output[0])
    if out_shape is None or len([o for o in node.output if o]) != 1:
        return None
    if node.op_type in SPLAT_PRESERVING and ins and ins[0].is_splat:
        return [Const.splat(ins[0].fill, out_shape, _elem(types, node.output[0], ins[0].elem))]
    return None


def _elementwise_shortcut(node, ins: list[Const], types, opsets) -> list[Const] | None:
    out_shape = _static_shape(types, node.output[0])
    if node.op_type not in ELEMENTWISE or out_shape is None or not any(c.is_splat for c in ins):
        return None
    scalars = [_scalar(c) for c in ins]
    if any(s is None for s in scalars):
        return None
    value = _evaluate(node, dict(zip([t for t in node.input if t], scalars)), opsets)[0]
    return [Const.splat(value, out_shape, _elem(types, node.output[0], helper.np_dtype_to_tensor_dtype(value.dtype)))]


def dropout_is_identity(node: onnx.NodeProto, consts: ConstTable) -> bool | None:
    """Whether a Dropout node is the identity (output = input, mask all true).

    True in inference mode (no ``training_mode`` input, as before opset 12, or a constant false
    one) and in training mode with a constant ``ratio`` of 0; False in training mode with another
    ratio (random: the default is 0.5); None when ``training_mode``, or the ratio in training mode,
    is known only at run time."""
    ratio, mode = (list(node.input[1:3]) + ["", ""])[:2]
    if not mode:
        return True
    if mode not in consts:
        return None
    if not bool(np.asarray(consts[mode].value()).reshape(-1)[0]):
        return True
    if not ratio:
        return False
    if ratio not in consts:
        return None
    return float(np.asarray(consts[ratio].value()).reshape(-1)[0]) == 0.0


def _known_outputs(node: onnx.NodeProto, consts: ConstTable, types) -> None:
    """Constants among the outputs of a node that stays: an identity Dropout's mask is all true."""
    if node.op_type == "Dropout" and len(node.output) > 1 and node.output[1] and dropout_is_identity(node, consts):
        shape = _static_shape(types, node.input[0])
        if shape is not None:
            consts[node.output[1]] = Const.splat(True, shape, onnx.TensorProto.BOOL)


def _fold_one(node: onnx.NodeProto, name: str, consts: ConstTable, types, opsets) -> list[Const] | None:
    """The node's output values, or None when it is to stay in the graph."""
    if node.op_type == "Dropout" and dropout_is_identity(node, consts) is not True:
        return None  # random (training mode) or not known yet: the front end decides (onnx_nodes)
    if node.op_type in NEVER_FOLD or any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                                         for a in node.attribute):
        return None
    if not onnx.defs.has(node.op_type, node.domain):
        return None  # an IR-only op (MemcpyAsync, HCCL, ...): no reference implementation to fold it with
    if node.op_type in ("Shape", "Size") and node.input[0] not in consts:
        return _shape_of(node, types)
    if not all(t in consts for t in node.input if t):
        return None
    ins = [consts[t] for t in node.input if t]
    if node.op_type == "ConstantOfShape":
        at = {a.name: a.t for a in node.attribute if a.name == "value"}
        fill = Const.from_tensor(at["value"]) if "value" in at else Const.dense(np.zeros(1, np.float32))
        return [Const.splat(_scalar(fill), tuple(int(d) for d in ins[0].value()), fill.elem)]
    quick = _splat_shortcut(node, ins, types) or _elementwise_shortcut(node, ins, types, opsets)
    if quick is not None:
        return quick
    if sum(c.numel for c in ins) > MAX_FOLD_ELEMENTS:
        return None
    feeds = {t: consts[t].value() for t in node.input if t}
    return [Const.dense(a, _elem(types, o, helper.np_dtype_to_tensor_dtype(a.dtype)))
            for o, a in zip([o for o in node.output if o], _evaluate(node, feeds, opsets))]


def fold(structure: OnnxStructure, types: Mapping[str, TypeInfo], opsets) -> Folded:
    """Fold every constant node of ``structure`` (see the module docstring)."""
    consts = ConstTable(structure.initializers)
    kept, names, folded = [], [], []
    for node, name in zip(structure.nodes, structure.names):
        try:
            values = _fold_one(node, name, consts, types, opsets)
        except Exception as e:  # the reference implementation raises many types; name the node
            raise FoldError(name, node.op_type, f"{type(e).__name__}: {e}") from e
        if values is None:
            _known_outputs(node, consts, types)
            kept.append(node)
            names.append(name)
            continue
        for tensor, value in zip([o for o in node.output if o], values):
            consts[tensor] = value
        folded.append(name)
    return Folded(tuple(kept), tuple(names), consts, tuple(folded))
