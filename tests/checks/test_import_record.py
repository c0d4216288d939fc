"""verify holds the front end to the reviewed record of how each ONNX node test imports
(checks/conformance/imports.json): a refusal or a frozen input the record does not state fails it.

Before the record, a front end that cleared every known dimension before shape inference (so 44 node
tests needed their ``axes``/``split``/``starts`` inputs frozen, as a user would need ``--value``) passed
verify: any refusal naming a listed feature and any freezing were accepted.
"""
from __future__ import annotations

import json

import pytest

from zcspec.checks.cli.main import main
from zcspec.checks.conformance import import_record
from zcspec.checks.errors import UsageError
from zcspec.checks.onnx_node_cases import node_test_cases
from zcspec.checks import verify as verify_module
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.impl.compiler.frontend import onnx_shapes

IMPORTS_ONLY = VerifyConfig(models=(), kinds=("execution",), examples=0, proofs=False, corpus=False, fail_fast=True)


@pytest.fixture(scope="module")
def tests():
    return node_test_cases("ascend910b")


def test_the_record_is_what_the_front_end_does(tests):
    names = [n for n, _ in tests.frozen]
    assert import_record.differences(import_record.observed(tests), import_record.load_record(), names) == [], (
        "checks/conformance/imports.json is stale: review `zcspec conformance --record` and commit its output")
    stale = set(import_record.load_record()) - set(names)
    assert not stale, f"the record names cases that are no node test of a claimed op: {sorted(stale)[:5]}"


def test_the_record_states_refusals_and_frozen_inputs():
    record = import_record.load_record()
    assert any("refused" in v for v in record.values()) and any("frozen" in v for v in record.values())


def test_differences_name_the_case_and_what_changed():
    record = {"a": {"refused": "training mode"}, "b": {"frozen": ["axes"]}, "c": {}}
    seen = {"a": {}, "b": {"frozen": ["axes", "split"]}, "c": {"refused": "sub-byte element types"}}
    got = dict(import_record.differences(seen, record, ["a", "b", "c", "d"]))
    assert set(got) == {"a", "b", "c"}
    assert "imports now" in got["a"] and "'training mode'" in got["a"] and "--record" in got["a"]
    assert "['axes', 'split']" in got["b"] and "['axes']" in got["b"]
    assert "refused naming 'sub-byte element types'" in got["c"]


def test_verify_fails_on_a_front_end_that_asks_for_more_values(monkeypatch):
    """The mutant that survived verify: the positive dimensions of a constant made unknown before shape
    inference (``onnx_shapes._loosened``'s test negated), so shape-like inputs must be frozen."""
    def clear_known(value):
        out = type(value)()
        out.CopyFrom(value)
        if out.type.HasField("tensor_type") and out.type.tensor_type.HasField("shape"):
            for d in out.type.tensor_type.shape.dim:
                if d.HasField("dim_value") and d.dim_value > 0:
                    d.Clear()
        return out

    monkeypatch.setattr(onnx_shapes, "_loosened", clear_known)
    # the node tests' import record alone (a crafted front-end case catches it too, and fail-fast stops there)
    monkeypatch.setattr(verify_module, "check_frontend_cases", lambda result, soc: None)
    result = verify(IMPORTS_ONLY)
    frozen = [case for case, why in result.errors if "frozen to their test values" in why]
    assert frozen and all(case.endswith("[import]") for case in frozen)
    assert result.stopped and not result.node_tests.run


def test_verify_fails_on_a_recorded_refusal_that_is_gone(monkeypatch):
    record = dict(import_record.load_record())
    record["test_relu"] = {"refused": "training mode"}
    monkeypatch.setattr(import_record, "load_record", lambda: record)
    result = verify(IMPORTS_ONLY)
    assert [c for c, why in result.errors if c == "onnx node test test_relu [import]" and "imports now" in why]


def test_a_malformed_record_names_the_file(tmp_path):
    bad = tmp_path / "imports.json"
    bad.write_text(json.dumps({"cases": ["x"]}))
    with pytest.raises(UsageError, match=str(bad)):
        import_record.load_record(bad)
    with pytest.raises(UsageError, match="cannot read"):
        import_record.load_record(tmp_path / "missing.json")


def test_the_command_prints_the_committed_record(capsys):
    assert main(["conformance", "--record"]) == 0
    assert capsys.readouterr().out == import_record.RECORD.read_text(encoding="utf-8")
    assert main(["conformance", "--record", "--op", "Relu"]) == 2

