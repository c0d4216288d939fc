"""INPUT-IMPORT-TYPES: an accepted ONNX model's values keep, in the imported graph, the shapes and element
types ONNX's own shape inference gives them. Planted: the front end's reading of ONNX's inference turns the
dims of the rank-2 values around (the import still succeeds and the compiler plans the wrong graph
consistently)."""
from __future__ import annotations

import attrs
import onnx
import pytest
from onnx import TensorProto, helper

from zcspec.checks.import_check import judge_import
from zcspec.checks.input_file_observer import observe_input_file, outcome_of
from zcspec.checks.models import load_graph
from zcspec.checks.verify_onnx_cases import check_model_files
from zcspec.checks.verify_result import VerifyResult
from zcspec.impl.compiler.frontend import onnx_import
from zcspec.impl.compiler.frontend.onnx_shapes import infer_types
from zcspec.spec.registry import get

CLAIM = get("INPUT-IMPORT-TYPES")


def _file(tmp_path) -> str:
    """x (2x3) -> Relu -> Transpose -> Cast to float16 -> y."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
             helper.make_node("Cast", ["t"], ["y"], to=TensorProto.FLOAT16)]
    graph = helper.make_graph(nodes, "typed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)])
    path = str(tmp_path / "typed.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _observed(path: str):
    return observe_input_file(path, outcome_of(None), imported=load_graph(path))


def test_the_import_keeps_the_types_onnx_infers(tmp_path):
    obs = _observed(_file(tmp_path))
    typed = {v.name: (v.dims, v.dtype) for v in obs.typed}
    assert typed["t"] == ((3, 2), "float32") and typed["y"] == ((3, 2), "float16")
    assert CLAIM.exercised(obs) and CLAIM.violations(obs) == ()


def test_dims_the_front_end_turned_around_are_reported(tmp_path, monkeypatch):
    def turned(model, **kw):
        return {k: attrs.evolve(v, shape=tuple(reversed(v.shape))) if v.shape and len(v.shape) == 2 and k == "t" else v
                for k, v in infer_types(model, **kw).items()}

    monkeypatch.setattr(onnx_import, "infer_types", turned)
    obs = _observed(_file(tmp_path))
    (v,) = [v for v in CLAIM.violations(obs) if v.culprit == "tensor 't'"]
    assert "float32[2, 3]" in v.message and "float32[3, 2]" in v.message


def test_a_refused_file_or_an_unshown_graph_is_not_judged(tmp_path):
    path = _file(tmp_path)
    assert not CLAIM.exercised(observe_input_file(path, outcome_of(None)))
    assert not CLAIM.exercised(observe_input_file(path, outcome_of(ValueError("no"))))
    foreign = observe_input_file(path, outcome_of(None), imported={"t": ((2, 3), "float32")})
    (v,) = CLAIM.violations(foreign)   # a front end someone else wrote shows its types as a mapping
    assert v.culprit == "tensor 't'"


def test_judge_import_reads_the_types_a_foreign_front_end_returns(tmp_path):
    path = _file(tmp_path)
    right = judge_import(path, lambda p: {"r": ((2, 3), "float32"), "t": ((3, 2), "float32"), "y": ((3, 2), "float16")})
    assert right.ok and CLAIM.exercised(_observed(path))
    wrong = judge_import(path, lambda p: {"y": ((3, 2), "float32")})   # the Cast's type lost
    assert [(v.invariant_id, v.culprit) for v in wrong.violations] == [("INPUT-IMPORT-TYPES", "tensor 'y'")]


def test_verify_judges_the_onnx_files_it_checks_with_their_shapes(tmp_path):
    result = VerifyResult()
    check_model_files(result, ("zoo:squeezenet", "builtin:atomic_clean"), ("data_0=1x3x224x224",))
    check_model_files(result, (_file(tmp_path),))
    assert result.findings == [] and result.tally.exercised["INPUT-IMPORT-TYPES"] == 2   # the two ONNX files
    assert result.tally.applied["INPUT-IMPORT-TYPES"] == 2   # a builtin graph is no file


def test_a_foreign_mapping_that_is_no_type_table_is_a_clear_error(tmp_path):
    with pytest.raises(TypeError, match=r"tensor 'y' as 7: expected \(shape, dtype name\)"):
        judge_import(_file(tmp_path), lambda p: {"y": 7})
