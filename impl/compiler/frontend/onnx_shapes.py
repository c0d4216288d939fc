"""Static shapes for an ONNX graph: fix the inputs' dynamic dims, then run ONNX shape inference.

The IR plans memory statically, so every tensor needs fixed integer dims.
``fixed_input_shapes`` decides each real input's shape from its declaration and
the user's ``--shape`` values; ``infer_types`` runs ``onnx.shape_inference`` in
strict mode (a node whose inputs do not fit its schema is an error, not a
silently missing shape) with data propagation (so Shape -> Gather -> Reshape
chains of exported models resolve), and returns each tensor's element type
and dims (``None`` for a dim or rank still unknown).

Shape annotations are hints, the graph is the truth. Exporters leave
``graph.value_info`` entries and graph output shapes written for another input
size or before a rewrite; onnxruntime merges them leniently (a disagreeing dim
becomes unknown) and runs the model, where strict inference over them fails
("Inferred shape and existing shape differ in rank"). So inference first runs
on the graph alone: ``inference_model`` leaves out the value_info and the
outputs' declared types, except ``trusted`` ones (and the outputs of ops ONNX
has no schema for). ``judge_annotations`` then compares every annotation with
what the graph gives:

- a shape that contradicts it (another rank, a fixed dim of another value) is
  stale: ignored, the inferred shape is used, and it is reported
  (``StaleAnnotation``);
- one that agrees and fixes what the graph leaves unknown (an output whose
  shape depends on an operand known only at run time, as ONNX's node tests
  declare them; the outputs of an op ONNX has no schema for) is trusted: the
  caller runs inference again with it, as before this check existed;
- an element type that disagrees is refused (``DeclaredTypeError``), as
  onnxruntime refuses it: it says what the bytes mean, and neither reading is
  safe to pick for the caller.
"""
from __future__ import annotations

import re
from typing import Collection, Mapping

import attrs
import onnx
from onnx import helper, shape_inference

from zcspec.impl.compiler.frontend.errors import (DeclaredTypeError, InputShapeError, ShapeInferenceError,
                                                  UnknownInputError)

Shape = tuple  # of int | None


@attrs.frozen
class TypeInfo:
    """An ONNX tensor type: element type id (0 = unknown) and dims (None = unknown; shape None = unknown rank)."""

    elem: int
    shape: Shape | None

    @property
    def static(self) -> bool:
        return self.shape is not None and all(isinstance(d, int) for d in self.shape)


def declared_dims(value: onnx.ValueInfoProto) -> Shape | None:
    """Dims as declared: int for a fixed dim, the dim_param string or None for a dynamic one.

    Exporters write a dynamic dim in four ways: a name (``batch``), ``?``, an absent value,
    or a non-positive ``dim_value`` (PaddlePaddle's -1, some tools' 0). All four are dynamic
    here, so ``--shape`` fixes them; a positive value is fixed and ``--shape`` must agree.
    """
    t = value.type.tensor_type
    if not t.HasField("shape"):
        return None
    return tuple(
        d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else (d.dim_param or None) for d in t.shape.dim
    )


def _example(dims: Shape | None, given_rank: int = 4) -> str:
    dims = dims if dims is not None else (None,) * given_rank
    return "x".join(str(d) if isinstance(d, int) and d > 0 else "1" for d in dims)


def _fixed(name: str, declared: Shape | None, given: tuple[int, ...] | None) -> tuple[int, ...]:
    if given is None:
        if declared is not None and all(isinstance(d, int) for d in declared):
            return declared
        if declared is None:
            why = "its rank and dimensions are unknown (dynamic) and not fixed"
        else:
            loose = [f"{i} ({d!r})" for i, d in enumerate(declared) if not isinstance(d, int)]
            why = (f"dimension{'s' if len(loose) > 1 else ''} {', '.join(loose)} "
                   f"{'are' if len(loose) > 1 else 'is'} dynamic and not fixed")
        raise InputShapeError(name, declared, why, hint=f"fix it with --shape {name}={_example(declared)}")
    if declared is not None:
        if len(declared) != len(given):
            raise InputShapeError(name, declared, f"--shape gives rank {len(given)} ({given!r}), the model declares rank {len(declared)}")
        for i, (d, g) in enumerate(zip(declared, given)):
            if isinstance(d, int) and d != g:
                raise InputShapeError(name, declared, f"--shape gives dimension {i} = {g}, the model fixes it to {d}")
    return tuple(given)


