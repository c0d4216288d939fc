"""Lossless, versioned JSON for graphs: counterexample files carry graphs in this form.

``from_json(to_json(g)) == g`` for every graph: attribute value types (bool,
int, float, str, tuples of those) survive, floats keep every bit (NaN and
infinities included), weights travel as base64.
"""
from __future__ import annotations

import base64
import json
import math
from typing import Any

from zcspec.impl.compiler.errors import GraphFormatError
from zcspec.impl.compiler.ir import Graph, Node, TensorDesc, Weight

FORMAT = "zcspec-graph"
# 2: every node carries "control_inputs" (the nodes it must run after, GE's control edges); a version-1
#    file has none, and is read as such.
# 3: a tensor may carry "size", its set size (TensorDesc.size, GE's TensorUtils::SetSize). A graph
#    without set sizes is still written as version 2, byte for byte as before; one with set sizes is
#    version 3, so that a reader that knows no set size refuses it instead of dropping them.
VERSION = 3
READS = (1, 2, 3)
_WITHOUT_SET_SIZES = 2


def encode_value(v: Any) -> Any:
    # A float keeps its type through JSON even when integral (1.0 stays 1.0);
    # non-finite floats use a tagged object so the text stays strict JSON.
    if isinstance(v, float) and not math.isfinite(v):
        return {"float": repr(v)}
    if isinstance(v, tuple):
        return {"tuple": [encode_value(x) for x in v]}
    return v


def decode_value(v: Any, where: str = "attribute value") -> Any:
    """An attribute value as the IR carries it; ``where`` names it in a refusal (``node 'relu' attribute 'perm'``)."""
    if isinstance(v, dict):
        if "float" in v:
            try:
                return float(v["float"])
            except (TypeError, ValueError):
                raise GraphFormatError(f"{where}: the float tag {v['float']!r} holds no float") from None
        if "tuple" in v:
            if not isinstance(v["tuple"], list):
                raise GraphFormatError(f"{where}: the tuple tag holds {v['tuple']!r}, not a list")
            return tuple(decode_value(x, where) for x in v["tuple"])
    if isinstance(v, list):
        raise GraphFormatError(f"{where}: {v!r}: lists must be tagged as tuples")
    return v


def _tensor(t: TensorDesc) -> dict:
    out = {"name": t.name, "shape": list(t.shape), "dtype": t.dtype, "format": t.format}
    if t.size is not None:
        out["size"] = t.size
    return out


def to_dict(graph: Graph) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION if any(t.size is not None for t in graph.tensors) else _WITHOUT_SET_SIZES,
        "name": graph.name,
        "nodes": [
            {
                "name": n.name,
                "op_type": n.op_type,
                "inputs": list(n.inputs),
                "outputs": list(n.outputs),
                "attrs": {k: encode_value(v) for k, v in n.attrs},
                "stream": n.stream,
                "control_inputs": list(n.control_inputs),
            }
            for n in graph.nodes
        ],
        "tensors": [_tensor(t) for t in graph.tensors],
        "weights": [
            {"name": w.name, "splat": w.splat, "data": base64.b64encode(w.data).decode("ascii")}
            for w in graph.weights
        ],
    }


def from_dict(doc: dict) -> Graph:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise GraphFormatError(f"not a zcspec graph: expected \"format\": {FORMAT!r}")
    version = doc.get("version")
    if version not in READS:
        raise GraphFormatError(f"graph format version {version!r} is not supported (this zcspec reads "
                               f"{', '.join(map(str, READS))})")
    try:
        nodes = [_node(n, k, version) for k, n in enumerate(doc["nodes"])]
        tensors = [TensorDesc(t["name"], t["shape"], t["dtype"], t["format"], _set_size(t, version))
                   for t in doc["tensors"]]
        weights = [Weight(w["name"], _weight_data(w), bool(w["splat"])) for w in doc["weights"]]
        return Graph(doc["name"], nodes, tensors, weights)
    # AttributeError: a field that must be an object is not
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        if isinstance(e, GraphFormatError):
            raise
        raise GraphFormatError(f"malformed graph JSON: {type(e).__name__}: {e}") from e


def _node(n, k: int, version: int) -> Node:
    """Node ``k`` of the document, each field checked for its JSON type (a refusal names the node and the key)."""
    if not isinstance(n, dict):
        raise GraphFormatError(f"nodes[{k}] is {type(n).__name__}, not an object")
    name = n.get("name")
    who = f"node {name!r}" if isinstance(name, str) else f"nodes[{k}]"
    for key, ok, want in (("name", lambda v: isinstance(v, str), "a string"),
                          ("op_type", lambda v: isinstance(v, str), "a string"),
                          ("inputs", _is_names, "a list of tensor names"),
                          ("outputs", _is_names, "a list of tensor names"),
                          ("attrs", lambda v: isinstance(v, dict), "an object"),
                          ("stream", lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer")):
        if key not in n:
            raise GraphFormatError(f"{who}: no \"{key}\"")
        if not ok(n[key]):
            raise GraphFormatError(f"{who}: \"{key}\" must be {want}, got {n[key]!r}")
    return Node(name=name, op_type=n["op_type"], inputs=n["inputs"], outputs=n["outputs"],
                attrs={a: decode_value(v, f"{who} attribute {a!r}") for a, v in n["attrs"].items()},
                stream=n["stream"], control_inputs=_names(_required(n, "control_inputs", who), name)
                if version >= 2 else ())


def _required(item: dict, key: str, who: str):
    if key not in item:
        raise GraphFormatError(f"{who}: no \"{key}\"")
    return item[key]


def _is_names(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _weight_data(w: dict) -> bytes:
    try:
        return base64.b64decode(w["data"], validate=True)
    except (TypeError, ValueError) as e:   # binascii.Error is a ValueError
        raise GraphFormatError(f"weight {w.get('name')!r}: \"data\" is not base64 ({e})") from e


def _set_size(tensor: dict, version: int) -> int | None:
    """A tensor's "size" (version 3 on): an integer, or absent (the size follows from the shape)."""
    if "size" not in tensor:
        return None
    size = tensor["size"]
    if version < 3:
        raise GraphFormatError(f"tensor {tensor['name']!r}: \"size\" (a set size) needs graph format version 3, "
                               f"this file is version {version}")
    if not isinstance(size, int) or isinstance(size, bool):
        raise GraphFormatError(f"tensor {tensor['name']!r}: \"size\" must be an integer number of bytes, got {size!r}")
    return size


def _names(value, node) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise GraphFormatError(f"node {node!r}: \"control_inputs\" must be a list of node names, got {value!r}")
    return tuple(value)


def to_json(graph: Graph, *, indent: int | None = None) -> str:
    return json.dumps(to_dict(graph), indent=indent, allow_nan=False)


def from_json(text: str) -> Graph:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise GraphFormatError(f"graph JSON does not parse: {e}") from e
    return from_dict(doc)
