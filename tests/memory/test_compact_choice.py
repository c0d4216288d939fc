"""The compact strategy keeps the smaller of the packer's and GE's feature maps, and computes GE's layout only
when the packer stays above the lower bound (no layout is below it: a plan's bound never exceeds its
feature map, checked for both strategies in test_sweep.py and by the model-file loader)."""
from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.memory import plan as plan_module
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import plan_memory

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from plan_scale import synthetic_graph  # noqa: E402

COMPACT = PlanOptions(strategy="compact", time_limit=None)


def _chain():
    b = GraphBuilder("chain")
    t = b.input("x", (1, 64))
    for i, width in enumerate((256, 64, 512, 128)):
        t = b.op("Relu", [t], name=f"r{i}", shape=(1, width))
    b.output(t)
    return b.build(check=False)


def _two_streams():
    """Stream 1's tensors live after stream 0's: the packer stacks the streams' arenas, so it stays above
    the bound, which counts what is live at one step."""
    b = GraphBuilder("two_streams")
    t = b.input("x", (1, 64))
    t = b.op("Relu", [t], name="a", shape=(1, 4096))
    t = b.op("Relu", [t], name="b", shape=(1, 64))
    t = b.op("Relu", [t], name="c", shape=(1, 4096), stream=1)
    t = b.op("Relu", [t], name="d", shape=(1, 64), stream=1)
    b.output(t)
    return b.build(check=False)


def _recording(monkeypatch, name: str) -> list:
    """The results of ``plan_module.<name>`` from now on, in call order."""
    results = []
    real = getattr(plan_module, name)

    def recorded(*args, **kwargs):
        results.append(real(*args, **kwargs))
        return results[-1]

    monkeypatch.setattr(plan_module, name, recorded)
    return results


@pytest.fixture
def ge_calls(monkeypatch):
    return _recording(monkeypatch, "ge_layout")


def test_at_the_lower_bound_the_packer_wins_without_ge_layout(ge_calls):
    plan = plan_memory(_chain(), COMPACT)
    assert plan.arena == plan.lower_bound
    assert ge_calls == []


def test_above_the_lower_bound_the_smaller_of_both_wins(ge_calls, monkeypatch):
    packed = _recording(monkeypatch, "compact_layout")
    plan = plan_memory(_two_streams(), COMPACT)
    assert len(ge_calls) == len(packed) == 1
    packer, ge = packed[0].regions["feature_map"], ge_calls[0].regions["feature_map"]
    assert packer > plan.lower_bound
    assert plan.arena == min(packer, ge)


def test_side_by_side_plans_what_the_serial_path_plans(monkeypatch):
    """From SIDE_BY_SIDE_UNITS units on, the packer runs in a second thread beside GE's layout: every plan is
    the serial path's (on two streams the packer stays above the bound, so both layouts are compared there)."""
    graphs = [_chain(), _two_streams(), synthetic_graph(800, seed=3)]
    serial = [plan_memory(g, COMPACT) for g in graphs]
    monkeypatch.setattr(plan_module, "SIDE_BY_SIDE_UNITS", 0)
    threads = _recording(monkeypatch, "_side_by_side")
    assert [plan_memory(g, COMPACT) for g in graphs] == serial
    assert len(threads) == len(graphs)
    assert serial[1].arena > serial[1].lower_bound


def test_side_by_side_runs_the_packer_in_another_thread(monkeypatch):
    seen = []
    real = plan_module.compact_layout

    def packer(*args, **kwargs):
        seen.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(plan_module, "compact_layout", packer)
    monkeypatch.setattr(plan_module, "SIDE_BY_SIDE_UNITS", 0)
    plan_memory(_two_streams(), COMPACT)
    assert seen == [False]
