"""verify's shipped-pytorch-case phase (checks/shipped_pytorch_cases.py, ``checks.verify_onnx_cases.check_shipped_cases``).

The phase runs clean on the onnx package installed, and a planted fault fails the cases it breaks,
each named: the opset 1-6 rewrite reading ``broadcast=1`` as absent (the mutant that only a unit test
caught before), wrong expected outputs, and a recorded refusal that no longer happens.
"""
from __future__ import annotations

import attrs
import numpy as np

from zcspec.checks import shipped_pytorch_cases, verify, verify_onnx_cases
from zcspec.checks.shipped_pytorch_cases import shipped_cases
from zcspec.checks.verify import VerifyConfig, VerifyResult
from zcspec.impl.compiler.frontend import legacy_broadcast

# Phase-only runs: no zoo model, no other phase (the phase runs with the node tests, which are stubbed out).
ONLY_SHIPPED = VerifyConfig(models=(), kinds=("execution",), examples=0, proofs=False, corpus=False, ge_cases=False,
                            acl_refusals=False, dtype_sweep=False)
BROADCASTING = ("test_Softsign", "test_operator_add_broadcast", "test_operator_addconstant")


def _run(cases) -> VerifyResult:
    result = VerifyResult()
    assert verify_onnx_cases.check_shipped_cases(result, tuple(cases), "ascend910b", fail_fast=False)
    return result


def _named(*names):
    return [c for c in shipped_cases() if c.name in names]


def test_verify_runs_every_shipped_case_clean(monkeypatch):
    monkeypatch.setattr(verify, "check_node_tests", lambda *args: True)
    monkeypatch.setattr(verify, "check_frontend_cases", lambda *args: None)
    result = verify.verify(ONLY_SHIPPED)
    assert result.shipped_cases == (len(shipped_cases()), 0) and len(shipped_cases()) >= 100
    assert not result.errors and not result.failing()
    assert [phase for phase, _ in result.timings][-2:] == ["ONNX node tests", "shipped pytorch cases"]


def test_broadcast_read_as_absent_fails_each_broadcasting_case_naming_it(monkeypatch):
    read = legacy_broadcast._attr
    monkeypatch.setattr(legacy_broadcast, "_attr",
                        lambda node, name, default=None: 0 if name == "broadcast" else read(node, name, default))
    result = _run(_named(*BROADCASTING, "test_operator_exp"))
    assert result.shipped_cases == (4, 3)
    assert sorted(case for case, _ in result.errors) == sorted(f"shipped pytorch case {n}" for n in BROADCASTING)
    assert set(result.error_kinds) == {"refusal"}
    assert all("without broadcast=1 the two shapes must be equal" in why for _, why in result.errors)


def test_outputs_other_than_the_shipped_ones_fail_the_case():
    case = _named("test_operator_exp")[0]
    wrong = attrs.evolve(case, outputs=tuple(np.asarray(o) + 1 for o in case.outputs))
    result = _run([wrong])
    assert result.shipped_cases == (1, 1) and result.error_kinds == ["check"]
    assert result.errors[0][0] == "shipped pytorch case test_operator_exp"
    assert "v1 differs from the shipped outputs: output" in result.errors[0][1]


def test_a_recorded_refusal_that_imports_now_fails(monkeypatch):
    monkeypatch.setitem(shipped_pytorch_cases.KNOWN_REFUSED, "test_operator_exp", "a refusal recorded for the test")
    result = _run(_named("test_operator_exp"))
    assert result.error_kinds == ["check"]
    assert "expected refused (a refusal recorded for the test), got pass" in result.errors[0][1]


def test_without_the_node_tests_the_phase_is_left_out():
    result = verify.verify(attrs.evolve(ONLY_SHIPPED, onnx_node_tests=False))
    assert result.shipped_cases == (0, 0) and "shipped pytorch cases" not in dict(result.timings)


def test_fail_fast_stops_at_the_first_failed_case(monkeypatch):
    read = legacy_broadcast._attr
    monkeypatch.setattr(legacy_broadcast, "_attr",
                        lambda node, name, default=None: 0 if name == "broadcast" else read(node, name, default))
    result = VerifyResult()
    assert not verify_onnx_cases.check_shipped_cases(result, tuple(_named(*BROADCASTING)), "ascend910b", fail_fast=True)
    assert result.shipped_cases == (1, 1)
