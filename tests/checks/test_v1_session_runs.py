"""Runtime v1 runs loaded into a session (``static_memory_policy``): the campaign draws them, so verify's
claims judge models whose feature map comes from the session's ActiveMemoryAllocator (GE's
``MallocFeatureMapMem``) and goes back at unload (``FreeFeatureMapMem``)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, find, given, settings

from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import v1_options
from zcspec.checks.scenario import Scenario, evaluate, observe
from zcspec.checks.strategies.runs import runs
from zcspec.impl.runtime.v1 import active_memory

from tests.helpers.runtime_v2 import relu_neg_graph


def _scenario(**run) -> Scenario:
    return Scenario("execution", relu_neg_graph(), runtime={"runs": [{"runtime": "v1", "calls": 2, **run}]})


def _session_allocations(scenario: Scenario) -> int:
    """How many allocations of a session's memory the load observations transcribed from the trace."""
    return sum(1 for o in observe(scenario) for e in o.load.events if e.kind == "alloc" and e.owner == "session")


@pytest.mark.parametrize("policy, shares", [("2", True), ("1", True), ("3", False), ("0", False)])
def test_a_session_run_holds_every_claim_and_takes_the_feature_map_from_the_session_under_1_and_2(policy, shares):
    scenario = _scenario(static_memory_policy=policy)
    reports = evaluate(scenario)
    assert reports and all(r.ok for r in reports), [str(r) for r in reports if not r.ok]
    assert (_session_allocations(scenario) > 0) == shares


def test_a_session_that_never_gives_its_memory_back_leaks(monkeypatch):
    monkeypatch.setattr(active_memory.ActiveMemoryAllocator, "free_memory", lambda self: None)
    reports = evaluate(_scenario(static_memory_policy="2"))
    assert any(v.invariant_id == "EXEC-NO-LEAK" for r in reports for v in r.violations), [str(r) for r in reports]


@pytest.mark.parametrize("run, key", [
    ({"static_memory_policy": "4"}, "static_memory_policy"),
    ({"static_memory_policy": 2}, "static_memory_policy"),
    ({"static_memory_policy": "2", "api": "acl"}, "static_memory_policy"),
    ({"static_memory_policy": "2", "feature_base_refreshable": True}, "static_memory_policy"),
])
def test_a_bad_session_run_is_refused_naming_the_key(run, key):
    with pytest.raises(ScenarioError) as info:
        v1_options.options_of({"runtime": "v1", **run})
    assert info.value.key == key


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(runs(relu_neg_graph()))
def test_the_campaign_draws_session_runs_only_where_they_are_valid(drawn):
    for run in drawn["runs"]:
        if run["runtime"] == "v1":
            v1_options.options_of(run)   # raises on a run the campaign should not draw


def test_the_campaign_draws_session_runs():
    drawn = find(runs(relu_neg_graph()), lambda d: any("static_memory_policy" in r for r in d["runs"]),
                 settings=settings(max_examples=500, database=None))
    assert any(r.get("static_memory_policy") in ("0", "1", "2", "3") for r in drawn["runs"])
