"""The ONNX front end: an .onnx file (or ModelProto) -> a validated IR ``Graph``.

    graph = load_onnx("model.onnx", shapes={"data": (1, 3, 224, 224)})

Steps, each its own module:
1. read the file (``OnnxFileError`` naming it when truncated or corrupt);
2. ``onnx_graph.structure``: node names, real inputs, single writers, no
   missing tensors, no cycle, execution order;
3. every op is known (in ``zcspec.impl.compiler.ops.OPS`` or a standard ONNX op that
   may still fold away), else ``UnsupportedOpError`` naming the node;
4. ``onnx_shapes``: fix dynamic input dims from ``shapes``, run strict shape
   inference;
5. ``constant_fold.fold``: constant subgraphs become weights (splat-aware);
   shape inference runs once more over the folded graph when folding is what
   makes shapes static (Shape -> ... -> Reshape chains); an ``If`` whose
   condition folded to a constant is replaced by its branch and steps 2-5 run
   again (``static_control``: inputs frozen by ``values`` count as constants);
   one that depends on the data is refused, naming the inputs to freeze;
6. ``onnx_shapes.judge_annotations``: steps 4-5 run on the graph alone; the
   file's value_info entries and declared outputs whose shapes the graph
   contradicts are ignored and recorded, a contradicting element type is
   refused, and the agreeing ones that fix what the graph leaves unknown are
   trusted in a second run of steps 4-5;
7. every op left is in ``OPS`` (else ``UnsupportedOpError``); ``onnx_nodes``
   maps each to an IR node; one ``Data`` node per real input (named after its
   tensor, ``index`` in input order) and one ``NetOutput`` over the outputs;
8. ``validate`` the result.

``import_onnx`` / ``import_model`` return an ``Imported``: the graph and the stale
annotations (``zcspec summary`` lists them); ``load_onnx`` / ``from_model`` the
graph alone. Every bad-input error raised names the file when one is given.
"""
from __future__ import annotations

import functools
import os
from typing import Mapping

import attrs
import numpy as np
import onnx
from onnx import helper, numpy_helper

from zcspec.impl.compiler import op_limits, ops
from zcspec.impl.compiler.errors import GraphError, ShapeError, UnsupportedOpError
from zcspec.impl.compiler.frontend.constant_fold import Folded, fold
from zcspec.impl.compiler.frontend.errors import (DataDependentControlError, OnnxFileError, RuntimeValueError,
                                                  UnsupportedFeatureError)
from zcspec.impl.compiler.frontend.legacy_broadcast import numpy_broadcasting
from zcspec.impl.compiler.frontend.onnx_graph import NETOUTPUT, OnnxStructure, structure
from zcspec.impl.compiler.frontend.onnx_nodes import SHAPE_OPERANDS, SPARSE_OPERANDS, check_supported, to_ir_node
from zcspec.impl.compiler.frontend.onnx_shapes import (StaleAnnotation, TypeInfo, fixed_input_shapes, infer_types,
                                                       inference_model, judge_annotations)
from zcspec.impl.compiler.frontend.static_control import freeze_inputs, inline_constant_ifs, inline_if
from zcspec.impl.compiler.ir import Graph, Node, TensorDesc
from zcspec.impl.compiler.validate import validate
from zcspec.impl.platform import dtypes
from zcspec.impl.platform.errors import BadInput, UnknownDTypeError

InputShapes = Mapping[str, tuple[int, ...]] | None
SMALL_CONST = 4096  # constants up to this many elements are given to shape inference by value
MAX_FOLD_ROUNDS = 8  # rounds of inference and folding feeding each other (each round is one more link)
MAX_INLINED_IFS = 64  # each inlining re-runs inference and folding: a bound on a crafted model's cost


def read_model(path: str) -> onnx.ModelProto:
    """The ModelProto in ``path`` (external data included); OnnxFileError naming the file otherwise."""
    try:
        model = onnx.load(path)
    except OSError as e:
        # e.filename differs from path when an external-data file is what is missing.
        what = f"cannot read {e.filename!r}" if getattr(e, "filename", None) else "cannot read it"
        raise OnnxFileError(path, f"{what}: {e.strerror or e}") from e
    except Exception as e:  # protobuf's DecodeError and friends: a truncated or corrupt file
        raise OnnxFileError(path, f"{type(e).__name__}: {e} (is the file truncated or corrupt?)") from e
    if not model.HasField("graph"):
        raise OnnxFileError(path, "the file holds no graph (empty, or not an ONNX model)")
    return model


