"""Every plan of a random graph satisfies the spec's plan invariants, for both strategies and
with reuse off, on every SoC; the light models too. The spec recomputes everything from the plan's
placements and the graph's facts, with the SoC's capabilities from its own table."""
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


def violations(graph, options: PlanOptions, soc: str = "ascend910b"):
    report = check(observe_plan(graph, plan_memory(graph, options), soc=soc))
    return [str(v) for v in report.violations]


SOCS = ["ascend910b", "ascend310p", "legacy", "nozc"]


@settings(max_examples=60)
@given(graphs(max_nodes=10), st.sampled_from(["ge", "compact"]), st.booleans(), st.sampled_from(SOCS))
def test_random_plans_satisfy_the_spec(graph, strategy, reuse, soc):
    options = CompileOptions(soc=soc, strategy=strategy, reuse=reuse)
    assert violations(run_passes(graph, options), options.plan_options(), soc) == []


@pytest.mark.parametrize("name", LIGHT)
def test_light_model_plans_satisfy_the_spec(name):
    graph = run_passes(load_graph(f"zoo:{name}"), CompileOptions())
    for strategy in ("ge", "compact"):
        assert violations(graph, PlanOptions(strategy=strategy, time_limit=5.0)) == []


def test_the_spec_reads_the_socs_capabilities_not_the_planners_options():
    """A plan made with another SoC's options is judged by the SoC it names: on ascend310p a broadcast's
    buffers are never zero copy, so a plan that makes its output zero copy (planned as for ascend910b)
    breaks MEM-ZC-IO when it says ascend310p."""
    from zcspec.checks.zoo import load
    graph = run_passes(load("builtin:collectives"), CompileOptions(soc="ascend310p"))
    plan = plan_memory(graph, CompileOptions(soc="ascend910b").plan_options())
    assert violations(graph, CompileOptions(soc="ascend310p").plan_options(), "ascend310p") == []
    found = check(observe_plan(graph, plan, soc="ascend310p")).violations
    assert "MEM-ZC-IO" in {v.invariant_id for v in found}
