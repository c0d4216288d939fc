"""One ONNX node (left after folding) -> one IR ``Node``.

Attributes become IR values: ints, floats, strings (UTF-8 decoded) and lists
of those. Tensor, graph, sparse-tensor and type attributes only exist on nodes
that fold away; on a remaining node they are an AttributeError_.

Operands (``OPERANDS``, the one home of what each operand's value decides): the IR
is static, so an operand that decides the output's shape (``SHAPE``: Reshape's
``shape``, Pad's ``pads``, Expand's ``shape``, Tile's ``repeats``, Resize's
``scales``/``sizes``, the reductions' ``axes``, ...) or whether the node runs a task
at all (``TASK``: Dropout's ``training_mode`` and ``ratio``) must be constant: it is
*dropped from the inputs and kept as an attribute* of the same name, the attribute
form of the older opsets, so the node is self-describing and no weight nobody's
kernel reads is placed in the weight region. A non-constant one is a
RuntimeValueError saying what the operand decides and naming the graph inputs it
comes from (the ones to freeze with ``--value``). An operand that decides only
values (``VALUE``: Clip's ``min``/``max``, Pad's constant ``value``, Resize's
``roi``) becomes the attribute when it is constant, as models fix it at export, and
stays an input when it is known only at run time: such inputs follow the node's
other inputs, named in order by the attribute ``_value_inputs``
(``kernel_ops.VALUE_INPUTS``), and the kernel reads them on every run. Slice's,
Split's and ReduceSum's shape operands (``SHAPE_READ``) are inputs their kernels
read; a run-time one needs the output's shape declared (onnx_import.py).

Dropout is kept only as the identity (``constant_fold.dropout_is_identity``:
inference mode, or training mode with ratio 0): a constant ``ratio`` becomes
the ``ratio`` attribute (a run-time one is ignored, it changes nothing), the
mask output is dropped (``fold`` made it a constant, all true, for whoever reads
it); a random Dropout is refused, a run-time ``training_mode`` (or a run-time
``ratio`` in training mode) is a RuntimeValueError: it decides whether the node is
a view without memory of its own or a random op with its own output and mask, and
the plan fixes that at compile time.

Opset-dependent meaning: nodes of the ops in ``OPSET_SEMANTICS`` at or past the
opset where their meaning changed carry ``_opset`` (Softmax's kernel switches on it).

``check_supported`` refuses a mapped node that hits an entry of the op table's
unsupported list (``zcspec.impl.compiler.op_limits``), naming the op and the feature.

Optional inputs/outputs left empty (``""``) at the end are dropped; an empty
one followed by a real one cannot be expressed positionally in the IR and is
an UnsupportedFeatureError.
"""
from __future__ import annotations

from typing import Collection, Mapping

import attrs
import onnx
from onnx import helper

from zcspec.impl.compiler import op_limits, ops
from zcspec.impl.compiler.errors import AttributeError_
from zcspec.impl.compiler.frontend.constant_fold import ConstTable, dropout_is_identity
from zcspec.impl.compiler.frontend.errors import RuntimeValueError, UnsupportedFeatureError
from zcspec.impl.compiler.ir import Node, TensorDesc
from zcspec.impl.platform.kernel_ops import RECURRENT_ACTIVATIONS, VALUE_INPUTS

# What the value of an operand decides, the one home of the classification (``OPERANDS``):
SHAPE = "shape"          # the output's shape: fixed at compile time, moved into the attribute of its name
SHAPE_READ = "shape-read"  # the output's shape, but its kernel reads it: kept as an input, the shape declared
TASK = "task"            # whether the node is the identity (a view: no task, no memory of its own) or a random op
VALUE = "value"          # only the output's values: a constant moves into the attribute, a run-time one is an input
# How a refusal says what a run-time operand decides (SHAPE_READ's refusal names the tensor whose shape is unknown).
DECIDES = {
    SHAPE: "decides the output's shape",
    TASK: "decides whether the node is the identity (a view without memory of its own) or a random op that "
          "needs its own output and mask",
}


