"""One ONNX node (left after folding) -> one IR ``Node``.

Attributes become IR values: ints, floats, strings (UTF-8 decoded) and lists
of those. Tensor, graph, sparse-tensor and type attributes only exist on nodes
that fold away; on a remaining node they are an AttributeError_.

View operands (ops.py kind ``view``: no task, output 0 aliases input 0): the
constant operand of Reshape (``shape``) and of opset-13 Squeeze/Unsqueeze
(``axes``) is *dropped from the inputs and kept as an attribute* of the same
name. The view needs only its output TensorDesc, and a weight nobody's kernel
reads would still be placed in the weight region; recording the value keeps
the node self-describing and identical to the older opsets, where ``axes`` was
an attribute. A non-constant operand is an error: the IR is static.

Dropout (inference): ``ratio`` (opset 12 input) becomes the ``ratio``
attribute; a ``training_mode`` input must be a constant false; the optional
mask output is dropped when nothing reads it and is an error when something
does (inference Dropout has no mask to give).

Optional inputs/outputs left empty (``""``) at the end are dropped; an empty
one followed by a real one cannot be expressed positionally in the IR and is
an UnsupportedFeatureError.
"""
from __future__ import annotations

from typing import Collection

import onnx
from onnx import helper

from zcspec.impl.compiler.errors import AttributeError_
from zcspec.impl.compiler.frontend.constant_fold import ConstTable
from zcspec.impl.compiler.frontend.errors import UnsupportedFeatureError
from zcspec.impl.compiler.ir import Node

# op type -> {input index: attribute name} for constant operands moved into attributes.
OPERAND_ATTRS = {
    "Reshape": {1: "shape"},
    "Squeeze": {1: "axes"},
    "Unsqueeze": {1: "axes"},
    "Dropout": {1: "ratio", 2: "training_mode"},
    # The operands production models fix at export: their opset-1..10 attribute forms (Clip's min/max,
    # Pad's pads/value, the reductions' axes), or the values the kernel needs (Resize, Expand, Tile).
    "Clip": {1: "min", 2: "max"},
    "Pad": {1: "pads", 2: "value", 3: "axes"},
    "Expand": {1: "shape"},
    "Tile": {1: "repeats"},
    "Resize": {1: "roi", 2: "scales", 3: "sizes"},
    **{op: {1: "axes"} for op in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2")},
}
# Resize-10 is (X, scales), with the coordinate mapping and rounding onnxruntime gives it made explicit.
_RESIZE_10 = ({1: "scales"}, {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"})
_DATA_ONLY = {
    onnx.AttributeProto.TENSOR, onnx.AttributeProto.TENSORS, onnx.AttributeProto.SPARSE_TENSOR,
    onnx.AttributeProto.SPARSE_TENSORS, onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS,
    onnx.AttributeProto.TYPE_PROTO, onnx.AttributeProto.TYPE_PROTOS,
}


def _decode(node: str, key: str, value):
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise AttributeError_(node, key, f"string {value!r} is not UTF-8") from None
    if isinstance(value, list):
        return tuple(_decode(node, key, v) for v in value)
    return value


def ir_attributes(node: onnx.NodeProto, name: str) -> dict:
    """The node's attributes as IR values (see the module docstring)."""
    out = {}
    for a in node.attribute:
        if a.type in _DATA_ONLY or a.type == onnx.AttributeProto.UNDEFINED:
            kind = onnx.AttributeProto.AttributeType.Name(a.type)
            raise AttributeError_(name, a.name, f"{kind} attributes are only supported on nodes that fold to constants")
        out[a.name] = _decode(name, a.name, helper.get_attribute_value(a))
    return out


def _positional(name: str, tensors, what: str) -> list[str]:
    """Drop trailing empty (omitted optional) names; an omitted one before a present one is an error."""
    tensors = list(tensors)
    while tensors and not tensors[-1]:
        tensors.pop()
    if "" in tensors:
        i = tensors.index("")
        raise UnsupportedFeatureError(
            name, f"optional {what} {i} is omitted but a later {what} is given; the IR's {what}s are positional")
    return tensors


def _operand_value(name: str, op_type: str, key: str, tensor: str, consts: ConstTable):
    if tensor not in consts:
        raise UnsupportedFeatureError(
            name, f"{op_type} operand {key!r} (tensor {tensor!r}) is not constant after folding; "
            "the IR needs it fixed at compile time", tensor=tensor)
    value = consts[tensor].value()
    return value.item() if value.ndim == 0 else tuple(value.reshape(-1).tolist())


def _operands_to_attrs(node, name: str, inputs: list[str], attrs: dict, consts: ConstTable) -> list[str]:
    moved = OPERAND_ATTRS.get(node.op_type, {})
    if node.op_type == "Resize" and len(inputs) == 2:   # opset 11 on has roi, scales and/or sizes
        moved = _RESIZE_10[0]
        attrs.update(_RESIZE_10[1])
    kept = []
    for i, tensor in enumerate(inputs):
        key = moved.get(i)
        if key is None:
            kept.append(tensor)
        elif tensor:
            attrs[key] = _operand_value(name, node.op_type, key, tensor, consts)
    if attrs.pop("training_mode", False):
        raise UnsupportedFeatureError(name, "Dropout in training mode is not supported (training_mode is true)")
    if node.op_type == "Resize":
        attrs.pop("roi", None)   # read by tf_crop_and_resize alone, which is refused
    return kept


def _outputs(node, name: str, readers: Collection[str]) -> list[str]:
    outputs = list(node.output)
    if node.op_type == "Dropout" and len(outputs) > 1:
        mask = outputs.pop(1)
        if mask and mask in readers:
            raise UnsupportedFeatureError(
                name, f"Dropout mask output {mask!r} is used; an inference Dropout is a view and has no mask",
                tensor=mask)
    return _positional(name, outputs, "output")


def to_ir_node(node: onnx.NodeProto, name: str, consts: ConstTable, readers: Collection[str]) -> Node:
    """The IR node for ``node``; ``readers`` is every tensor some node or the graph output reads."""
    attrs = ir_attributes(node, name)
    inputs = _positional(name, _operands_to_attrs(node, name, list(node.input), attrs, consts), "input")
    return Node(name, node.op_type, inputs, _outputs(node, name, readers), attrs)
