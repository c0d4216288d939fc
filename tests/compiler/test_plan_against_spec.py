"""Every plan of a random graph satisfies the spec's plan invariants, for both strategies and
with reuse off; the light models too. The spec recomputes everything from the plan's placements."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zcspec.checks.zoo import LIGHT
from zcspec.checks.models import load_graph
from zcspec.checks.strategies.graphs import graphs
from zcspec.impl.compiler.memory.plan import PlanOptions, plan_memory
from zcspec.impl.compiler.observe import observe_plan
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import run_passes
from zcspec.spec.check import check


def violations(graph, options: PlanOptions):
    report = check(observe_plan(graph, plan_memory(graph, options)))
    return [str(v) for v in report.violations]


@settings(max_examples=60)
@given(graphs(max_nodes=10), st.sampled_from(["ge", "compact"]), st.booleans(), st.sampled_from(["ascend910b", "legacy"]))
def test_random_plans_satisfy_the_spec(graph, strategy, reuse, soc):
    graph = run_passes(graph, CompileOptions(soc=soc))
    assert violations(graph, PlanOptions(strategy=strategy, reuse=reuse)) == []


@pytest.mark.parametrize("name", LIGHT)
def test_light_model_plans_satisfy_the_spec(name):
    graph = run_passes(load_graph(f"zoo:{name}"), CompileOptions())
    for strategy in ("ge", "compact"):
        assert violations(graph, PlanOptions(strategy=strategy, time_limit=5.0)) == []
