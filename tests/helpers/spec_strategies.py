"""Hypothesis strategies for spec observations, built from their type hints.

``values(cls)`` draws any well-typed instance of an observation class;
``plans()`` draws plans whose names are consistent (the plan checks its
references on construction), through the same row builder the examples use.
"""
from __future__ import annotations

import functools
import types
import typing
from typing import Any, Literal, Union

import attrs
from hypothesis import strategies as st

from zcspec.spec.examples.build import plan
from zcspec.spec.observables import ExecutionObservation, ModelFileObservation, NodeInfo, PlanAttributes

_NAMES = st.text(alphabet="abcxyz_/:0123456789", min_size=1, max_size=6)


def _for(tp: Any) -> st.SearchStrategy:
    if attrs.has(tp):
        return values(tp)
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return st.one_of([_for(a) for a in typing.get_args(tp)])
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return st.lists(_for(args[0]), max_size=3).map(tuple)
        return st.tuples(*(_for(a) for a in args))
    if origin is dict:
        return st.dictionaries(_NAMES, _for(typing.get_args(tp)[1]), max_size=3)
    if origin is Literal:
        return st.sampled_from(typing.get_args(tp))
    return {
        int: st.integers(-(2 ** 62), 2 ** 62),
        float: st.floats(allow_nan=False, allow_infinity=False),
        str: _NAMES,
        bool: st.booleans(),
        type(None): st.none(),
    }[tp]


@functools.lru_cache(maxsize=None)
def values(cls: type) -> st.SearchStrategy:
    """Any instance of ``cls`` whose every field, optional ones included, is drawn from its type hint."""
    if cls is ModelFileObservation:
        return _model_files()
    hints = typing.get_type_hints(cls)
    if cls is ExecutionObservation:   # a model is unloaded once (the observation refuses a second unload)
        fields = {f.name: st.deferred(lambda t=hints[f.name]: _for(t)) for f in attrs.fields(cls) if f.name != "events"}
        events = _for(hints["events"]).filter(lambda evs: sum(e.kind == "unload" for e in evs) <= 1)
        return st.builds(cls, events=events, **fields)
    return st.builds(cls, **{f.name: st.deferred(lambda t=hints[f.name]: _for(t)) for f in attrs.fields(cls)})


@st.composite
def _model_files(draw) -> ModelFileObservation:
    nodes = []
    for i in range(draw(st.integers(0, 4))):
        inputs = draw(st.lists(st.sampled_from([n.name for n in nodes]), max_size=2)) if nodes else []
        nodes.append(NodeInfo(f"n{i}", draw(_NAMES), tuple(inputs), draw(st.booleans())))
    hints = typing.get_type_hints(ModelFileObservation)
    rest = {f.name: draw(_for(hints[f.name])) for f in attrs.fields(ModelFileObservation) if f.name != "nodes"}
    return ModelFileObservation(nodes=tuple(nodes), **rest)


REGIONS = ("feature_map", "zero_copy", "weight")


@st.composite
def rows(draw, *, min_size: int = 1, max_size: int = 8, max_steps: int = 6, max_offset_blocks: int = 6,
         aliases: bool = True, regions=("feature_map",)):
    """Plan rows (name, region, offset, size, first, last[, alias_of]) with random, possibly overlapping, placements."""
    out = []
    for i in range(draw(st.integers(min_size, max_size))):
        first = draw(st.integers(0, max_steps - 1))
        last = draw(st.integers(first, max_steps - 1))
        size = draw(st.integers(0, 3 * 512))
        if aliases and out and draw(st.booleans()) and draw(st.booleans()):
            root = draw(st.sampled_from(out))
            out.append((f"t{i}", root[1], root[2], min(size, root[3]), first, last, root[0]))
            continue
        offset = 512 * draw(st.integers(0, max_offset_blocks))
        out.append((f"t{i}", draw(st.sampled_from(regions)), offset, size, first, last))
    return out


@st.composite
def plans(draw, **kw):
    """A plan from random rows, sometimes with model attributes."""
    attributes = draw(st.none() | st.builds(PlanAttributes, st.integers(0, 2 ** 20), st.integers(0, 2 ** 20)))
    return plan(draw(rows(regions=REGIONS, **kw)), attributes=attributes)
