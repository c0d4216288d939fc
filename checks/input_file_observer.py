"""Transcribe an input file (an ONNX model, a zcspec graph JSON file) into the spec's InputFileObservation.

The file is read as its format writes it, with the onnx package and the json module, never with the
front end under test (impl/compiler/frontend, impl/compiler/graph_json.py): a reader that drops a node or
a duplicate must not also decide what the claims see. ``observe_input_file(path, outcome)`` returns None
for a file that cannot be transcribed (not an ONNX model, a .json file that is not text); a graph JSON
file carries its text (``document``) for the format claim, and, when its lists can be read (a zcspec graph,
each node with a name and op type, lists of names), its nodes, tensors and weights for the others.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from typing import Mapping

import attrs
import numpy as np
import onnx
from onnx import AttributeProto, numpy_helper

from zcspec.spec.dtypes import ALIASES
from zcspec.spec.observables.input_file import (SMALL, ImportOutcome, InputFileObservation, InputNode, InputTensor,
                                                TypedValue)

GRAPH_JSON_FORMAT = "zcspec-graph"


def outcome_of(error: BaseException | None) -> ImportOutcome:
    """The import's outcome: accepted (``error`` None) or refused with ``error``."""
    if error is None:
        return ImportOutcome(True)
    bases = tuple(c.__name__ for c in type(error).__mro__ if c not in (object, BaseException))
    return ImportOutcome(False, bases, str(error))


def observe_input_file(path: str, outcome: ImportOutcome, shapes_given: tuple[str, ...] = (), imported=None
                       ) -> InputFileObservation | None:
    """``path``'s transcription with the import's ``outcome``; ``shapes_given``: the inputs the caller fixed
    the shape of (``--shape``); ``imported``: what the import returned, when it shows its tensors' types (see
    :func:`imported_types`). None when the file is neither a readable ONNX model nor a zcspec graph."""
    if path.endswith(".json"):
        return _graph_json(path, outcome, shapes_given)
    obs = _onnx(path, outcome, shapes_given)
    if obs is None or not outcome.accepted:
        return obs
    return attrs.evolve(obs, imported=imported_types(imported))


def imported_types(imported) -> tuple[TypedValue, ...] | None:
    """The tensors an import returned with their shapes and types, as it gives them: a zcspec IR graph (its
    tensor descs, read as written), or a mapping tensor name -> (shape, dtype name) from a front end someone
    else wrote (docs/frontend.md); None for anything else (nothing to transcribe)."""
    desc = getattr(imported, "desc", None)
    if isinstance(desc, Mapping):
        pairs = ((name, (d.shape, d.dtype)) for name, d in desc.items())
    elif isinstance(imported, Mapping):
        pairs = imported.items()
    else:
        return None
    out = []
    for name, typed in pairs:
        try:
            shape, dtype = typed
            dims = tuple(shape)
        except (TypeError, ValueError):
            raise TypeError(f"the import returned tensor {name!r} as {typed!r}: expected (shape, dtype name), "
                            "e.g. ((1, 1000), 'float32')") from None
        if all(isinstance(d, int) for d in dims):
            out.append(TypedValue(str(name), dims, str(dtype)))
    return tuple(out)


def _typed(model) -> tuple[TypedValue, ...]:
    """The values ONNX's shape inference gives a fixed shape and an element type (none when it cannot run),
    inferred from the graph's inputs and nodes: the file's annotations of other values (``value_info``, the
    outputs' shapes) are left out first, since an exporter may leave them written for another input size,
    and the inference would keep such a stale shape where the graph gives another."""
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    del bare.graph.value_info[:]
    for out in bare.graph.output:
        if out.type.WhichOneof("value") == "tensor_type":
            out.type.tensor_type.ClearField("shape")
    try:
        graph = onnx.shape_inference.infer_shapes(bare, strict_mode=False).graph
    except Exception:   # a file the inference rejects: it types nothing
        return ()
    out = {}
    for v in list(graph.input) + list(graph.value_info) + list(graph.output):
        if v.type.WhichOneof("value") != "tensor_type" or not v.type.tensor_type.elem_type:
            continue
        dims = _onnx_dims(v.type)
        if dims is None or not all(isinstance(d, int) for d in dims):
            continue
        name = onnx.TensorProto.DataType.Name(v.type.tensor_type.elem_type).lower()
        out.setdefault(v.name, TypedValue(v.name, dims, ALIASES.get(name, name)))
    return tuple(out.values())


def _duplicates(what: str, names) -> tuple[tuple[str, str], ...]:
    return tuple((what, n) for n, k in Counter(names).items() if k > 1)


