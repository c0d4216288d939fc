"""The sweep self-check over the 9 light models and random graphs, for both strategies."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from zcspec.checks.strategies.planning_graphs import planning_graphs
from zcspec.checks.zoo import LIGHT
from zcspec.checks.models import load_graph
from zcspec.impl.compiler.passes.mem_layout_conflict import mem_layout_conflict
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import plan_memory
from tests.helpers.plan_check import check_plan, plan_or_reject


def _independent_lower_bound(graph, plan) -> int:
    """The contract's LB for single-stream graphs without continuous inputs: recomputed from the plan's placements
    only through which tensors sit in the feature map; sizes and lifetimes from the graph."""
    from tests.helpers.plan_check import _aligned, _own_lifetimes, _padded

    life, _ = _own_lifetimes(graph, plan.order)
    o = plan.options
    live = [0] * (len(plan.order) + 1)
    roots = {}
    for t in plan.tensors:
        if t.region == "feature_map":
            roots.setdefault(t.alias_of or t.name, []).append(t.name)
    for root, members in roots.items():
        size = max(_aligned(_padded(graph.desc[m].nbytes, o), o.block_align) for m in members)
        first = min(life[m][0] for m in members)
        last = max(life[m][1] for m in members)
        live[first] += size
        live[last + 1] -= size
    best = run = 0
    for d in live:
        run += d
        best = max(best, run)
    return best


@pytest.fixture(scope="module")
def zoo_graphs():
    return {name: load_graph(f"zoo:{name}") for name in LIGHT}


@pytest.mark.parametrize("name", LIGHT)
def test_light_models_are_safe_and_compact_is_no_worse(zoo_graphs, name):
    graph = zoo_graphs[name]
    ge = plan_memory(graph, PlanOptions(strategy="ge"))
    compact = plan_memory(graph, PlanOptions(strategy="compact"))
    for plan in (ge, compact):
        assert check_plan(graph, plan) == []
        assert plan.lower_bound == _independent_lower_bound(graph, plan)
        assert plan.lower_bound <= plan.arena <= plan.naive
    assert compact.arena <= ge.arena
    assert compact.arena == compact.lower_bound  # certified optimal on every light model
    zc = {t.name for t in ge.tensors if t.zero_copy}
    assert zc == set(graph.inputs) | set(graph.outputs)


@given(planning_graphs())
@settings(max_examples=60)
def test_random_graphs_are_safe_with_both_strategies(graph):
    graph = mem_layout_conflict(graph)
    for options in (PlanOptions(strategy="ge"), PlanOptions(strategy="compact"), PlanOptions(reuse=False)):
        plan = plan_or_reject(graph, options)
        assert check_plan(graph, plan) == [], options
        assert plan.arena >= plan.lower_bound


@given(planning_graphs(extras=False, max_nodes=16))
def test_compact_never_worse_than_ge_on_random_graphs(graph):
    graph = mem_layout_conflict(graph)
    ge = plan_or_reject(graph, PlanOptions(strategy="ge"))
    compact = plan_or_reject(graph, PlanOptions(strategy="compact"))
    assert compact.arena <= ge.arena
    assert compact.regions["zero_copy"] == ge.regions["zero_copy"]
    assert {t.name: t.offset for t in compact.tensors if t.zero_copy} == {t.name: t.offset for t in ge.tensors if t.zero_copy}