@attrs.frozen
class Imported:
    """What an import gives: the validated ``graph``, and the file's shape annotations the graph
    contradicts (``stale``, in file order), which the import ignored for the inferred shapes.

    Kept beside the graph rather than in it: they describe the file, not the model, so the IR, its
    JSON and model files stay as they are (two imports of the same graph compare equal)."""

    graph: Graph
    stale: tuple[StaleAnnotation, ...] = attrs.field(converter=tuple, default=())


def load_onnx(path: str, *, shapes: InputShapes = None, values=None) -> Graph:
    """The validated IR graph of the ONNX file ``path``; ``shapes`` fixes dynamic input dims by input name,
    ``values`` freezes inputs to constants (see ``from_model``)."""
    return import_onnx(path, shapes=shapes, values=values).graph


def import_onnx(path: str, *, shapes: InputShapes = None, values=None) -> Imported:
    """``load_onnx`` with the stale shape annotations it ignored."""
    return import_model(read_model(path), shapes=shapes, values=values, file=path)


def from_model(model: onnx.ModelProto, *, shapes: InputShapes = None, values=None, file: str = "") -> Graph:
    """The validated IR graph of an in-memory model; ``file`` is named in errors. Does not modify ``model``.

    ``values`` (input name -> value) freezes those inputs to constants (``--value``), so control flow
    that depends only on them folds away."""
    return import_model(model, shapes=shapes, values=values, file=file).graph


def import_model(model: onnx.ModelProto, *, shapes: InputShapes = None, values=None, file: str = "") -> Imported:
    """``from_model`` with the stale shape annotations it ignored."""
    try:
        return _import(model, shapes, name=model.graph.name or _stem(file), values=values)
    except BadInput as e:
        if file and not e.file:
            raise e.in_file(file) from (e.__cause__ or e)
        raise


def _stem(file: str) -> str:
    return os.path.splitext(os.path.basename(file))[0] or "onnx"


# Domains other than ONNX's default one, as a refusal names them: zcspec's op table holds default-domain ops only.
_DOMAINS = {"com.microsoft": "onnxruntime's contrib ops", "ai.onnx.ml": "ONNX-ML's classical machine-learning ops",
            "ai.onnx.training": "ONNX's training ops", "ai.onnx.preview.training": "ONNX's training ops"}
# The ops quantization tools write (onnxruntime.quantization's quantize_dynamic and quantize_static): what to do.
_DYNAMIC_QUANTIZATION = frozenset({"DynamicQuantizeLSTM", "DynamicQuantizeLinear", "DynamicQuantizeMatMul",
                                   "ConvInteger", "MatMulInteger", "MatMulIntegerToFloat"})
_STATIC_QUANTIZATION = frozenset({"QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul",
                                  "QLinearAdd", "QLinearMul", "QGemm"})


def unsupported_op(node: onnx.NodeProto, name: str) -> UnsupportedOpError:
    """The refusal of a node whose op zcspec lacks: a non-default domain is named with whose ops those are,
    and a quantization op says to re-export the float model (zcspec claims float and plain integer ops)."""
    domain = node.domain if node.domain not in ("", "ai.onnx") else ""
    whose = _DOMAINS.get(domain, "the ops of a custom domain") if domain else ""
    if node.op_type in _DYNAMIC_QUANTIZATION:
        fix = "re-export without dynamic quantization"
    elif node.op_type in _STATIC_QUANTIZATION:
        fix = "re-export without quantization"
    else:
        fix = "zcspec imports ONNX's default-domain ops only" if domain else ""
    why = "; ".join(p for p in (f"{whose} are not supported" if whose else "", fix) if p)
    return UnsupportedOpError(node.op_type, node=name, domain=domain, why=why)


def _check_ops_known(st: OnnxStructure) -> None:
    # An op outside ONNX and OPS would only surface later as a confusing shape-inference error; an op of
    # another domain is refused even when a default-domain op of its name exists (com.microsoft's Gelu is not
    # ONNX's): the op table describes the default domain's.
    for node, name in zip(st.nodes, st.names):
        if node.domain not in ("", "ai.onnx") or (node.op_type not in ops.OPS and not onnx.defs.has(node.op_type)):
            raise unsupported_op(node, name)


def _initial_consts(st: OnnxStructure) -> list:
    """Initializers for the first inference: small ones by value, large ones by type alone."""
    out = []
    for t in st.initializers.values():
        numel = 1
        for d in t.dims:
            numel *= d
        out.append(t if numel <= SMALL_CONST else helper.make_tensor_value_info(t.name, t.data_type, t.dims))
    return out


