"""``zcspec verify`` runs ONNX's backend node tests of the claimed ops as held-out models, judged by the spec.

Each case that imports runs through both runtimes on its own inputs, every execution claim judged, its
outputs held to the outputs ONNX ships with it (EXEC-ORACLE); a case refused at import as unsupported
is counted. The bug tests install a small kernel or front-end bug with monkeypatch and run verify with
only the node tests left (no zoo, no campaign, no proofs, no corpus; ``NODE_TESTS``), so the detection
is theirs: before them, verify ran no dilated pool, no LSTM/GRU and no opset-13 Softmax.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import attrs
import numpy as np
import pytest

from zcspec.checks.conformance.cases import KNOWN_FAILURES, case_named, node_cases
from zcspec.checks.conformance.runner import import_case
from zcspec.checks.errors import OracleUnavailable, ScenarioError
from zcspec.checks.execution import check_runtime, judge
from zcspec.checks.onnx_node_cases import node_test_cases
from zcspec.checks.scenario import Scenario, observe
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.checks.zoo import zoo_names
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.frontend import onnx_nodes
from zcspec.impl.device.kernels import pool, recurrent
from zcspec.impl.platform.errors import BadInput

# the node tests alone (the shipped pytorch cases and the dtype sweep, which run with them, reach some of the same bugs)
NODE_TESTS = VerifyConfig(models=(), kinds=("execution",), examples=0, proofs=False, corpus=False, shipped_cases=False,
                          dtype_sweep=False)


def _oracle_findings(result) -> list[str]:
    return sorted({f.case for f in result.findings if f.violation.invariant_id == "EXEC-ORACLE"})


def test_the_real_code_passes_every_node_test_that_imports():
    result = verify(NODE_TESTS)
    nodes = result.node_tests
    assert result.ok([]) and not result.findings and not result.errors, result.errors[:3]
    assert nodes.failed == [] and sorted(nodes.known) == sorted(KNOWN_FAILURES.items())
    assert nodes.run + len(nodes.refused) + len(nodes.known) == len(node_cases())
    assert nodes.run > 400 and nodes.refused, (nodes.run, len(nodes.refused))
    assert result.tally.judged >= nodes.run * 2   # every output of both runtimes held to ONNX's outputs


def _cli(*args: str) -> subprocess.CompletedProcess:
    # a process of its own: an in-process CLI run leaves state that makes test_verify_campaign's
    # v2-azc-fallback campaign miss its bug (seen under one pytest worker; not yet understood)
    script = Path(sys.executable).parent / "zcspec"
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300)


def test_verify_runs_them_by_default_and_the_switch_skips_them():
    assert VerifyConfig(models=zoo_names()).onnx_node_tests
    r = _cli("verify", "builtin:phony_concat", "--examples", "0", "--no-proofs", "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ONNX node tests: " in r.stdout and " refused (unsupported), 0 failed" in r.stdout, r.stdout
    r = _cli("verify", "builtin:phony_concat", "--examples", "0", "--no-proofs", "--quiet", "--no-onnx-node-tests")
    assert r.returncode == 0 and "ONNX node tests" not in r.stdout, r.stdout + r.stderr


def _dilations_ignored(monkeypatch):
    """Pooling reads its windows as if every dilation were 1 (the output size still counts them)."""
    real = pool.geometry

    def undilated(*args, **kwargs):
        g = real(*args, **kwargs)
        return attrs.evolve(g, dilations=(1,) * len(g.dilations))
    monkeypatch.setattr(pool, "geometry", undilated)


def _gate_sigmoid_off(monkeypatch):
    """The LSTM/GRU gates' sigmoid loses the 1/2 inside the tanh: 0.5 * (1 + tanh(x))."""
    monkeypatch.setattr(recurrent, "_sigmoid", lambda x: 0.5 * (1.0 + np.tanh(x)))


def _softmax_13_one_opset_late(monkeypatch):
    """The front end marks Softmax's opset-13 meaning (normalise along ``axis``) from opset 14 only."""
    monkeypatch.setitem(onnx_nodes.OPSET_SEMANTICS, "Softmax", 14)