@attrs.frozen
class Operand:
    """An operand of an ONNX op classified by what its value decides (``SHAPE``, ``SHAPE_READ``, ``TASK``,
    ``VALUE``), and its name: the IR attribute a constant one becomes (the older opsets' attribute name).
    Operands absent from ``OPERANDS`` (data, weights, Gather's indices, Where's condition) are plain inputs."""

    name: str
    decides: str


def _operands(decides: str, *names: str, first: int = 1) -> dict[int, Operand]:
    return {first + i: Operand(n, decides) for i, n in enumerate(names) if n}


# op type -> {input position: Operand}. SHAPE and TASK operands must be constant (the IR is static: shapes,
# memory sizes and the task list are fixed at compile time); VALUE ones may come from graph inputs, the
# kernel then reads them at run time (IR attribute ``_value_inputs``, see ``VALUE_INPUTS``).
OPERANDS: dict[str, dict[int, Operand]] = {
    "Reshape": _operands(SHAPE, "shape"),
    "Squeeze": _operands(SHAPE, "axes"),
    "Unsqueeze": _operands(SHAPE, "axes"),
    "Dropout": _operands(TASK, "ratio", "training_mode"),
    # Opset-1..10 attribute forms: Clip's min/max, Pad's pads/value, the reductions' axes.
    "Clip": _operands(VALUE, "min", "max"),
    "Pad": {**_operands(SHAPE, "pads", "", "axes"), **_operands(VALUE, "value", first=2)},
    "Expand": _operands(SHAPE, "shape"),
    "Tile": _operands(SHAPE, "repeats"),
    # roi only maps coordinates (tf_crop_and_resize); scales or sizes give the output's lengths.
    "Resize": {**_operands(VALUE, "roi"), **_operands(SHAPE, "scales", "sizes", first=2)},
    **{op: _operands(SHAPE, "axes") for op in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2")},
    "Slice": _operands(SHAPE_READ, "starts", "ends", "axes", "steps"),
    "Split": _operands(SHAPE_READ, "split"),
    "ReduceSum": _operands(SHAPE_READ, "axes"),
}
# Resize-10 is (X, scales), with the coordinate mapping and rounding onnxruntime gives it made explicit.
_RESIZE_10 = (_operands(SHAPE, "scales"), {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"})
# op type -> input positions whose values decide the output's shape and that its kernel reads at run
# time (not moved into attributes): when such an operand is not constant, the shape must be declared.
SHAPE_OPERANDS = {op: tuple(i for i, o in d.items() if o.decides == SHAPE_READ)
                  for op, d in OPERANDS.items() if any(o.decides == SHAPE_READ for o in d.values())}
# op type -> the opset from which its meaning differs; nodes at or past it carry ``_opset`` (the
# kernel's switch: Softmax normalises along ``axis``, default -1, instead of coercing to 2-D at it).
OPSET_SEMANTICS = {"Softmax": 13}
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


def _positional(name: str, tensors, what: str, op_type: str = "") -> list[str]:
    """Drop trailing empty (omitted optional) names; an omitted one before a present one is refused."""
    tensors = list(tensors)
    while tensors and not tensors[-1]:
        tensors.pop()
    if "" in tensors:
        i = tensors.index("")
        entry = op_limits.find(op_type, "omitted-operand")
        raise UnsupportedFeatureError(name, op_limits.message(
            op_type, entry, f"optional {what} {i} is omitted but a later {what} is given"))
    return tensors


def _no_sources(tensor: str) -> tuple[str, ...]:
    return ()


def _refuse(name: str, op_type: str, operand: Operand, tensor: str, behind) -> RuntimeValueError:
    return RuntimeValueError(name, op_type, (tensor,), behind(tensor),
                             what=f"operand {operand.name!r} {DECIDES[operand.decides]}; it is")


def _operand_value(tensor: str, consts: ConstTable):
    value = consts[tensor].value()
    return value.item() if value.ndim == 0 else tuple(value.reshape(-1).tolist())


def _no_complex_attribute(name: str, op_type: str, tensor: str, consts: ConstTable) -> None:
    """A complex constant cannot become an attribute (the IR's attributes hold no complex number): refused
    by the op's ``complex`` entry of op_limits, naming the element type (Pad's constant value)."""
    dtype = consts[tensor].desc(tensor).dtype
    if dtype.startswith("complex") and any(e.key == "complex" for e in op_limits.entries(op_type)):
        entry = op_limits.find(op_type, "complex")
        raise UnsupportedFeatureError(name, op_limits.message(op_type, entry, f"element type {dtype}"))


def _dropout_operands(node, name: str, attrs: dict, consts: ConstTable, behind) -> list[str]:
    """Dropout's ratio and training_mode operands (opset 12) as attributes. An identity Dropout (see
    ``constant_fold.dropout_is_identity``) needs no training_mode, and its ratio only when it is known;
    a random one is refused (``op_limits``: Dropout ``training``). Which of the two it is decides
    whether the node is a view or a task with memory of its own, so it must be known at compile time
    (``TASK``): a run-time training_mode, or a run-time ratio in training mode, is refused."""
    ratio, mode = (list(node.input[1:3]) + ["", ""])[:2]
    identity = dropout_is_identity(node, consts)
    if identity is None:
        key, tensor = (2, mode) if mode not in consts else (1, ratio)
        raise _refuse(name, "Dropout", OPERANDS["Dropout"][key], tensor, behind)
    if ratio and ratio in consts:
        attrs["ratio"] = _operand_value(ratio, consts)
    if not identity:
        detail = f"training_mode=1, ratio={attrs.get('ratio', 0.5)!r}"
        raise UnsupportedFeatureError(name, op_limits.message("Dropout", op_limits.find("Dropout", "training"), detail))
    return [node.input[0]]


def _operands_to_attrs(node, name: str, inputs: list[str], attrs: dict, consts: ConstTable,
                       behind=_no_sources) -> list[str]:
    """The node's inputs once its ``OPERANDS`` are handled: a constant SHAPE or VALUE operand becomes
    the attribute of its name; a run-time VALUE one is appended to the inputs, named in ``VALUE_INPUTS``;
    a run-time SHAPE one is a RuntimeValueError. SHAPE_READ operands stay where they are."""
    if node.op_type == "Dropout":
        return _dropout_operands(node, name, attrs, consts, behind)
    moved = {i: o for i, o in OPERANDS.get(node.op_type, {}).items() if o.decides != SHAPE_READ}
    if node.op_type == "Resize" and len(inputs) == 2:   # opset 11 on has roi, scales and/or sizes
        moved = _RESIZE_10[0]
        attrs.update(_RESIZE_10[1])
    kept, late = [], {}
    for i, tensor in enumerate(inputs):
        operand = moved.get(i)
        if operand is None:
            kept.append(tensor)
        elif tensor and tensor in consts:
            _no_complex_attribute(name, node.op_type, tensor, consts)
            attrs[operand.name] = _operand_value(tensor, consts)
        elif tensor and operand.decides == VALUE:
            late[operand.name] = tensor
        elif tensor:
            raise _refuse(name, node.op_type, operand, tensor, behind)
    if not attrs.get("training_mode", 1):  # BatchNormalization's default (opset 14): inference, nothing to keep
        del attrs["training_mode"]
    if node.op_type == "Resize" and attrs.get("coordinate_transformation_mode") != "tf_crop_and_resize":
        attrs.pop("roi", None)   # read by tf_crop_and_resize alone
        late.pop("roi", None)
    if late:
        attrs[VALUE_INPUTS] = tuple(late)
        kept = _positional(name, kept, "input", node.op_type) + list(late.values())
    return kept


def _outputs(node, name: str, readers: Collection[str], consts: ConstTable) -> list[str]:
    outputs = list(node.output)
    if node.op_type == "Dropout" and len(outputs) > 1:
        mask = outputs.pop(1)   # an identity Dropout's mask is a constant (all true): a weight if read
        if mask and mask in readers and mask not in consts:
            raise UnsupportedFeatureError(
                name, f"Dropout mask output {mask!r} is used, but only an identity Dropout's mask is known",
                tensor=mask)
    return _positional(name, outputs, "output", node.op_type)


# Ops whose optional inputs may be omitted anywhere: the given ones' positions are kept (see ops.py).
SPARSE_OPERANDS = frozenset({"LSTM", "GRU"})


def _sparse_node(node: onnx.NodeProto, name: str, attrs: dict) -> Node:
    """A recurrent node: the given inputs, their ONNX positions in ``_present_inputs``. Outputs stay
    positional (an omitted one before a given one is refused, as for every op)."""
    dirs = 2 if attrs.get("direction", "forward") == "bidirectional" else 1
    default = RECURRENT_ACTIVATIONS[node.op_type] * dirs
    unsupported = [(k, v) for k, v, ok in (
        ("activations", attrs.get("activations"), attrs.get("activations") in (None, default)),
        ("input_forget", attrs.get("input_forget"), attrs.get("input_forget", 0) == 0)) if not ok]
    if unsupported:
        k, v = unsupported[0]
        raise UnsupportedFeatureError(name, f"{node.op_type} attribute {k}={v!r} is not supported (zcspec runs "
                                            f"the default activations {default!r} and input_forget 0)")
    present = tuple(i for i, t in enumerate(node.input) if t)
    return Node(name, node.op_type, [node.input[i] for i in present], _positional(name, node.output, "output"),
                {**attrs, "_present_inputs": present})


def check_supported(node: Node, descs: Mapping[str, TensorDesc] | None, opset: int) -> None:
    """UnsupportedFeatureError naming the op and the feature when ``node`` hits an entry of
    ``zcspec.impl.compiler.op_limits`` (an attribute value, an element type, an opset).
    ``descs`` None checks what needs no types (before shapes are known: an opset whose schema
    has no shape inference must be named, not reported as an unfixed shape)."""
    info = ops.info(node.op_type)
    if info is None or info.kind not in ("compute", "view"):
        return
    tensors = () if descs is None else (*node.inputs, *node.outputs)
    hit = op_limits.check(node.op_type, attributes=dict(node.attrs), opset=opset, compute=info.kind == "compute",
                          dtypes=[descs[t].dtype for t in tensors])
    if hit is None and descs is not None and node.op_type == "Resize":
        hit = _fractional_align_corners(node, descs)
    if hit is not None:
        raise UnsupportedFeatureError(node.name, op_limits.message(node.op_type, *hit))


def _fractional_align_corners(node: Node, descs: Mapping[str, TensorDesc]):
    """op_limits' Resize "align-corners-fraction" entry, which needs the input's shape: the entry and
    what the node has, or None. A length within float32 rounding of a whole number is whole."""
    attrs = dict(node.attrs)
    scales = attrs.get("scales")
    if attrs.get("coordinate_transformation_mode") != "align_corners" or not scales or "sizes" in attrs:
        return None
    shape = descs[node.inputs[0]].shape
    fractional = [f"axis {a}: {n} x {s:g}" for a, (n, s) in enumerate(zip(shape, scales))
                  if isinstance(n, int) and abs(n * s - round(n * s)) > 1e-6 * max(1.0, n * s)]
    if not fractional:
        return None
    return op_limits.find("Resize", "align-corners-fraction"), ", ".join(fractional)


def to_ir_node(node: onnx.NodeProto, name: str, consts: ConstTable, readers: Collection[str], *,
               opset: int = 0, inputs_behind=_no_sources) -> Node:
    """The IR node for ``node``; ``readers`` is every tensor some node or the graph output reads,
    ``opset`` the model's default-domain opset, ``inputs_behind(tensor)`` the graph inputs a tensor
    is computed from (named when an operand the IR needs is known only at run time)."""
    attrs = ir_attributes(node, name)
    if opset >= OPSET_SEMANTICS.get(node.op_type, opset + 1):
        attrs["_opset"] = opset
    if node.op_type in SPARSE_OPERANDS:
        return _sparse_node(node, name, attrs)
    inputs = _positional(name, _operands_to_attrs(node, name, list(node.input), attrs, consts, inputs_behind),
                         "input", node.op_type)
    return Node(name, node.op_type, inputs, _outputs(node, name, readers, consts), attrs)
