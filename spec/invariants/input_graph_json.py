"""The graph JSON format, as docs/graph-format.md states it: what a file must be for the reader to accept it.

The input-file claim INPUT-FORMAT-REFUSED (listed with the others in input_file.py) reads the file's own text
(the observation's ``document``) with the json module and finds where it breaks the document rules: the
format and version, each element's keys and JSON types per version, the attribute value forms, base64 weight
data, the graph rules the format states about its lists (one NetOutput, Data indexes 0..n-1, a
description for every tensor a node writes and every weight, weight data of its description's size, a set
size of at least the raw bytes), the planning attributes' types and ranges and the Merge rules. Nothing here
asks the reader or graph validation what they accept.
"""
from __future__ import annotations

import base64
import binascii
import json
import math
from typing import Iterator

import attrs

from zcspec.spec import dtypes
from zcspec.spec.observables.input_file import InputFileObservation

FORMAT = "zcspec-graph"
VERSIONS = (1, 2, 3)
FORMAT_DOC = "docs/graph-format.md"


@attrs.frozen
class Breach:
    """Where an input file breaks a rule (this one's or input_file.py's): ``where`` for the message, ``names``
    the node, tensor or key a refusal may name for it (empty: nothing to name, such as a text that is not
    JSON)."""

    where: str
    names: tuple[str, ...]


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _names_list(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _value_fault(v, nested: bool = False) -> str | None:
    """Why ``v`` is no attribute value of the format, or None."""
    if isinstance(v, (bool, int, str)):
        return None
    if isinstance(v, float):
        return None if math.isfinite(v) else "a bare non-finite float"
    if isinstance(v, dict) and set(v) == {"float"}:
        return None if _float_text(v["float"]) else f"a float tag holding {v['float']!r}"
    if isinstance(v, dict) and set(v) == {"tuple"} and isinstance(v["tuple"], list):
        if nested:
            return "a tuple inside a tuple"
        return next((f for f in (_value_fault(x, True) for x in v["tuple"]) if f), None)
    if isinstance(v, list):
        return "a list not tagged as a tuple"
    return f"{json.dumps(v)}, no value form of the format"


def _float_text(text) -> bool:
    if not isinstance(text, str):
        return False
    try:
        float(text)
    except ValueError:
        return False
    return True


_NODE_KEYS = {"name": str, "op_type": str, "inputs": "names", "outputs": "names", "attrs": dict, "stream": int}


def _key_fault(item: dict, key: str, kind) -> str | None:
    if key not in item:
        return f"has no {key!r}"
    v = item[key]
    ok = (_names_list(v) if kind == "names" else _is_int(v) if kind is int else isinstance(v, kind))
    want = "a list of names" if kind == "names" else kind.__name__
    return None if ok else f"has {key!r} = {json.dumps(v)[:60]}, not {want}"


def _node_breaches(n, k: int, version: int) -> Iterator[Breach]:
    if not isinstance(n, dict):
        yield Breach(f"nodes[{k}] is not an object", ("nodes",))
        return
    label = n.get("name") if isinstance(n.get("name"), str) else f"nodes[{k}]"
    keys = dict(_NODE_KEYS, **({"control_inputs": "names"} if version >= 2 else {}))
    for key, kind in keys.items():
        if why := _key_fault(n, key, kind):
            yield Breach(f"node {label!r} {why}", (label, key))
    if isinstance(n.get("attrs"), dict):
        for key, v in n["attrs"].items():
            if why := _value_fault(v):
                yield Breach(f"node {label!r} attribute {key!r} is {why}", (label, key))


def _tensor_breaches(t, k: int, version: int) -> Iterator[Breach]:
    if not isinstance(t, dict):
        yield Breach(f"tensors[{k}] is not an object", ("tensors",))
        return
    label = t.get("name") if isinstance(t.get("name"), str) else f"tensors[{k}]"
    for key, kind in (("name", str), ("shape", list), ("dtype", str), ("format", str)):
        if why := _key_fault(t, key, kind):
            yield Breach(f"tensor {label!r} {why}", (label, key))
    if "size" in t:
        if version < 3:
            yield Breach(f"tensor {label!r} has a set size in a version-{version} file (from version 3)",
                         (label, "size"))
        elif not _is_int(t["size"]):
            yield Breach(f"tensor {label!r} has size {json.dumps(t['size'])}, not a whole number of bytes",
                         (label, "size"))
        elif t["size"] < 1:
            yield Breach(f"tensor {label!r} has set size {t['size']}, no bytes", (label, "size"))
        elif (raw := _raw(t)) is not None and t["size"] < raw:
            yield Breach(f"tensor {label!r} has set size {t['size']}, below its {raw} raw bytes", (label, "size"))


def _raw(t: dict) -> int | None:
    """A description's raw bytes, when its shape is fixed and the spec knows its dtype."""
    shape, dtype = t.get("shape"), t.get("dtype")
    if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape) or dtype not in dtypes.BITS:
        return None
    return dtypes.nbytes(tuple(shape), dtype)


