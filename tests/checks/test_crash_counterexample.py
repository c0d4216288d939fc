"""A crash of the code under test during ``zcspec explore`` leaves a shrunk, replayable counterexample
(``CRASH``), as a violated invariant does: the crashed campaign runs again with the crash as a failure."""
from __future__ import annotations

import json

from zcspec.checks import campaign
from zcspec.checks.campaign import explore
from zcspec.checks.counterexample import CRASH, Counterexample
from zcspec.checks.replay import export_pytest, replay
from zcspec.checks import scenario as scenario_module
from zcspec.checks.strategies.scenarios import scenarios

real_observe = campaign.observe
real_plan = scenario_module.OBSERVERS["plan"]


def _crashing(scenario):
    """The code under test raising on any graph of eight nodes or more (the drawn graphs reach ten)."""
    if len(scenario.graph.nodes) >= 8:
        raise RuntimeError("a planted crash of the code under test")
    return real_observe(scenario)


def _crashing_plan(scenario):
    """The plan observer raising on the same graphs (what replay runs)."""
    if len(scenario.graph.nodes) >= 8:
        raise RuntimeError("a planted crash of the code under test")
    return real_plan(scenario)


def test_a_crash_in_explore_becomes_a_shrunk_crash_counterexample(monkeypatch, tmp_path):
    monkeypatch.setattr(campaign, "observe", _crashing)
    crashes: list = []
    _tally, found = explore(scenarios(kinds=("plan",)), seconds=0.1, crashes=crashes)
    assert crashes and "planted crash" in crashes[0]
    (cx,) = [c for c in found if c.is_crash]
    assert cx.invariant == CRASH and cx.violation["culprit"] == "RuntimeError"
    assert "planted crash" in cx.violation["message"] and "_crashing" in cx.violation["values"]["raised_at"]
    assert len(cx.scenario.graph.nodes) == 8   # shrunk to the smallest graph that still crashes
    path = tmp_path / "crash.json"
    cx.save(str(path))
    again = Counterexample.load(str(path))
    assert again.is_crash and json.loads(path.read_text())["invariant"] == CRASH
    monkeypatch.setitem(scenario_module.OBSERVERS, "plan", _crashing_plan)
    still = replay(again)
    assert still.still_fails and "planted crash" in still.error
    monkeypatch.undo()
    fixed = replay(again)
    assert not fixed.still_fails and "no longer raises" in fixed.summary()
    export_pytest(again, str(tmp_path / "test_cx.py"))
    assert "CRASH" in (tmp_path / "test_cx.py").read_text()


def test_without_a_crashes_list_a_crash_still_propagates(monkeypatch):
    monkeypatch.setattr(campaign, "observe", _crashing)
    try:
        explore(scenarios(kinds=("plan",)), seconds=0.1)
    except RuntimeError as e:
        assert "planted crash" in str(e)
    else:
        raise AssertionError("the crash was swallowed")
