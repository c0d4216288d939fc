"""The input-file claims (spec/invariants/input_file.py) catch a front end that lets a faulty file through, in
verify's front-end phase: each test plants one fault in impl's graph validation and runs the phase on its
refusal cases. Without the fault the same cases give no finding."""
from __future__ import annotations

import pytest

from zcspec.checks import verify_onnx_cases
from zcspec.checks.frontend_cases import frontend_cases
from zcspec.checks.verify_result import VerifyResult
from zcspec.impl.compiler import validate
from zcspec.impl.compiler.errors import GraphError


def _refusal_cases():
    return tuple(c for c in frontend_cases() if c.refused is not None and c.at == "import")


def _run(monkeypatch) -> VerifyResult:
    monkeypatch.setattr(verify_onnx_cases, "frontend_cases", _refusal_cases)
    result = VerifyResult()
    verify_onnx_cases.check_frontend_cases(result, "ascend910b")
    return result


def _claims(result: VerifyResult) -> set[str]:
    return {f.violation.invariant_id for f in result.findings}


def test_the_refusal_cases_hold_every_input_file_claim(monkeypatch):
    result = _run(monkeypatch)
    assert result.findings == [] and result.errors == []
    for claim in ("INPUT-ARITY-REFUSED", "INPUT-UNKNOWN-OP-REFUSED", "INPUT-CYCLE-REFUSED", "INPUT-DANGLING-REFUSED",
                  "INPUT-ONE-WRITER-REFUSED", "INPUT-STATIC-SHAPE-REFUSED", "INPUT-FORMAT-REFUSED",
                  "INPUT-REFUSAL-NAMES-FAULT"):
        assert result.tally.distinct_count(claim) >= 3, claim


def _skip(graph) -> None:
    return None


def _no_cycle_check(graph):
    return list(graph.nodes)


@pytest.mark.parametrize("planted, claims", [
    ("_ops_supported", {"INPUT-ARITY-REFUSED", "INPUT-UNKNOWN-OP-REFUSED"}),
    ("_names_unique", {"INPUT-ONE-WRITER-REFUSED"}),
    ("_tensors_resolved", {"INPUT-DANGLING-REFUSED"}),
    ("_descs_valid", {"INPUT-STATIC-SHAPE-REFUSED"}),
    ("execution_order", {"INPUT-CYCLE-REFUSED"}),
])
def test_a_validation_step_left_out_is_caught_by_its_claim(monkeypatch, planted, claims):
    monkeypatch.setattr(validate, planted, _no_cycle_check if planted == "execution_order" else _skip)
    result = _run(monkeypatch)
    assert claims <= _claims(result), (planted, _claims(result), result.errors[:3])


def test_a_refusal_that_names_nothing_is_caught(monkeypatch):
    def vague(graph):
        names = [n.name for n in graph.nodes]
        if len(set(names)) != len(names):
            raise GraphError("the graph is not valid")
    monkeypatch.setattr(validate, "_names_unique", vague)
    assert "INPUT-REFUSAL-NAMES-FAULT" in _claims(_run(monkeypatch))


def test_the_transcription_keeps_what_the_file_writes(tmp_path):
    import json

    import onnx
    from onnx import TensorProto, helper

    from zcspec.checks.input_file_observer import observe_input_file, outcome_of

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", None, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Gelu", ["y"], ["z"],
                                                                                         domain="com.microsoft")],
                              "g", [x, x], [y])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    obs = observe_input_file(str(path), outcome_of(None))
    assert obs.opset == 13 and [n.name for n in obs.nodes] == ["", ""] and obs.nodes[1].domain == "com.microsoft"
    assert obs.shaped[0].dims == ("batch", "?", 3) and obs.duplicates == (("graph input", "x"),)

    doc = {"format": "zcspec-graph", "version": 2, "name": "g", "tensors": [{"name": "y", "shape": [None, True, -1]}],
           "weights": [], "nodes": [{"name": "n", "op_type": "Relu", "inputs": ["x"], "outputs": ["y"]}]}
    path = tmp_path / "g.json"
    path.write_text(json.dumps(doc))
    assert observe_input_file(str(path), outcome_of(None)).shaped[0].dims == ("null", "true", -1)
    doc["nodes"][0]["inputs"] = "x"   # not a list of names: no lists to transcribe, the text alone
    path.write_text(json.dumps(doc))
    bare = observe_input_file(str(path), outcome_of(None))
    assert bare.nodes == () and bare.shaped == () and bare.document == json.dumps(doc)


@pytest.mark.parametrize("planted, case", [
    ("READS", "graph_json_wrong_version"),            # a reader that takes any version
    ("_io_nodes", "graph_json_no_netoutput"),          # validation without its NetOutput and Data index rules
    ("_weights_consistent", "graph_json_weight_size"),  # weight data of any size taken
    ("_reuse_inputs_valid", "graph_json_reuse_input_index"),   # an in-place index naming no input taken
    ("_merges_valid", "graph_json_merge_labels"),       # a Merge with one label for two inputs taken
])
def test_a_graph_json_reader_or_validation_rule_left_out_is_caught_by_the_format_claim(monkeypatch, planted, case):
    from zcspec.impl.compiler import graph_json
    if planted == "READS":
        monkeypatch.setattr(graph_json, "READS", (1, 2, 3, 4))
    else:
        monkeypatch.setattr(validate, planted, _skip)
    result = _run(monkeypatch)
    assert any(f.violation.invariant_id == "INPUT-FORMAT-REFUSED" and case in f.case for f in result.findings), \
        (planted, sorted({(f.case, f.violation.invariant_id) for f in result.findings})[:5], result.errors[:3])


def test_a_graph_json_refusal_that_names_no_field_is_caught(monkeypatch):
    """The reader's refusals of a node whose inputs are no list, or whose attrs are no object, named neither
    the node nor the key ("malformed graph JSON: TypeError: 'int' object is not iterable") before the format
    claim came: planted back, INPUT-REFUSAL-NAMES-FAULT reports them."""
    from zcspec.impl.compiler import graph_json
    from zcspec.impl.compiler.errors import GraphFormatError

    def anonymous(n, k, version):
        raise GraphFormatError("malformed graph JSON: TypeError: 'int' object is not iterable")

    original = graph_json._node
    monkeypatch.setattr(graph_json, "_node", lambda n, k, v: anonymous(n, k, v) if not isinstance(
        n.get("inputs"), list) else original(n, k, v))
    result = _run(monkeypatch)
    assert any(f.violation.invariant_id == "INPUT-REFUSAL-NAMES-FAULT" and "graph_json_inputs_not_a_list" in f.case
               for f in result.findings)