def fixed_input_shapes(inputs, shapes: Mapping[str, tuple[int, ...]] | None, *,
                       initializers=()) -> dict[str, tuple[int, ...]]:
    """Input name -> static shape. Every dynamic dim must be fixed by ``shapes``; ``shapes``
    may name only real inputs and may not contradict a fixed dim (InputShapeError, UnknownInputError)."""
    shapes = dict(shapes or {})
    names = tuple(v.name for v in inputs)
    for name in shapes:
        if name not in names:
            why = "is an initializer (a constant), not a graph input" if name in initializers else "is not a graph input"
            raise UnknownInputError(name, names, why=why)
    return {v.name: _fixed(v.name, declared_dims(v), shapes.get(v.name)) for v in inputs}


def _typed_input(value: onnx.ValueInfoProto, shape: tuple[int, ...]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(value.name, value.type.tensor_type.elem_type, shape)


def _loosened(value: onnx.ValueInfoProto) -> onnx.ValueInfoProto:
    """``value`` with its non-positive dims made unknown: a declared -1 or 0 means dynamic (see
    ``declared_dims``), and shape inference would otherwise hold it against the fixed inputs."""
    out = onnx.ValueInfoProto()
    out.CopyFrom(value)
    if out.type.HasField("tensor_type") and out.type.tensor_type.HasField("shape"):
        for d in out.type.tensor_type.shape.dim:
            if d.HasField("dim_value") and d.dim_value <= 0:
                d.Clear()
    return out


def schemaless_outputs(nodes) -> set[str]:
    """The tensors written by nodes ONNX has no schema for: inference cannot type them, so their
    annotations (value_info, a graph output's type) are the only type they have and are always given."""
    return {t for n in nodes if not onnx.defs.has(n.op_type, n.domain) for t in n.output if t}


def inference_model(model: onnx.ModelProto, inputs, fixed: Mapping[str, tuple[int, ...]], nodes, names,
                    consts, *, trusted: Collection[tuple[str, str]] = ()) -> onnx.ModelProto:
    """A model for shape inference: the real ``inputs`` with their ``fixed`` shapes, ``nodes`` renamed
    to ``names`` (so inference errors name IR nodes), and ``consts``: TensorProtos, given by value, or
    ValueInfoProtos, typed only (large constants: inference needs values only for small shape-like
    tensors, and copying big weights would multiply the memory a large model takes).

    The file's value_info and its outputs' types are left out (the outputs go in untyped) except
    the ``trusted`` ones ((role, tensor) pairs, roles as in ``StaleAnnotation``) and those of the
    ``schemaless_outputs``: a stale annotation would fail strict inference ("Inferred shape and
    existing shape differ"); ``judge_annotations`` says which ones to trust."""
    renamed = []
    for node, name in zip(nodes, names):
        renamed.append(onnx.NodeProto())
        renamed[-1].CopyFrom(node)
        renamed[-1].name = name
    values = [c for c in consts if isinstance(c, onnx.TensorProto)]
    typed = [c for c in consts if isinstance(c, onnx.ValueInfoProto)]
    schemaless, trusted = schemaless_outputs(nodes), set(trusted)
    outputs = [_loosened(v) if v.name in schemaless or ("output", v.name) in trusted
               else helper.make_empty_tensor_value_info(v.name) for v in model.graph.output]
    graph = helper.make_graph(
        renamed, model.graph.name or "graph", [_typed_input(v, fixed[v.name]) for v in inputs] + typed,
        outputs, values, value_info=[_loosened(v) for v in model.graph.value_info
                                       if v.name in schemaless or ("value_info", v.name) in trusted],
    )
    # IR 4 lets initializers stand apart from the inputs (IR 3 required listing them as inputs).
    return helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=max(model.ir_version, 4))


_NODE_IN_MESSAGE = re.compile(r"node name: ([^)]*)\)")


def inferred_model(model: onnx.ModelProto, *, strict: bool = True) -> onnx.ModelProto:
    """``model`` as ONNX shape inference types it (strict, with data propagation: see the module doc);
    ShapeInferenceError naming the node when inference rejects it."""
    try:
        return shape_inference.infer_shapes(model, check_type=True, strict_mode=strict, data_prop=True)
    except (shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError) as e:
        text = str(e).strip()
        m = _NODE_IN_MESSAGE.search(text)
        raise ShapeInferenceError(text, node=m.group(1) if m else "") from e


