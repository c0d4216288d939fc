"""Static shapes for an ONNX graph: fix the inputs' dynamic dims, then run ONNX shape inference.

The IR plans memory statically, so every tensor needs fixed integer dims.
``fixed_input_shapes`` decides each real input's shape from its declaration and
the user's ``--shape`` values; ``infer_types`` runs ``onnx.shape_inference`` in
strict mode (a node whose inputs do not fit its schema is an error, not a
silently missing shape) with data propagation (so Shape -> Gather -> Reshape
chains of exported models resolve), and returns each tensor's element type
and dims (``None`` for a dim or rank still unknown).
"""
from __future__ import annotations

import re
from typing import Mapping

import attrs
import onnx
from onnx import helper, shape_inference

from zcspec.impl.compiler.frontend.errors import InputShapeError, ShapeInferenceError, UnknownInputError

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


def inference_model(model: onnx.ModelProto, inputs, fixed: Mapping[str, tuple[int, ...]], nodes, names,
                    consts) -> onnx.ModelProto:
    """A model for shape inference: the real ``inputs`` with their ``fixed`` shapes, ``nodes`` renamed
    to ``names`` (so inference errors name IR nodes), and ``consts``: TensorProtos, given by value, or
    ValueInfoProtos, typed only (large constants: inference needs values only for small shape-like
    tensors, and copying big weights would multiply the memory a large model takes)."""
    renamed = []
    for node, name in zip(nodes, names):
        renamed.append(onnx.NodeProto())
        renamed[-1].CopyFrom(node)
        renamed[-1].name = name
    values = [c for c in consts if isinstance(c, onnx.TensorProto)]
    typed = [c for c in consts if isinstance(c, onnx.ValueInfoProto)]
    graph = helper.make_graph(
        renamed, model.graph.name or "graph", [_typed_input(v, fixed[v.name]) for v in inputs] + typed,
        [_loosened(v) for v in model.graph.output], values,
        value_info=[_loosened(v) for v in model.graph.value_info],
    )
    # IR 4 lets initializers stand apart from the inputs (IR 3 required listing them as inputs).
    return helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=max(model.ir_version, 4))


_NODE_IN_MESSAGE = re.compile(r"node name: ([^)]*)\)")


def infer_types(model: onnx.ModelProto, *, strict: bool = True) -> dict[str, TypeInfo]:
    """Tensor name -> TypeInfo for every tensor shape inference could type (inputs, outputs, values,
    initializers). ShapeInferenceError naming the node when inference rejects the model. ``strict``
    False types what it can and skips what it cannot (the bodies of If nodes still to be inlined)."""
    try:
        inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=strict, data_prop=True)
    except (shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError) as e:
        text = str(e).strip()
        m = _NODE_IN_MESSAGE.search(text)
        raise ShapeInferenceError(text, node=m.group(1) if m else "") from e
    g = inferred.graph
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
