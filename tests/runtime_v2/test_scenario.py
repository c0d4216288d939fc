"""Runtime v2 scenarios for the checker, and the corpus entry that keeps GE's overrun hazard detected."""
from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zcspec.checks.counterexample import Counterexample
from zcspec.checks.execution.v2 import observe_scenario, options_of
from zcspec.checks.replay import CORPUS, replay
from zcspec.checks.scenario import Scenario, evaluate
from zcspec.checks.strategies.graphs import graphs
from zcspec.impl.runtime.io_names import io_names
from zcspec.impl.runtime.v2.lowering import lower
from zcspec.spec.check import check
from zcspec.spec.registry import get
from tests.helpers.runtime_v2 import compiled, relu_neg_graph

HAZARD = os.path.join(CORPUS, "v2-ge-compat-unchecked-output-share.json")
V2 = ("V2-AZC-NO-ALLOC", "V2-AZC-REJECT", "V2-DEFAULT-FALLBACK", "V2-OUT-IS-USER", "V2-NO-OVERRUN",
      "EXEC-NO-FAULT", "EXEC-NO-LEAK", "EXEC-FAILED-CALL-NO-CHANGE")
DEVICE = ("EXEC-NO-OVERRUN", "EXEC-READ-WRITTEN", "EXEC-NO-RACE", "EXEC-TENSOR-INTACT", "EXEC-INPLACE-SAME-BYTES")


def scenario(**runtime) -> Scenario:
    return Scenario("execution", relu_neg_graph(), runtime={"runtime": "v2", **runtime})


def test_the_corpus_keeps_the_ge_compat_overrun_as_a_documented_hazard():
    cx = Counterexample.load(HAZARD)
    assert cx.expect == "violation" and cx.invariant == "V2-NO-OVERRUN"
    result = replay(cx)
    assert result.still_fails and result.as_expected, result.summary()
    assert "ge_compat" in result.violations[0].message


@pytest.mark.parametrize("runtime", [
    {"output_sizes": {"neg_2:0": 300}},                                  # default: falls back
    {"output_sizes": {"neg_2:0": 0}},                                    # default: null buffer
    {"output_sizes": {"neg_2:0": 300}, "always_zero_copy": True},       # rejected, nothing touched
    {"output_sizes": {"neg_2:0": 0}, "always_zero_copy": True},
    {"output_placement": "host"},
    {"always_external_allocator": True, "enable_single_stream": True},
    {"zero_copy": True, "ge_compat": True},                              # a correct buffer is safe even in ge_compat
], ids=["fallback", "null", "azc-small", "azc-null", "host", "external", "ge-compat-ok"])
def test_same_buffers_without_the_hazard_satisfy_every_v2_invariant(runtime):
    [report] = evaluate(scenario(**runtime), V2)
    assert report.ok, str(report)
    assert report.exercised


def test_unknown_scenario_keys_are_rejected():
    with pytest.raises(ValueError, match="unknown keys \\['always_zero_cpy'\\]"):
        options_of({"runtime": "v2", "always_zero_cpy": True})


SIZES = st.sampled_from([0, 0.5, 0.99, 1.0, 1.5])  # fraction of the output's raw size (0 = null buffer)


@settings(max_examples=30)
@given(graphs(max_nodes=5), st.sampled_from(["default", "always_zero_copy", "no_zero_copy"]),
       st.lists(SIZES, min_size=1, max_size=6), st.sampled_from(["device", "host"]))
def test_random_graphs_and_buffers_satisfy_the_spec(graph, mode, fractions, placement):
    """Any model, any buffer sizes, null buffers and placements: every v2 and execution invariant holds
    outside ge_compat (failures included: they must be clean)."""
    model = compiled(graph)
    outs = model.tasks.outputs
    sizes = {io.tensor: int(io.nbytes * fractions[i % len(fractions)]) for i, io in enumerate(outs)}
    runtime = {"runtime": "v2", "output_sizes": sizes, "output_placement": placement,
               "always_zero_copy": mode == "always_zero_copy", "zero_copy": mode != "no_zero_copy"}
    [obs] = observe_scenario(model, runtime)
    chosen = [get(i) for i in V2 + DEVICE if not (i == "V2-OUT-IS-USER" and mode == "no_zero_copy")]
    # Outputs copied by design (an input or weight passed through, a piece of a larger output) need no
    # exemption: the claims see from the trace that no kernel computed them in the caller's buffer's stead.
    violations = check(obs, invariants=chosen).violations
    assert not violations, "\n".join(map(str, violations))
