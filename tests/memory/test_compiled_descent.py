"""Level 2's compiled walk (ge_descent) decides as the Python walk (ge_level2._adopt) does: the same
plans, offset for offset, on CNN-like graphs deep enough for interval reuse, splits and the depth cap."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from zcspec.impl.compiler.artefact_json import to_json
from zcspec.impl.compiler.memory import ge_level2
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import plan_memory

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from plan_scale import synthetic_graph  # noqa: E402


def _both(graph, options, monkeypatch):
    compiled = to_json(plan_memory(graph, options))
    monkeypatch.setattr(ge_level2, "COMPILED_DESCENT", False)
    python = to_json(plan_memory(graph, options))
    monkeypatch.setattr(ge_level2, "COMPILED_DESCENT", True)
    return compiled, python


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_compiled_walk_plans_as_the_python_walk(seed, monkeypatch):
    graph = synthetic_graph(1500, seed=seed)
    compiled, python = _both(graph, PlanOptions(), monkeypatch)
    assert compiled == python


@pytest.mark.parametrize("depth", [1, 3, 8])
def test_the_depth_cap_is_the_same(depth, monkeypatch):
    """A shallow cap (kMaxDepthNum) reached often: the walk stops at the same depth in both."""
    monkeypatch.setattr(ge_level2, "MAX_DEPTH", depth)
    compiled, python = _both(synthetic_graph(800, seed=depth), PlanOptions(), monkeypatch)
    assert compiled == python


def test_other_options_plan_the_same(monkeypatch):
    graph = synthetic_graph(800, seed=5)
    for options in (PlanOptions(mem_release_first_reuse_first=True), PlanOptions(block_align=256)):
        compiled, python = _both(graph, options, monkeypatch)
        assert compiled == python


def test_the_compiled_walk_is_taken_on_one_stream(monkeypatch):
    """Not vacuous: on these graphs level 2 does go through ge_descent."""
    calls = []
    original = ge_level2._mirrored_offer
    monkeypatch.setattr(ge_level2, "_mirrored_offer", lambda *a: calls.append(1) or original(*a))
    plan_memory(synthetic_graph(300), PlanOptions())
    assert calls