@pytest.mark.parametrize("install, cases", [
    (_dilations_ignored, "dilations"),
    (_gate_sigmoid_off, ("test_lstm", "test_gru")),
    (_softmax_13_one_opset_late, "test_softmax"),
])
def test_verify_catches_a_bug_only_the_node_tests_reach(monkeypatch, install, cases):
    install(monkeypatch)
    result = verify(NODE_TESTS)
    caught = _oracle_findings(result)
    assert not result.ok([]) and caught, "verify passed"
    prefixes = (cases,) if isinstance(cases, str) else cases
    node = [c for c in caught if c.startswith("onnx node test ")]
    assert node and all(any(p in c for p in prefixes) for c in node), caught
    assert set(node) <= set(result.node_tests.failed)
    # besides the node tests, only the front-end cases running the same ops (an LSTM naming only Y_h, recurrent
    # nodes naming their default activations) may see it
    assert all(c in node or c.startswith(("front-end case lstm_", "front-end case gru_")) for c in caught), caught


@pytest.mark.slow
def test_plain_verify_catches_the_dilation_bug_in_a_node_test(monkeypatch):
    """The default run (whole zoo first, then the node tests, campaign, proofs, corpus) fails, in a node test."""
    _dilations_ignored(monkeypatch)
    result = verify(VerifyConfig(models=zoo_names(), fail_fast=True))
    assert result.findings and all(f.case.startswith("onnx node test ") for f in result.findings)
    assert "EXEC-ORACLE" in {f.violation.invariant_id for f in result.findings}


def _only(monkeypatch, *ops):
    monkeypatch.setattr("zcspec.checks.onnx_node_cases.node_cases", lambda: node_cases(ops))


def test_a_refusal_naming_no_listed_feature_is_a_failure(monkeypatch):
    _only(monkeypatch, "Abs")
    def refuse_abs(case, frozen):
        if case.name == "test_abs":
            raise BadInput("refused for the test")
        return import_case(case, frozen)
    monkeypatch.setattr("zcspec.checks.onnx_node_cases.import_case", refuse_abs)
    result = verify(NODE_TESTS)
    assert result.node_tests.failed == ["onnx node test test_abs"] and not result.ok([])
    assert result.errors == [("onnx node test test_abs [import]", "BadInput: refused for the test")]


def test_an_output_left_unjudged_is_a_failure(monkeypatch):
    _only(monkeypatch, "Abs")
    monkeypatch.setattr(judge, "_node_test_reference", lambda name, arrays: {})
    result = verify(NODE_TESTS)
    assert result.node_tests.failed and not result.ok([])
    assert all("not judged by the node test's expected outputs" in e for _, e in result.errors)


def test_the_oracle_is_the_case_s_own_outputs_for_its_own_inputs():
    case = case_named("test_abs")
    oracle = judge.choose(None, {"runtime": "differential", "node_test": "test_abs"})
    got = oracle.outputs(dict(zip(case.input_names, case.inputs)))
    np.testing.assert_array_equal(got["y"], case.outputs[0])
    with pytest.raises(OracleUnavailable, match="its own inputs"):
        oracle.outputs({"x": np.zeros_like(case.inputs[0])})


def test_a_node_test_scenario_has_a_json_form_and_an_unknown_case_is_named():
    cases = node_test_cases("ascend910b").cases
    label, scenario = next((lb, s) for lb, s in cases if lb.endswith(" test_abs"))
    again = Scenario.from_dict(scenario.to_dict())
    check_runtime(again.runtime)
    assert [o.outputs for o in observe(again)] == [o.outputs for o in observe(scenario)]
    with pytest.raises(ScenarioError, match="no-such-case") as e:
        judge.node_test_inputs("no-such-case", build_model(scenario.graph, scenario.compile))
    assert e.value.key == "node_test"


@pytest.mark.parametrize("mine, want, expected", [
    (np.array([np.inf, np.nan, 2.0], np.float32), np.array([np.inf, np.nan, 2.0], np.float32), 0.0),
    (np.array([np.inf], np.float32), np.array([1.0], np.float32), float("inf")),
    (np.array([np.nan], np.float32), np.array([1.0], np.float32), float("nan")),
    (np.ones((2, 3), np.float32), np.ones((3, 2), np.float32), float("inf")),   # a wrong shape
    (np.ones(3, np.int64), np.ones(3, np.int32), float("inf")),                 # a wrong dtype
    (np.array([1.5, -3.0], np.float32), np.array([1.0, -4.0], np.float32), 0.25),
])
def test_distance(mine, want, expected):
    d = judge.distance(mine, want)
    assert (np.isnan(d) and np.isnan(expected)) or d == expected
