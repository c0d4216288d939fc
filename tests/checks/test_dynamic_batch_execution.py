"""The checker executes every branch of a dynamic-batch graph and judges it against the oracle's same branch."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.checks.execution import default_runtimes
from zcspec.checks.oracle import OracleUnavailable, oracle_outputs
from zcspec.checks.scenario import Scenario, evaluate, observe
from zcspec.checks.zoo import dynamic_batch_graph, load, zoo_names
from tests.helpers.dynamic_batch import X, expected


def test_the_zoo_has_the_dynamic_batch_graph_and_verify_runs_each_branch():
    assert "builtin:dynamic_batch" in zoo_names()
    runs = default_runtimes(load("builtin:dynamic_batch"))
    assert {r["batch"] for r in runs} == {"b1", "b2"}
    assert len(runs) == 2 * len(default_runtimes(load("builtin:atomic_clean")))
    assert all("batch" not in r for r in default_runtimes(load("builtin:atomic_clean")))


@pytest.mark.parametrize("batch", ["b1", "b2"])
def test_the_oracle_takes_the_chosen_branch(batch):
    (got,) = oracle_outputs(dynamic_batch_graph(), {"x": X}, batch=batch).values()
    np.testing.assert_allclose(got, expected(X, batch), rtol=1e-5, atol=1e-6)


def test_the_oracle_needs_a_branch_for_a_merge():
    with pytest.raises(OracleUnavailable, match=r"joins branches \['b1', 'b2'\]"):
        oracle_outputs(dynamic_batch_graph(), {"x": X})


@pytest.mark.parametrize("zero_copy", [True, False])
@pytest.mark.parametrize("batch", ["b1", "b2"])
def test_the_differential_run_judges_each_branch(batch, zero_copy):
    s = Scenario("execution", dynamic_batch_graph(),
                 runtime={"runtime": "differential", "zero_copy": zero_copy, "batch": batch})
    reports = evaluate(s, ("EXEC-ORACLE", "EXEC-V1-EQ-V2", "EXEC-NO-FAULT"))
    assert len(reports) == 2 and all(r.ok for r in reports), [str(r) for r in reports]
    assert all({"EXEC-ORACLE", "EXEC-V1-EQ-V2"} <= set(r.exercised) for r in reports)   # judged, not skipped


def test_a_run_that_chooses_no_branch_is_observed_as_refused():
    (obs,) = observe(Scenario("execution", dynamic_batch_graph(), runtime={"runtime": "v1"}))
    assert not obs.result.ok and "choose one per execution" in obs.result.error