def _weight_breaches(w, k: int, descs: dict) -> Iterator[Breach]:
    if not isinstance(w, dict):
        yield Breach(f"weights[{k}] is not an object", ("weights",))
        return
    label = w.get("name") if isinstance(w.get("name"), str) else f"weights[{k}]"
    for key, kind in (("name", str), ("splat", bool), ("data", str)):
        if why := _key_fault(w, key, kind):
            yield Breach(f"weight {label!r} {why}", (label, key))
    if not isinstance(w.get("data"), str):
        return
    try:
        data = base64.b64decode(w["data"], validate=True)
    except (binascii.Error, ValueError):
        yield Breach(f"weight {label!r} holds data that is not base64", (label, "base64"))
        return
    desc = descs.get(label)
    if desc is None or (raw := _raw(desc)) is None:
        return
    want = dtypes.nbytes((1,), desc["dtype"]) if w.get("splat") is True else raw
    if len(data) != want:
        yield Breach(f"weight {label!r} holds {len(data)} bytes, its description needs {want}", (label,))


def _graph_breaches(doc: dict) -> Iterator[Breach]:
    nodes = [n for n in doc["nodes"] if isinstance(n, dict)]
    outs = [n.get("name") for n in nodes if n.get("op_type") == "NetOutput"]
    if len(outs) != 1:
        yield Breach(f"the graph has {len(outs)} NetOutput nodes, not exactly one", ("NetOutput",))
    indexes = sorted(n.get("attrs", {}).get("index") for n in nodes
                     if n.get("op_type") == "Data" and isinstance(n.get("attrs"), dict)
                     and _is_int(n["attrs"].get("index")))
    datas = [n for n in nodes if n.get("op_type") == "Data"]
    if len(indexes) != len(datas) or indexes != list(range(len(indexes))):
        yield Breach(f"the Data nodes' indexes are {indexes}, not 0..{len(datas) - 1}", ("Data", "index"))
    described = {t["name"] for t in doc["tensors"] if isinstance(t, dict) and isinstance(t.get("name"), str)}
    for n in nodes:
        for t in n.get("outputs", []) if _names_list(n.get("outputs")) else []:
            if t and t not in described:
                yield Breach(f"node {n.get('name')!r} writes {t!r}, which has no description", (t,))
        if _names_list(n.get("control_inputs")) and len(set(n["control_inputs"])) != len(n["control_inputs"]):
            yield Breach(f"node {n.get('name')!r} lists a control input twice", (str(n.get("name")),))
    for w in doc["weights"]:
        if isinstance(w, dict) and isinstance(w.get("name"), str) and w["name"] not in described:
            yield Breach(f"weight {w['name']!r} has no description", (w["name"],))


def _decoded(v):
    """An attribute value of the format as the value it stands for (tagged floats and tuples unwrapped)."""
    if isinstance(v, dict) and set(v) == {"float"} and _float_text(v["float"]):
        return float(v["float"])
    if isinstance(v, dict) and set(v) == {"tuple"} and isinstance(v["tuple"], list):
        return tuple(_decoded(x) for x in v["tuple"])
    return v


def _ints(v) -> bool:
    return isinstance(v, tuple) and all(_is_int(k) for k in v)


def _planning_breaches(name: str, inputs: list, attrs: dict) -> Iterator[Breach]:
    """The planning attributes' types and ranges (docs/memory-planning.md, "Node attributes that drive
    planning")."""
    reuse = attrs.get("_reuse_input", False)
    if not (reuse is False or reuse is True or reuse is None) and not (_is_int(reuse) and 0 <= reuse < len(inputs)):
        yield Breach(f"node {name!r} has _reuse_input={reuse!r}, neither True nor the index of one of its "
                     f"{len(inputs)} inputs", (name, "_reuse_input"))
    flat = attrs.get("_inplace_ability", ())
    if not (_ints(flat) and len(flat) % 2 == 0):
        yield Breach(f"node {name!r} has _inplace_ability={flat!r}, not (output, input) index pairs",
                     (name, "_inplace_ability"))
    for flag in ("continuous_output", "need_gentask_atomic"):
        if not isinstance(attrs.get(flag, False), bool):
            yield Breach(f"node {name!r} has {flag}={attrs[flag]!r}, not a boolean", (name, flag))
    if not _ints(attrs.get("atomic_input_index", ())):
        yield Breach(f"node {name!r} has atomic_input_index={attrs['atomic_input_index']!r}, not a tuple of input "
                     "indexes", (name, "atomic_input_index"))


