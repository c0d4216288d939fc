"""verify's dtype sweep (checks/dtype_sweep_cases.py, ``checks.verify_onnx_cases.check_dtype_sweep``).

The sweep covers every ONNX op of the op table in each element type its schema allows (named from ONNX's
own type table, not impl's), runs clean on the tree as it is (its recorded failures still failing, its
refusals the recorded ones), and fails on a planted fault naming the model: an op dropped from impl's
float-only list (LeakyRelu in bfloat16 then imports and its kernel refuses it on the device: the mutant
that only a list comparison caught before), a refusal that does not say which type, a record of a failure
that no longer fails, a refusal the record does not list (or a listed one gone), a type lost from impl's
dtype table (complex128: a mutant that used to pass verify, its models left out of the sweep).
"""
from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, defs, helper

from zcspec.checks import dtype_sweep_cases, verify, verify_onnx_cases
from zcspec.checks.cli.main import main
from zcspec.checks.errors import UsageError
from zcspec.checks.execution import judge
from zcspec.checks.dtype_sweep_cases import (
    KNOWN, allowed, check_refusal, refusal_record, refused_at_import, sweep_cases, swept_ops, untemplated,
)
from zcspec.checks.onnxruntime_oracle import onnxruntime_outputs
from zcspec.checks.verify import VerifyConfig, VerifyResult
from zcspec.checks.verify_onnx_cases import ACCEPTED_UNCOMPUTABLE
from zcspec.impl.compiler import op_limits
from zcspec.impl.compiler.frontend.errors import UnsupportedFeatureError
from zcspec.impl.platform import dtypes

ONLY_SWEEP = VerifyConfig(models=(), kinds=("execution",), examples=0, proofs=False, corpus=False, ge_cases=False,
                          acl_refusals=False, shipped_cases=False)


def _run(cases, fail_fast: bool = False) -> tuple[VerifyResult, bool]:
    result = VerifyResult()
    return result, verify_onnx_cases.check_dtype_sweep(result, tuple(cases), "ascend910b", lambda s: None, fail_fast)


def _of(op: str, dtype: str | None = None):
    return [c for c in sweep_cases() if c.op == op and (dtype is None or c.dtype == dtype)]


def test_every_onnx_op_of_the_table_is_swept_in_every_type_its_schema_allows():
    assert untemplated() == ()
    cases = sweep_cases()
    assert {c.op for c in cases} == set(swept_ops()) and len(swept_ops()) >= 70
    for op in swept_ops():
        opset = max(c.model.opset_import[0].version for c in _of(op))
        want = {(t.type_param_str, d) for t in defs.get_schema(op, opset, "").type_constraints for d in allowed(t)}
        assert {(c.param, c.dtype) for c in _of(op)} == want, op
    assert set(KNOWN) <= {c.key for c in cases}


def test_a_model_is_the_node_alone_its_first_input_fed_the_rest_constant_in_the_swept_type():
    (case,) = [c for c in _of("Where", "int8") if c.param == "T"]
    graph = case.model.graph
    assert [n.op_type for n in graph.node] == ["Where"] and case.node == "sweep_Where_T_int8"
    assert [(i.name, i.type.tensor_type.elem_type) for i in graph.input] == [(graph.node[0].input[0], TensorProto.BOOL)]
    assert {t.data_type for t in graph.initializer} == {TensorProto.INT8}
    assert [o.type.tensor_type.elem_type for o in graph.output] == [TensorProto.INT8]
    (cast,) = [c for c in _of("Cast", "bfloat16") if c.param == "T2"]
    assert helper.get_attribute_value(cast.model.graph.node[0].attribute[0]) == TensorProto.BFLOAT16
    onnx.checker.check_model(case.model)