def infer_types(model: onnx.ModelProto, *, strict: bool = True) -> dict[str, TypeInfo]:
    """Tensor name -> TypeInfo for every tensor shape inference could type (inputs, outputs, values,
    initializers). ShapeInferenceError naming the node when inference rejects the model. ``strict``
    False types what it can and skips what it cannot (the bodies of If nodes still to be inlined)."""
    g = inferred_model(model, strict=strict).graph
    types: dict[str, TypeInfo] = {}
    for t in g.initializer:
        types[t.name] = TypeInfo(t.data_type, tuple(t.dims))
    for v in (*g.input, *g.value_info, *g.output):
        tt = v.type.tensor_type
        # Inferred, not declared: a 0 here is a real zero-sized dim (the declared 0s and -1s that
        # mean "dynamic" were cleared before inference, see _loosened).
        dims = None
        if tt.HasField("shape"):
            dims = tuple(d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None for d in tt.shape.dim)
        types[v.name] = TypeInfo(tt.elem_type, dims)
    return types


@attrs.frozen
class StaleAnnotation:
    """A shape annotation of the model file the graph contradicts, ignored for the ``inferred`` shape.

    ``role`` is ``"value_info"`` (an intermediate's annotation) or ``"output"`` (a declared graph
    output); ``declared`` holds the annotation's dims as ``declared_dims`` reads them (a name or None
    for a dynamic dim); ``inferred`` is what the graph gives, None when no tensor of the graph has
    that name (an entry left behind by a rewrite)."""

    tensor: str
    role: str
    declared: Shape
    inferred: tuple[int | None, ...] | None

    def __str__(self) -> str:
        who = f"{'output ' if self.role == 'output' else ''}{self.tensor!r}"
        if self.inferred is None:
            return f"{who} declared {_dims(self.declared)}, no tensor of the graph has that name"
        return f"{who} declared {_dims(self.declared)} inferred {_dims(self.inferred)}"


def _dims(dims: Shape) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def _contradicts(declared: Shape, inferred: Shape) -> bool:
    """A rank that differs, or a dim fixed on both sides to different values (a dynamic dim agrees with any)."""
    return len(declared) != len(inferred) or any(
        isinstance(d, int) and isinstance(i, int) and d != i for d, i in zip(declared, inferred))


@attrs.frozen
class Judgement:
    """What ``judge_annotations`` found: the ``stale`` annotations (ignored, reported) and the
    ``filling`` ones as (role, tensor) pairs: agreeing, and fixing a dim, a rank or an element type
    the graph leaves unknown."""

    stale: tuple[StaleAnnotation, ...]
    filling: frozenset[tuple[str, str]]


def _fills(declared: Shape | None, elem: int, info: TypeInfo) -> bool:
    if elem and not info.elem:
        return True
    if declared is None:
        return False
    return info.shape is None or any(i is None and isinstance(d, int) for d, i in zip(declared, info.shape))


def judge_annotations(model: onnx.ModelProto, types: Mapping[str, TypeInfo], producer: Mapping[str, str],
                      tensors) -> Judgement:
    """The value_info entries and declared outputs of ``model`` judged against the ``types`` inferred
    from the graph alone (see the module docstring). Stale: the shape contradicts ``types``, or the
    entry names none of ``tensors`` (the graph's tensor names, a leftover of a rewrite); file order,
    value_info first. DeclaredTypeError, naming the tensor and ``producer[tensor]``, when a declared
    element type differs from the inferred one: onnxruntime refuses such a model too ("Type Error:
    Type (tensor(int64)) of output arg ...")."""
    stale, filling = [], set()
    for role, values in (("value_info", model.graph.value_info), ("output", model.graph.output)):
        for v in values:
            if v.type.WhichOneof("value") != "tensor_type":
                continue
            declared, elem = declared_dims(v), v.type.tensor_type.elem_type
            if v.name not in tensors:
                if declared is not None:
                    stale.append(StaleAnnotation(v.name, role, declared, None))
                continue
            info = types.get(v.name, TypeInfo(0, None))
            if elem and info.elem and elem != info.elem:
                raise DeclaredTypeError(v.name, role, elem, info.elem, node=producer.get(v.name, ""))
            if declared is not None and info.shape is not None and _contradicts(declared, info.shape):
                stale.append(StaleAnnotation(v.name, role, declared, info.shape))
            elif _fills(declared, elem, info):
                filling.add((role, v.name))
    return Judgement(tuple(stale), frozenset(filling))