def _folded_consts(folded: Folded) -> list:
    """The constants the remaining nodes read, for the second inference (same small/large rule)."""
    out = []
    for t in dict.fromkeys(t for n in folded.nodes for t in n.input if t and t in folded.consts):
        c = folded.consts[t]
        out.append(numpy_helper.from_array(c.value(), t) if c.numel <= SMALL_CONST
                   else helper.make_tensor_value_info(t, c.elem, c.shape))
    return out


def _desc(tensor: str, types: Mapping[str, TypeInfo], producer: str) -> TensorDesc:
    info = types.get(tensor)
    if info is None or not info.static:
        raise ShapeError(tensor, info.shape if info else None,
                         "shape inference could not fix every dimension", node=producer)
    if not info.elem:
        raise UnknownDTypeError("undefined", tensor=tensor)
    if info.elem == onnx.TensorProto.STRING:   # a listed unsupported feature, not an unknown type
        raise UnsupportedFeatureError(producer, op_limits.message("", op_limits.find(op_limits.ANY_OP, "string"),
                                                                  f"tensor {tensor!r}"), tensor=tensor)
    return TensorDesc(tensor, info.shape, dtypes.from_onnx(info.elem, tensor=tensor).name)


def _needs_reinference(folded: Folded, types) -> bool:
    produced = (t for n in folded.nodes for t in n.output if t)
    return any(t not in folded.consts and not (t in types and types[t].static) for t in produced)


def _name_omitted_outputs(model: onnx.ModelProto) -> onnx.ModelProto:
    """A recurrent node may omit Y and give Y_h: the IR's outputs are positional, so the omitted one gets
    a name of its own (``<Y_h's name>/unused<i>``) that shape inference then types; nothing reads it."""
    gaps = [n for n in model.graph.node if n.op_type in SPARSE_OPERANDS
            and any(not t and any(list(n.output)[i + 1:]) for i, t in enumerate(n.output))]
    if not gaps:
        return model
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for n in out.graph.node:
        if n.op_type in SPARSE_OPERANDS:
            given = next(t for t in n.output if t) if any(n.output) else n.name
            last = max((i for i, t in enumerate(n.output) if t), default=-1)
            n.output[:] = [t or (f"{given}/unused{i}" if i < last else "") for i, t in enumerate(n.output)]
    return out


def _import(model: onnx.ModelProto, shapes: InputShapes, *, name: str, values=None) -> Imported:
    model = _name_omitted_outputs(inline_constant_ifs(freeze_inputs(model, values or {}), MAX_INLINED_IFS))
    model = numpy_broadcasting(model, shapes)  # opset 1-6 broadcast/axis attributes, as numpy's rule
    for _ in range(MAX_INLINED_IFS + 1):
        st, folded, types, stale = _fold(model, shapes)
        branch = next(((n, nn) for n, nn in zip(folded.nodes, folded.names) if n.op_type == "If"), None)
        if branch is None:
            break
        node, node_name = branch
        if node.input[0] not in folded.consts:
            raise DataDependentControlError(node_name, node.input[0], _inputs_behind(node.input[0], folded, st))
        take_then = bool(np.asarray(folded.consts[node.input[0]].value()).reshape(-1)[0])
        model = inline_if(model, node.output[0], node_name, take_then)
    else:
        raise UnsupportedFeatureError(node_name, f"more than {MAX_INLINED_IFS} If nodes to inline")
    for node, node_name in zip(folded.nodes, folded.names):
        if node.op_type not in ops.OPS:
            raise unsupported_op(node, node_name)
    return Imported(validate(_assemble(name, st, folded, types, default_opset(model))), stale)


def default_opset(model: onnx.ModelProto) -> int:
    """The model's opset of the default (``ai.onnx``) domain; 0 when it imports none."""
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def _fold(model: onnx.ModelProto, shapes: InputShapes):
    """Steps 2-5 and 6's judgement: the structure, the folded nodes and constants, every tensor's type,
    and the stale annotations. Folding and inference run on the graph alone, then once more trusting
    the annotations that fix what the graph leaves unknown, if any (``onnx_shapes.judge_annotations``)."""
    st = structure(model.graph)
    _check_ops_known(st)
    fixed = fixed_input_shapes(st.inputs, shapes, initializers=st.initializers)
    folded, types = _fold_trusting(model, st, fixed, ())
    producer = {t: nn for n, nn in zip(st.nodes, st.names) for t in n.output if t}
    judged = judge_annotations(model, types, producer, {*producer, *(v.name for v in st.inputs), *st.initializers})
    if judged.filling:
        folded, types = _fold_trusting(model, st, fixed, judged.filling)
    return st, folded, types, judged.stale