def test_verify_runs_the_sweep_clean_with_its_recorded_failures_still_failing(monkeypatch):
    monkeypatch.setattr(verify, "check_node_tests", lambda *args: True)   # the sweep runs with them: stubbed out
    monkeypatch.setattr(verify, "check_frontend_cases", lambda *args: None)
    result = verify.verify(ONLY_SWEEP)
    sweep = result.dtype_sweep
    assert not result.failing() and sweep.failed == []
    assert 0 <= len(sweep_cases()) - sweep.run - len(sweep.refused) <= len(KNOWN)   # recorded refusals aside
    assert len(sweep.known) == len(KNOWN) and sweep.refused and sweep.run > 600
    assert "sweep_LeakyRelu_T_bfloat16" not in str(sweep.failed)
    assert [phase for phase, _ in result.timings][-2:] == ["ONNX node tests", "dtype sweep"]


def test_an_op_dropped_from_the_float_only_list_fails_its_bfloat16_model(monkeypatch):
    monkeypatch.setitem(op_limits.UNSUPPORTED, "LeakyRelu", ())
    result, went_on = _run(_of("LeakyRelu"))
    assert went_on and result.dtype_sweep.failed == ["dtype sweep LeakyRelu T=bfloat16"]
    (case, why), = result.errors
    assert case == "dtype sweep LeakyRelu T=bfloat16" and why.startswith(ACCEPTED_UNCOMPUTABLE)
    assert "bfloat16" in why and result.error_kinds == ["crash"]


def test_with_the_list_intact_the_bfloat16_model_is_refused_naming_node_and_type():
    result, _ = _run(_of("LeakyRelu", "bfloat16"))
    assert result.dtype_sweep.refused == ["dtype sweep LeakyRelu T=bfloat16"] and not result.errors


def test_fail_fast_stops_at_the_first_failed_model(monkeypatch):
    monkeypatch.setitem(op_limits.UNSUPPORTED, "LeakyRelu", ())
    result, went_on = _run(_of("LeakyRelu", "bfloat16") + _of("Abs"), fail_fast=True)
    assert not went_on and result.dtype_sweep.failed == ["dtype sweep LeakyRelu T=bfloat16"]


def test_a_refusal_must_name_the_node_and_the_element_type():
    (case,) = _of("LeakyRelu", "bfloat16")
    good = UnsupportedFeatureError(case.node, "element type bfloat16 not supported")
    assert check_refusal(case, good) is None
    assert "the element type bfloat16" in check_refusal(case, UnsupportedFeatureError(case.node, "operand unknown"))
    assert "the node 'sweep_LeakyRelu_T_bfloat16'" in check_refusal(
        case, UnsupportedFeatureError("other", "element type bfloat16"))
    (fnuz,) = _of("Cast", "float8e4m3fnuz")[:1]
    assert "the element type" in check_refusal(fnuz, UnsupportedFeatureError(fnuz.node, "float8e4m3fnuzz"))


def test_a_recorded_failure_that_passes_is_a_stale_record(monkeypatch):
    (case,) = _of("Abs", "float32")
    monkeypatch.setitem(dtype_sweep_cases.KNOWN, case.key, "a failure recorded for the test")
    result, _ = _run([case])
    assert result.error_kinds == ["check"] and result.dtype_sweep.failed == [case.label]
    assert "recorded as failing (a failure recorded for the test) but passes" in result.errors[0][1]


def test_a_recorded_failure_still_failing_does_not_fail_the_run(monkeypatch):
    # Softmax in float16 failed while EXEC-ORACLE held every output to 1e-4 (onnxruntime's float16 kernel
    # rounds by one unit otherwise): that tolerance put back, the recorded failure still fails, quietly.
    key, why = ("Softmax", "T", "float16"), "a failure recorded for the test"
    monkeypatch.setitem(dtype_sweep_cases.KNOWN, key, why)
    monkeypatch.setattr(judge, "tolerance_for", lambda array: judge.ORACLE_TOLERANCE)
    result, _ = _run(_of("Softmax", "float16"))
    assert not result.failing() and result.dtype_sweep.known == [("dtype sweep Softmax T=float16", why)]