def _merge_breaches(n: dict, attrs: dict, by_output: dict, descs: dict) -> Iterator[Breach]:
    """A Merge joins dynamic-batch branches: one distinct non-empty label per input, each input produced in
    its label's branch and shaped like the output, no branch label of its own."""
    name, inputs = n["name"], n["inputs"]
    labels = attrs.get("labels")
    if not (isinstance(labels, tuple) and len(labels) == len(inputs) and len(set(labels)) == len(labels)
            and all(isinstance(x, str) and x for x in labels)):
        yield Breach(f"Merge {name!r} has labels={labels!r}, not one distinct branch label per input "
                     f"({len(inputs)})", (name, "labels"))
        return
    if attrs.get("_batch_label"):
        yield Breach(f"Merge {name!r} has _batch_label={attrs['_batch_label']!r}: it runs in every branch",
                     (name, "_batch_label"))
    out = descs.get(n["outputs"][0]) if n["outputs"] else None
    for t, label in zip(inputs, labels):
        producer = by_output.get(t)
        got = _decoded(producer["attrs"].get("_batch_label", "")) if producer else ""
        if got != label:
            yield Breach(f"Merge {name!r} lists {t!r} for branch {label!r}, produced in branch {got!r}", (name, t))
        d = descs.get(t)
        shaped = out is not None and d is not None
        if shaped and (d.get("shape"), d.get("dtype")) != (out.get("shape"), out.get("dtype")):
            yield Breach(f"Merge {name!r} input {t!r} is {d.get('shape')}x{d.get('dtype')}, its output "
                         f"{out.get('shape')}x{out.get('dtype')}", (name, t))


def _attribute_breaches(doc: dict) -> Iterator[Breach]:
    nodes = [n for n in doc["nodes"] if isinstance(n, dict) and isinstance(n.get("name"), str)
             and isinstance(n.get("attrs"), dict) and _names_list(n.get("inputs")) and _names_list(n.get("outputs"))]
    descs = {t["name"]: t for t in doc["tensors"] if isinstance(t, dict) and isinstance(t.get("name"), str)}
    by_output = {t: n for n in nodes for t in n["outputs"]}
    for n in nodes:
        attrs = {k: _decoded(v) for k, v in n["attrs"].items()}
        yield from _planning_breaches(n["name"], n["inputs"], attrs)
        if n.get("op_type") == "Merge":
            yield from _merge_breaches(n, attrs, by_output, descs)


def format_breaches(obs: InputFileObservation) -> Iterator[Breach]:
    """Where a graph JSON file's text breaks the format (an ONNX file, or one transcribed without its text:
    none)."""
    if obs.format != "graph_json" or obs.document is None:
        return
    try:
        doc = json.loads(obs.document)
    except ValueError as e:
        yield Breach(f"the file is not JSON ({e})", ())
        return
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        yield Breach(f"its \"format\" is not {FORMAT!r}", ("format",))
        return
    version = doc.get("version")
    if not _is_int(version) or version not in VERSIONS:
        yield Breach(f"its version {json.dumps(version)} is none of {list(VERSIONS)}", ("version",))
        return
    bad_lists = [k for k in ("nodes", "tensors", "weights") if not isinstance(doc.get(k), list)]
    if not isinstance(doc.get("name"), str):
        yield Breach("the graph has no name", ("name",))
    for k in bad_lists:
        yield Breach(f"its {k!r} is not a list", (k,))
    if bad_lists:
        return
    for k, n in enumerate(doc["nodes"]):
        yield from _node_breaches(n, k, version)
    descs = {}
    for k, t in enumerate(doc["tensors"]):
        yield from _tensor_breaches(t, k, version)
        if isinstance(t, dict) and isinstance(t.get("name"), str):
            descs[t["name"]] = t
    for k, w in enumerate(doc["weights"]):
        yield from _weight_breaches(w, k, descs)
    yield from _graph_breaches(doc)
    yield from _attribute_breaches(doc)