def _fold_trusting(model: onnx.ModelProto, st: OnnxStructure, fixed, trusted):
    """Inference and folding, giving inference the ``trusted`` annotations of the file."""
    # While If nodes remain, inference types what it can: their bodies need not type before they are inlined.
    strict = not any(n.op_type == "If" for n in st.nodes)
    types = infer_types(inference_model(model, st.inputs, fixed, st.nodes, st.names, _initial_consts(st),
                                        trusted=trusted), strict=strict)
    folded = fold(st, types, model.opset_import)
    # Folding can make more shapes static (Shape -> ... -> Pad), and those can make more folding possible
    # (a Shape of the padded tensor): alternate until folding takes nothing more.
    for _ in range(MAX_FOLD_ROUNDS):
        if not _needs_reinference(folded, types):
            break
        again = inference_model(model, st.inputs, fixed, folded.nodes, folded.names, _folded_consts(folded),
                                trusted=trusted)
        types = {**types, **infer_types(again, strict=strict)}
        refolded = fold(st, types, model.opset_import)
        if len(refolded.nodes) == len(folded.nodes):
            break
        folded = refolded
    return folded, types


def _inputs_behind(tensor: str, folded: Folded, st: OnnxStructure) -> tuple[str, ...]:
    """The graph inputs ``tensor`` is computed from (through the nodes left after folding)."""
    writer = {o: n for n in folded.nodes for o in n.output if o}
    inputs = {v.name for v in st.inputs}
    seen, todo, found = set(), [tensor], []
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        if t in inputs:
            found.append(t)
        elif t in writer:
            todo.extend(i for i in writer[t].input if i)
    return tuple(sorted(found))


def _runtime_operands(node: Node | None, tensor: str, folded: Folded, st: OnnxStructure) -> None:
    """RuntimeValueError when ``tensor``'s shape is not static because operands of its producer that
    decide its shape (``SHAPE_OPERANDS``: Slice's starts, ReduceSum's axes, ...) are known only at run time."""
    if node is None:
        return
    decide = SHAPE_OPERANDS.get(node.op_type, ())
    late = tuple(t for i, t in enumerate(node.inputs) if i in decide and t not in folded.consts)
    if late:
        inputs = tuple(sorted({i for t in late for i in _inputs_behind(t, folded, st)}))
        raise RuntimeValueError(node.name, node.op_type, late, inputs,
                                what=f"the shape of {tensor!r} depends on the value{'s' * (len(late) > 1)} of")


def _assemble(name: str, st: OnnxStructure, folded: Folded, types, opset: int) -> Graph:
    """Data nodes, mapped nodes, NetOutput; weights for the constants they read; a desc per tensor.
    A node that hits an entry of ``op_limits`` (op, attribute value, element type, opset) is refused."""
    readers = {t for n in folded.nodes for t in n.input} | set(st.outputs)
    behind = functools.partial(_inputs_behind, folded=folded, st=st)
    nodes = [Node(v.name, "Data", (), (v.name,), {"index": i}) for i, v in enumerate(st.inputs)]
    nodes += [to_ir_node(n, nn, folded.consts, readers, opset=opset, inputs_behind=behind)
              for n, nn in zip(folded.nodes, folded.names)]
    nodes.append(Node(NETOUTPUT, "NetOutput", st.outputs, ()))
    producer = {t: n.name for n in nodes for t in n.outputs}
    read = dict.fromkeys(t for n in nodes for t in n.inputs)
    weight_names = [t for t in read if t not in producer and t in folded.consts]
    weights = [folded.consts[t].weight(t) for t in weight_names]
    descs = {t: folded.consts[t].desc(t) for t in weight_names}
    by_name = {n.name: n for n in nodes}
    for n in nodes:   # attribute values and opsets first: an uninferable opset leaves shapes unknown
        check_supported(n, None, opset)
    for t in [*producer, *read]:
        if t not in descs:
            try:
                descs[t] = _desc(t, types, producer.get(t, ""))
            except ShapeError as e:
                _runtime_operands(by_name.get(producer.get(t, "")), t, folded, st)
                raise e
    for n in nodes:
        check_supported(n, descs, opset)
    return Graph(name, nodes, descs.values(), weights)