def test_float16_outputs_are_held_to_two_units_of_their_own_precision():
    # HardSwish and Softmax in float16 differ from onnxruntime by one unit: within the output's tolerance now
    result, _ = _run(_of("Softmax", "float16") + _of("HardSwish", "float16"))
    assert not result.failing() and result.dtype_sweep.failed == [] and result.dtype_sweep.known == []
    assert judge.tolerance_for(np.zeros(1, np.float16)) == 2 ** -9 and judge.tolerance_for(np.zeros(1, np.float32)) == 1e-4
    assert judge.tolerance_for(np.zeros(1)) == judge.DOUBLE_TOLERANCE < 1e-4


def test_onnxruntime_float8_outputs_come_back_in_their_declared_type(tmp_path):
    node = helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E4M3FN)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, None)])
    path = str(tmp_path / "cast.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10), path)
    pytest.importorskip("onnxruntime")
    y = onnxruntime_outputs(path, {"x": np.array([0.5, -1.5, 2.0], np.float32)}, {})["y"]
    assert y.dtype == helper.tensor_dtype_to_np_dtype(TensorProto.FLOAT8E4M3FN)
    assert y.astype(np.float32).tolist() == [0.5, -1.5, 2.0]


def test_the_refusal_record_lists_exactly_the_models_refused_today():
    assert sorted(refused_at_import(sweep_cases())) == sorted(refusal_record())


def test_a_refusal_the_record_does_not_list_fails_and_so_does_a_stale_entry(monkeypatch):
    (refused,), (imports,) = _of("LeakyRelu", "bfloat16"), _of("Abs", "float32")
    monkeypatch.setattr(verify_onnx_cases, "refusal_record", lambda: frozenset({imports.node}))
    result, _ = _run([refused, imports])
    assert result.dtype_sweep.failed == [refused.label, imports.label] and result.error_kinds == ["check", "check"]
    assert "expects it to import" in result.errors[0][1] and "the record is stale" in result.errors[1][1]


def test_a_type_lost_from_impls_dtype_table_is_still_swept_and_fails(monkeypatch):
    lost = dtypes.DTYPES["complex128"]
    monkeypatch.delitem(dtypes.DTYPES, "complex128")
    monkeypatch.delitem(dtypes.BY_ONNX_ID, lost.onnx_id)
    cases = _of("Concat", "complex128")
    assert cases and all(c.dtype == "complex128" for c in cases)
    result, _ = _run(cases)
    assert result.failing() and result.dtype_sweep.failed == [c.label for c in cases]


def test_the_command_prints_the_committed_refusal_record(capsys):
    assert main(["conformance", "--sweep-record"]) == 0
    assert capsys.readouterr().out == dtype_sweep_cases.REFUSALS.read_text(encoding="utf-8")
    assert main(["conformance", "--sweep-record", "--op", "Relu"]) == 2


def test_a_malformed_refusal_record_is_named(tmp_path):
    bad = tmp_path / "dtype_refusals.json"
    bad.write_text(json.dumps({"refused": "sweep_Abs_T_int8"}))
    with pytest.raises(UsageError, match=str(bad)):
        refusal_record(bad)
    with pytest.raises(UsageError, match="cannot read"):
        refusal_record(tmp_path / "missing.json")


def test_double_outputs_are_held_tighter_than_float32_ones(monkeypatch):
    """An erf kernel that lost a coefficient of its [0.84375, 1.25) branch (fdlibm's QA) is wrong by a few
    parts in 1e7: within float32's default tolerance, not within float64's."""
    from zcspec.impl.device.kernels import special
    assert not _run(_of("Erf", "float64"))[0].failing()
    monkeypatch.setattr(special, "QA", special.QA[:5] + special.QA[6:])
    result, _ = _run(_of("Erf", "float64"))
    assert result.failing() and "EXEC-ORACLE" in {f.violation.invariant_id for f in result.findings}
