"""The one JSON serializer/parser pair for the compiler's frozen artefacts (MemoryPlan, PlanOptions, CompileOptions).

Artefacts travel between stages as typed objects; JSON appears only where one
crosses a file or the command line (``zcspec plan --json``, the ``.zcm``
metadata). ``to_json(obj)`` writes an attrs object field by field, in
declaration order; ``from_json(cls, data)`` reads one back, strictly:

- every declared field must be present and no other key (a missing key is an
  error naming it, never a default);
- every value must have the field's annotated type (a bool is not an int, an
  int may stand for a float);
- nested artefacts, ``tuple[T, ...]``, ``X | None``, ``frozenset`` (a sorted
  list of strings) and ``Mapping[str, int]`` are read recursively.

Any mismatch is an :class:`ArtefactFormatError` whose ``path`` locates the
culprit (``tensors[3].offset``). The class's own validators still run, so a
well-typed but illegal value (``strategy="best"``) raises the class's error.
"""
from __future__ import annotations

import functools
import types
import typing
from collections.abc import Mapping

import attrs

from zcspec.impl.compiler.errors import ArtefactFormatError

T = typing.TypeVar("T")


def to_json(obj):
    """``obj`` (an attrs artefact, or a value inside one) as plain JSON data."""
    if attrs.has(type(obj)):
        return {f.name: to_json(getattr(obj, f.name)) for f in attrs.fields(type(obj))}
    if isinstance(obj, (frozenset, set)):
        return sorted(obj)
    if isinstance(obj, (tuple, list)):
        return [to_json(x) for x in obj]
    if isinstance(obj, Mapping):
        return {k: to_json(v) for k, v in obj.items()}
    return obj


def from_json(cls: type[T], data, where: str = "") -> T:
    """The ``cls`` artefact that ``data`` describes; ArtefactFormatError naming the path on any mismatch."""
    return _read(cls, data, where or cls.__name__)


@functools.cache
def _hints(cls) -> dict:
    return typing.get_type_hints(cls)


def _fail(where: str, why: str):
    raise ArtefactFormatError(where, why)


def _object(cls, data, where: str):
    if not isinstance(data, Mapping):
        _fail(where, f"expected an object, got {type(data).__name__}")
    names = [f.name for f in attrs.fields(cls)]
    missing = [n for n in names if n not in data]
    unknown = sorted(k for k in data if k not in names)
    if missing:
        _fail(where, f"missing key(s) {', '.join(map(repr, missing))}")
    if unknown:
        _fail(where, f"unknown key(s) {', '.join(map(repr, unknown))}")
    hints = _hints(cls)
    return cls(**{n: _read(hints[n], data[n], f"{where}.{n}") for n in names})


def _read(tp, value, where: str):
    if attrs.has(tp):
        return _object(tp, value, where)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1:
            _fail(where, f"cannot read a value of type {tp}")
        return _read(inner[0], value, where)
    if tp is frozenset or origin is frozenset:
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            _fail(where, f"expected a list of strings, got {value!r}")
        return frozenset(value)
    if origin is tuple:
        if not isinstance(value, list):
            _fail(where, f"expected a list, got {type(value).__name__}")
        item = args[0] if args else typing.Any
        return tuple(_read(item, x, f"{where}[{i}]") for i, x in enumerate(value))
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        if not isinstance(value, Mapping):
            _fail(where, f"expected an object, got {type(value).__name__}")
        vt = args[1] if len(args) == 2 else typing.Any
        return {str(k): _read(vt, v, f"{where}.{k}") for k, v in value.items()}
    return _scalar(tp, value, where)


def _scalar(tp, value, where: str):
    if tp is typing.Any:
        return value
    if tp is bool:
        ok = isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif tp is str:
        ok = isinstance(value, str)
    else:
        _fail(where, f"cannot read a value of type {tp}")
    if not ok:
        _fail(where, f"expected {tp.__name__}, got {type(value).__name__} {value!r}")
    return value
