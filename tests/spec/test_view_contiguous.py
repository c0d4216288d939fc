"""PASS-VIEW-CONTIGUOUS: a Split or Slice made a view keeps one run of its input's bytes.

A mutant of the outer-axis pass (the outer axis taken as the first axis whose size is not 2) made a Split
along axis 1 of a (2, 4, 8) tensor a view; only EXEC-ORACLE noticed, from the wrong numbers. The claim
judges the node's attributes and its input's shape, never the offsets the planner gave the pieces."""
from __future__ import annotations

import pytest

from zcspec.checks.faults.variant import preload, swap
from zcspec.checks.scenario import Scenario, observe
from zcspec.checks.zoo import load
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.invariants.passes import contiguous_cut
from zcspec.spec.observables.model_file import Cut
from zcspec.spec.registry import get

CLAIM = get("PASS-VIEW-CONTIGUOUS")


def _model_file():
    (mf,) = observe(Scenario("model_file", load("builtin:split_views"), CompileOptions(), {}))
    return mf


@pytest.mark.parametrize("cut, why", [
    (((6, 40), (0,), (0,), (2,), (1,)), None),                       # rows 0-1 of (6, 40)
    (((1, 4, 8), (1,), (0,), (1,), (1,)), None),                     # axis 1 under an axis of size 1
    (((6, 40), (0, 1), (2, 0), (3, 10), (1, 1)), None),              # one row, its first 10 columns
    (((6, 40), (-2,), (-5,), (100,), (1,)), None),                   # negative start, end past the axis
    (((6, 40), (0,), (5,), (4,), (-1,)), None),                      # one index, backwards
    (((2, 4, 8), (1,), (0,), (2,), (1,)), "keeps 2 indexes of axis 0"),
    (((6, 40), (0, 1), (2, 0), (4, 10), (1, 1)), "keeps 2 indexes of axis 0"),
    (((6, 40), (0,), (0,), (6,), (2,)), "in steps of 2"),
    (((6, 40), (0,), (5,), (0,), (-1,)), "in steps of -1"),
    (((6, 40), (2,), (0,), (1,), (1,)), "not an axis"),
])
def test_contiguity_follows_row_major_order(cut, why):
    found = contiguous_cut(Cut(*cut))
    assert (found is None) if why is None else (why in found), found


def test_the_outer_axis_views_are_contiguous_and_exercise_the_claim():
    mf = _model_file()
    views = [n for n in mf.nodes if n.view and n.cut is not None]
    assert len(views) >= 3 and CLAIM.violations(mf) == ()
    assert {n.type for n in views} == {"Split", "Slice"}


def test_an_inner_axis_cut_made_a_view_is_a_violation():
    preload()
    inner = lambda f: (lambda shape: next((i for i, d in enumerate(shape) if d != 2), 0))   # noqa: E731
    with swap("zcspec.impl.compiler.passes.outer_axis_views", "_outer_axis", inner):
        found = CLAIM.violations(_model_file())
    assert found and all("keeps 2 indexes of axis 0" in v.message for v in found)
