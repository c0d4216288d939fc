"""Strict shape checks for the model file's JSON metadata.

Every object must have exactly its fields with exactly their types (a bool is
not an int here), so that nothing malformed reaches a constructor and no
TypeError or KeyError can escape the loader: each mismatch is a
ModelFormatError naming the path of the field.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.tasks.tasklist import ArgSlot, IoDesc, TaskDef, TaskList, ZeroCopyRef

_INT, _STR, _BOOL, _LIST, _DICT = "int", "str", "bool", "list", "dict"
_CHECK = {
    _INT: lambda v: isinstance(v, int) and not isinstance(v, bool),
    _STR: lambda v: isinstance(v, str),
    _BOOL: lambda v: isinstance(v, bool),
    _LIST: lambda v: isinstance(v, list),
    _DICT: lambda v: isinstance(v, dict),
}
_PY = {int: _INT, str: _STR, bool: _BOOL, list: _LIST, dict: _DICT}

SLOT = {"role": _STR, "tensor": _STR, "region": _STR, "offset": _INT, "shape": _LIST, "dtype": _STR, "nbytes": _INT}
TASK = {"index": _INT, "node": _STR, "kind": _STR, "op_type": _STR, "stream": _INT, "slots": _LIST,
        "attrs": _LIST, "in_loop": _BOOL, "zero_copy_in": _LIST, "zero_copy_out": _LIST, "batch": _STR,
        "after": _LIST}
IO = {"role": _STR, "index": _INT, "tensor": _STR, "region": _STR, "offset": _INT, "size": _INT, "nbytes": _INT,
      "shape": _LIST, "dtype": _STR, "zero_copy": _BOOL, "name": _STR}
REF = {"task": _INT, "slot": _INT, "role": _STR, "index": _INT, "relative_offset": _INT}
WEIGHT = {"name": _STR, "offset": _INT, "shape": _LIST, "dtype": _STR, "splat": _BOOL, "blob_offset": _INT,
          "blob_nbytes": _INT}
TASKLIST = {"tasks": _LIST, "inputs": _LIST, "outputs": _LIST, "zero_copy": _LIST}


def field(d: dict, key: str, typ, where: str):
    if not isinstance(d, dict) or key not in d:
        raise ModelFormatError(f"{where}.{key}", "missing")
    if not _CHECK[_PY[typ]](d[key]):
        raise ModelFormatError(f"{where}.{key}", f"expected {typ.__name__}, got {type(d[key]).__name__}")
    return d[key]


def obj(d, spec: dict, where: str, *, extra_ok: bool = False) -> dict:
    """``d`` checked against ``spec`` (field -> type tag, None for any JSON value)."""
    if not isinstance(d, dict):
        raise ModelFormatError(where, f"expected an object, got {type(d).__name__}")
    missing = spec.keys() - d.keys()
    extra = d.keys() - spec.keys()
    if missing or (extra and not extra_ok):
        raise ModelFormatError(where, f"fields missing {sorted(missing)} / unexpected {sorted(extra)}")
    for key, tag in spec.items():
        if tag is not None and not _CHECK[tag](d[key]):
            raise ModelFormatError(f"{where}.{key}", f"expected {tag}, got {type(d[key]).__name__}")
    return d


def count(v, where: str, limit: int) -> int:
    if not _CHECK[_INT](v) or not 0 <= v <= limit:
        raise ModelFormatError(where, f"{v!r} is not an integer in [0, {limit}]")
    return v


def ints(v: list, where: str) -> tuple[int, ...]:
    if not all(_CHECK[_INT](x) for x in v):
        raise ModelFormatError(where, f"{v!r} must hold integers only")
    return tuple(v)


def bools(v: list, where: str) -> tuple[bool, ...]:
    if not all(isinstance(x, bool) for x in v):
        raise ModelFormatError(where, f"{v!r} must hold booleans only")
    return tuple(v)


def _scalar(v) -> bool:
    return isinstance(v, (bool, int, str)) or (isinstance(v, float) and math.isfinite(v))


def attr_value(v, where: str):
    if _scalar(v):
        return v
    if isinstance(v, dict) and v.keys() == {"float"} and v["float"] in ("nan", "inf", "-inf"):
        return float(v["float"])
    if isinstance(v, dict) and v.keys() == {"tuple"} and isinstance(v["tuple"], list):
        return tuple(attr_value(x, where) for x in v["tuple"])
    raise ModelFormatError(where, f"unsupported attribute value {v!r}")


def _attrs(items: list, where: str) -> tuple:
    out = []
    for i, item in enumerate(items):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
            raise ModelFormatError(f"{where}[{i}]", "expected [name, value]")
        out.append((item[0], attr_value(item[1], f"{where}.{item[0]}")))
    return tuple(out)


def _slot(d, where: str) -> ArgSlot:
    obj(d, SLOT, where)
    return ArgSlot(d["role"], d["tensor"], d["region"], d["offset"], ints(d["shape"], f"{where}.shape"),
                   d["dtype"], d["nbytes"])


def _task(d, where: str) -> TaskDef:
    obj(d, TASK, where)
    slots = tuple(_slot(s, f"{where}.slots[{j}]") for j, s in enumerate(d["slots"]))
    return TaskDef(d["index"], d["node"], d["kind"], d["op_type"], d["stream"], slots,
                   _attrs(d["attrs"], f"{where}.attrs"), d["in_loop"],
                   bools(d["zero_copy_in"], f"{where}.zero_copy_in"), bools(d["zero_copy_out"], f"{where}.zero_copy_out"),
                   d["batch"], ints(d["after"], f"{where}.after"))


def _io(d, where: str) -> IoDesc:
    obj(d, IO, where)
    return IoDesc(d["role"], d["index"], d["tensor"], d["region"], d["offset"], d["size"], d["nbytes"],
                  ints(d["shape"], f"{where}.shape"), d["dtype"], d["zero_copy"], d["name"])


def tasklist(d: dict) -> TaskList:
    obj(d, TASKLIST, "tasks")
    return TaskList(
        [_task(t, f"tasks[{i}]") for i, t in enumerate(d["tasks"])],
        [_io(x, f"inputs[{i}]") for i, x in enumerate(d["inputs"])],
        [_io(x, f"outputs[{i}]") for i, x in enumerate(d["outputs"])],
        [ZeroCopyRef(**obj(z, REF, f"zero_copy[{i}]")) for i, z in enumerate(d["zero_copy"])],
    )


def weight(d, where: str) -> SimpleNamespace:
    obj(d, WEIGHT, where)
    return SimpleNamespace(**{**d, "shape": ints(d["shape"], f"{where}.shape")})