def _onnx(path: str, outcome: ImportOutcome, shapes_given) -> InputFileObservation | None:
    try:
        model = onnx.load(path, load_external_data=False)
    except Exception:   # not a protobuf the onnx package reads: nothing to transcribe
        return None
    if not model.HasField("graph"):
        return None
    g = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    constants = [t.name for t in g.initializer] + [t.values.name for t in g.sparse_initializer]
    inputs = [i.name for i in g.input]
    shaped = tuple(InputTensor(i.name, _onnx_dims(i.type)) for i in g.input if i.name not in constants)
    nodes = tuple(InputNode(n.name, n.op_type, n.domain, tuple(n.input), tuple(n.output), attributes=_attributes(n))
                  for n in g.node)
    return InputFileObservation(
        "onnx", os.path.basename(path), outcome, opset=opset, nodes=nodes, graph_inputs=tuple(inputs),
        constants=tuple(constants), graph_outputs=tuple(o.name for o in g.output), shaped=shaped,
        shapes_given=tuple(shapes_given),
        duplicates=_duplicates("graph input", inputs) + _duplicates("initializer", constants),
        values=_small_values(g), typed=_typed(model))


_NUMBERS = {AttributeProto.INT: "i", AttributeProto.FLOAT: "f", AttributeProto.STRING: "s",
            AttributeProto.INTS: "ints", AttributeProto.FLOATS: "floats", AttributeProto.STRINGS: "strings"}


def _text(b: bytes) -> str:
    return b.decode("utf-8", errors="replace")


def _attributes(node) -> dict:
    """The node's number and text attributes as written (a tensor or graph attribute is left out)."""
    out = {}
    for a in node.attribute:
        field = _NUMBERS.get(a.type)
        if field is None:
            continue
        v = getattr(a, field)
        if field == "s":
            v = _text(v)
        elif field == "strings":
            v = tuple(_text(x) for x in v)
        elif field in ("ints", "floats"):
            v = tuple(v)
        out[a.name] = v
    return out


def _elements(tensor) -> tuple[float, ...] | None:
    """A small tensor's elements as numbers, or None (too large, external data, not numeric)."""
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        return None
    try:
        array = numpy_helper.to_array(tensor)
    except Exception:   # a tensor the onnx package cannot decode: no values to transcribe
        return None
    if array.size > SMALL or array.dtype.kind not in "biuf":
        return None
    return tuple(float(x) for x in np.asarray(array, dtype=np.float64).reshape(-1))


def _small_values(g) -> dict[str, tuple[float, ...]]:
    """The elements of the small initializers and Constant node outputs, by tensor name."""
    out = {}
    for t in g.initializer:
        if (v := _elements(t)) is not None:
            out[t.name] = v
    for n in g.node:
        if n.op_type != "Constant" or n.domain not in ("", "ai.onnx") or len(n.output) != 1:
            continue
        for a in n.attribute:
            if a.name == "value" and a.type == AttributeProto.TENSOR:
                v = _elements(a.t)
            elif a.name in ("value_float", "value_int"):
                v = (float(a.f if a.name == "value_float" else a.i),)
            elif a.name in ("value_floats", "value_ints"):
                v = tuple(float(x) for x in (a.floats if a.name == "value_floats" else a.ints))
                v = v if len(v) <= SMALL else None
            else:
                continue
            if v is not None:
                out[n.output[0]] = v
    return out


def _onnx_dims(type_proto) -> tuple[int | str, ...] | None:
    if type_proto.WhichOneof("value") != "tensor_type" or not type_proto.tensor_type.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
                 for d in type_proto.tensor_type.shape.dim)


def _graph_json(path: str, outcome: ImportOutcome, shapes_given) -> InputFileObservation | None:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, ValueError):
        return None
    bare = InputFileObservation("graph_json", os.path.basename(path), outcome, shapes_given=tuple(shapes_given),
                                document=text)
    try:
        doc = json.loads(text)
    except ValueError:
        return bare
    if not isinstance(doc, dict) or doc.get("format") != GRAPH_JSON_FORMAT or not isinstance(doc.get("nodes"), list):
        return bare
    if not isinstance(doc.get("tensors"), list) or not isinstance(doc.get("weights"), list):
        return bare
    nodes = []
    for n in doc["nodes"]:
        if not isinstance(n, dict) or not isinstance(n.get("name"), str) or not isinstance(n.get("op_type"), str):
            return bare
        lists = [n.get("inputs"), n.get("outputs"), n.get("control_inputs", [])]
        if not all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in lists):
            return bare
        nodes.append(InputNode(n["name"], n["op_type"], inputs=tuple(lists[0]), outputs=tuple(lists[1]),
                               control_inputs=tuple(lists[2])))
    descs = [t for t in doc["tensors"] if isinstance(t, dict) and isinstance(t.get("name"), str)]
    weights = [w["name"] for w in doc["weights"] if isinstance(w, dict) and isinstance(w.get("name"), str)]
    shaped = tuple(InputTensor(t["name"], _json_dims(t.get("shape"))) for t in descs)
    return attrs.evolve(
        bare, nodes=tuple(nodes), constants=tuple(weights), shaped=shaped,
        duplicates=_duplicates("tensor description", [t["name"] for t in descs]) + _duplicates("weight", weights))


def _json_dims(shape) -> tuple[int | str, ...] | None:
    if not isinstance(shape, list):
        return None
    return tuple(d if isinstance(d, int) and not isinstance(d, bool) else json.dumps(d) for d in shape)
