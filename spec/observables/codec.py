"""JSON round trip for the observation value objects, driven by their type hints.

Observations are frozen ``attrs`` classes whose fields are typed with a small
vocabulary: ``int``, ``float``, ``str``, ``bool``, ``Literal[...]``,
``X | None``, ``tuple[X, ...]`` (a JSON list), ``tuple[X, Y]`` (a JSON list
with one item per position), ``dict[str, X]`` (a JSON
object) and nested observation classes (a JSON object with one key per field).
:func:`to_data` and :func:`from_data` convert between an instance and plain
JSON data; ``from_data(cls, to_data(x)) == x`` for every valid ``x``.

Parsing is strict, because a spec that silently reads a misspelt key as its
default would certify the wrong thing: unknown keys, missing required keys and
wrong types raise :class:`ObservationFormatError` naming the path of the
culprit, e.g. ``tensors[3].offset: expected int, got '512'``.
"""
from __future__ import annotations

import difflib
import functools
import json
import types
import typing
from typing import Any, Literal, Union

import attrs

from zcspec.spec.errors import ObservationFormatError, SpecError

_MISSING = attrs.NOTHING


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def to_data(value: Any) -> Any:
    """Plain JSON data (dicts, lists, str, numbers, bools, None) for an observation value."""
    if attrs.has(type(value)):
        return {f.name: to_data(getattr(value, f.name)) for f in attrs.fields(type(value))}
    if isinstance(value, tuple):
        return [to_data(v) for v in value]
    if isinstance(value, dict):
        return {k: to_data(v) for k, v in value.items()}
    return value


def from_data(cls: type, data: Any, path: str = "") -> Any:
    """An instance of the observation class ``cls`` from plain JSON data (strict; see module doc)."""
    return _convert(cls, data, path)


def dumps(value: Any) -> str:
    """Canonical JSON text: sorted keys, two-space indent, so files diff well."""
    return json.dumps(to_data(value), indent=2, sort_keys=True)


# Classes whose file format has a reader of its own (the plan: spec/observables/plan_contract.py,
# which registers itself), so that ``loads`` and the command line read a file the same way.
_READERS: dict[type, Any] = {}


def register_reader(cls: type, reader) -> None:
    """Make ``loads(cls, ...)`` parse with ``reader(data) -> cls`` instead of :func:`from_data`."""
    _READERS[cls] = reader


def loads(cls: type, text: str, *, file: str = "") -> Any:
    """Parse JSON text into ``cls``; errors name ``file`` and the path inside it."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ObservationFormatError(f"not JSON: {e}", file=file) from e
    try:
        return _READERS[cls](data) if cls in _READERS else from_data(cls, data)
    except SpecError as e:
        raise e.in_file(file) if file and hasattr(e, "in_file") else e


def _kind(value: Any) -> str:
    return type(value).__name__ if value is not None else "null"


def _convert(tp: Any, data: Any, path: str) -> Any:
    origin = typing.get_origin(tp)
    if attrs.has(tp):
        return _convert_object(tp, data, path)
    if origin in (Union, types.UnionType):
        return _convert_union(tp, data, path)
    if origin is tuple:
        return _convert_tuple(tp, data, path)
    if origin is dict:
        return _convert_dict(tp, data, path)
    if origin is Literal:
        if data not in typing.get_args(tp):
            raise ObservationFormatError(f"expected one of {list(typing.get_args(tp))}, got {data!r}", path=path)
        return data
    return _convert_scalar(tp, data, path)


def _convert_scalar(tp: Any, data: Any, path: str) -> Any:
    if tp is Any:
        return data
    if tp is float and isinstance(data, (int, float)) and not isinstance(data, bool):
        return float(data)
    # bool is an int in Python; a JSON true where a number belongs is still an error.
    if tp is int and isinstance(data, bool):
        raise ObservationFormatError(f"expected int, got {data!r}", path=path)
    if tp in (int, str, bool) and isinstance(data, tp):
        return data
    raise ObservationFormatError(f"expected {getattr(tp, '__name__', tp)}, got {_kind(data)} {data!r}", path=path)


def _convert_union(tp: Any, data: Any, path: str) -> Any:
    args = typing.get_args(tp)
    if data is None:
        if type(None) in args:
            return None
        raise ObservationFormatError("must not be null", path=path)
    options = [a for a in args if a is not type(None)]
    errors = []
    for option in options:
        try:
            return _convert(option, data, path)
        except ObservationFormatError as e:
            errors.append(e)
    raise errors[0] if len(errors) == 1 else ObservationFormatError(f"no form of {tp} accepts {data!r}", path=path)


def _convert_tuple(tp: Any, data: Any, path: str) -> tuple:
    if not isinstance(data, list):
        raise ObservationFormatError(f"expected a list, got {_kind(data)}", path=path)
    args = typing.get_args(tp)
    if len(args) == 2 and args[1] is Ellipsis:   # tuple[X, ...]: any length, every item an X
        return tuple(_convert(args[0], v, f"{path}[{i}]") for i, v in enumerate(data))
    if len(data) != len(args):                    # tuple[X, Y]: one item per position
        raise ObservationFormatError(f"expected a list of {len(args)}, got {len(data)} item(s)", path=path)
    return tuple(_convert(t, v, f"{path}[{i}]") for i, (t, v) in enumerate(zip(args, data)))


def _convert_dict(tp: Any, data: Any, path: str) -> dict:
    if not isinstance(data, dict):
        raise ObservationFormatError(f"expected an object, got {_kind(data)}", path=path)
    _key, item = typing.get_args(tp)
    return {str(k): _convert(item, v, f"{path}.{k}" if path else str(k)) for k, v in data.items()}


def _convert_object(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, dict):
        raise ObservationFormatError(f"expected an object for {cls.__name__}, got {_kind(data)}", path=path)
    hints = _hints(cls)
    fields = {f.name: f for f in attrs.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        hints = [f"{k!r} -> {m[0]!r}" for k in unknown if (m := difflib.get_close_matches(k, fields, n=1))]
        meant = f" (did you mean {', '.join(hints)}?)" if hints else ""
        raise ObservationFormatError(
            f"unknown key(s) {unknown} for {cls.__name__}{meant}; known: {sorted(fields)}", path=path or "<root>")
    kwargs = {}
    for name, field in fields.items():
        sub = f"{path}.{name}" if path else name
        if name not in data:
            if field.default is _MISSING:
                raise ObservationFormatError(f"missing required key {name!r} of {cls.__name__}", path=path or "<root>")
            continue
        kwargs[name] = _convert(hints[name], data[name], sub)
    try:
        return cls(**kwargs)
    except SpecError:
        raise   # a consistency check of the observation: it names its own JSON path
    except (ValueError, TypeError) as e:
        raise ObservationFormatError(str(e), path=path or "<root>") from e
