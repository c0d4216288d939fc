"""verify puts crafted models to the front end (checks/frontend_cases.py): unsorted nodes, an If its
initializers decide, a cycle in an ONNX file and in a graph JSON file, a missing tensor, an unknown op and
an opset-6 training-mode BatchNormalization, and an opset-7 one with spatial=0; then constant folding,
control flow, import refusals and graph JSON files (checks/graph_json_cases.py). Each bug installed
below survived verify before these cases (tests/helpers/frontend_cases.py runs them as verify does)."""
from __future__ import annotations

import networkx as nx
import onnx
import pytest

from zcspec.checks.frontend_cases import FrontendCase, check_refusal, frontend_cases
from zcspec.checks.verify import VerifyConfig, VerifyResult
from zcspec.checks.verify_onnx_cases import check_frontend_cases
from zcspec.impl.compiler import op_limits, topology
from zcspec.impl.compiler.errors import CycleError
from zcspec.impl.compiler.frontend import onnx_graph
from zcspec.spec.registry import all_invariants

from tests.helpers.frontend_cases import run_cases


def _run() -> VerifyResult:
    result = VerifyResult()
    check_frontend_cases(result, VerifyConfig(models=()).soc)
    return result


def _errors() -> dict[str, str]:
    return dict(_run().errors)


def test_the_real_front_end_meets_every_case():
    result = _run()
    assert result.errors == [] and result.findings == [], [(f.case, str(f.violation)) for f in result.findings]
    # the crafted files alone put every input-file claim to the test (verify's floor)
    claims = [inv.id for inv in all_invariants() if inv.applies_to == "input_file"]
    assert len(claims) == 11 and result.below_floor(claims) == [], \
        {i: result.tally.distinct_count(i) for i in claims}


def test_the_cases_cover_imports_and_refusals():
    cases = frontend_cases()
    assert {c.refused for c in cases} >= {None, "CycleError", "MissingTensorError", "UnsupportedOpError",
                                          "UnsupportedFeatureError"}
    assert any(isinstance(c.model, str) for c in cases) and len({c.name for c in cases}) == len(cases)


def test_an_import_that_ignores_dependencies_fails_the_unsorted_case(monkeypatch):
    def in_file_order(graph, names, writer):
        return list(range(len(names)))

    monkeypatch.setattr(onnx_graph, "_execution_order", in_file_order)
    result = _run()
    errors = dict(result.errors)
    assert "front-end case unsorted_nodes" in errors and "must import" in errors["front-end case unsorted_nodes"]
    # the cycle, no longer found, is refused for something else: the input-file claims see that too
    assert ("front-end case cycle", "INPUT-REFUSAL-NAMES-FAULT") in {(f.case, f.violation.invariant_id)
                                                                     for f in result.findings}


def test_a_training_mode_batchnorm_let_through_fails(monkeypatch):
    monkeypatch.setitem(op_limits.UNSUPPORTED, "BatchNormalization",
                        tuple(e for e in op_limits.UNSUPPORTED["BatchNormalization"] if e.key != "is-test"))
    assert "imports; expected a UnsupportedFeatureError" in _errors()["front-end case batchnorm_opset6_training"]


def test_a_cycle_report_that_crashes_fails(monkeypatch):
    monkeypatch.setattr(topology, "dependency_graph", lambda graph: None)
    assert "front-end case graph_json_cycle" in _errors()


def test_check_refusal_wants_the_class_and_the_culprits():
    case = FrontendCase("c", "{}", "CycleError", ("'a'", "'b'"))
    assert check_refusal(case, CycleError(("a", "b"))) is None
    assert "does not name 'b'" in check_refusal(case, CycleError(("a", "c")))
    assert "expected a CycleError" in check_refusal(case, ValueError("nope"))
    assert "must import" in check_refusal(FrontendCase("d", "{}"), ValueError("nope"))


def test_the_cycle_case_really_has_a_cycle():
    (case,) = [c for c in frontend_cases() if c.name == "graph_json_cycle"]
    from zcspec.impl.compiler import graph_json
    g = topology.dependency_graph(graph_json.from_json(case.model))
    assert nx.find_cycle(g)
    with pytest.raises(CycleError):
        topology.execution_order(graph_json.from_json(case.model))


def test_a_batchnorm_kernel_that_ignores_spatial_fails(monkeypatch):
    """Before this case no verify model had spatial=0: a kernel normalising per channel regardless passed."""
    from zcspec.impl.device.kernels import common

    real = common.KERNELS["BatchNormalization"]

    class PerChannel:   # the task as the kernel sees it, with spatial forced back to 1
        def __init__(self, task):
            self._task = task

        def __getattr__(self, name):
            return getattr(self._task, name)

        def attr(self, key, default=None):
            return 1 if key == "spatial" else self._task.attr(key, default)

    def per_channel(task, ins, outs):
        x, scale, bias, mean, var = ins
        flat = [p.reshape(-1)[: x.shape[1]] for p in (scale, bias, mean, var)]
        return real(PerChannel(task), [x, *flat], outs)

    monkeypatch.setitem(common.KERNELS, "BatchNormalization", per_channel)
    result = VerifyResult()
    check_frontend_cases(result, VerifyConfig(models=()).soc)
    assert {(f.case, f.violation.invariant_id) for f in result.findings} == {
        ("front-end case batchnorm_opset7_per_activation [execution]", "EXEC-ORACLE")}


# --- the folding, control-flow, import and graph JSON cases: each install below is a front-end bug on a
# line no verify run executed before these cases (the coverage of `zcspec verify`), so it survived verify.

def test_the_new_cases_cover_every_refusal_class_and_both_file_kinds():
    cases = frontend_cases()
    assert {c.refused for c in cases} >= {
        "FoldError", "DataDependentControlError", "RuntimeValueError", "OnnxFileError", "AttributeError_",
        "GraphError", "DuplicateNameError", "InputShapeError", "ShapeInferenceError", "GraphFormatError",
        "ShapeError", "UnknownDTypeError", "SizeOverflowError"}
    json_cases = [c for c in cases if isinstance(c.model, str)]
    assert len(json_cases) > 30 and sum(c.refused is None for c in json_cases) == 3   # with the version-1 file


def test_a_shape_fold_that_ignores_start_and_end_fails(monkeypatch):
    """Opset-15 Shape(x, start=1, end=3) folded as the whole shape: x is divided by 24, not 12. (The Reshape
    alone would not show it: a view's output desc comes from shape inference, not from its folded target.)"""
    from zcspec.impl.compiler.frontend import constant_fold

    real = constant_fold._shape_of

    def whole_shape(node, types):
        bare = onnx.NodeProto()
        bare.CopyFrom(node)
        del bare.attribute[:]
        return real(bare, types)

    monkeypatch.setattr(constant_fold, "_shape_of", whole_shape)
    out = run_cases(monkeypatch, "fold_shape_start_end_and_size", "fold_shape_gather_concat")
    assert out.outputs_wrong("fold_shape_start_end_and_size")
    assert out.caught("fold_shape_gather_concat") == ""   # start/end absent: the whole shape is right


def test_an_elementwise_splat_fold_that_keeps_its_first_operand_fails(monkeypatch):
    """Mul(splat 0.25, 2) folded to 0.25 (the first operand's value): y is off, onnxruntime says so."""
    from zcspec.impl.compiler.frontend import constant_fold
    from zcspec.impl.compiler.frontend.constants import Const

    def first_operand(node, ins, types, opsets):
        shape = constant_fold._static_shape(types, node.output[0])
        if node.op_type not in constant_fold.ELEMENTWISE or shape is None or not ins[0].is_splat:
            return None
        return [Const.splat(ins[0].fill, shape, ins[0].elem)]

    monkeypatch.setattr(constant_fold, "_elementwise_shortcut", first_operand)
    assert run_cases(monkeypatch, "fold_splat_chain").outputs_wrong("fold_splat_chain")


def test_inlining_that_does_not_rename_inside_nested_branches_fails(monkeypatch):
    """The outer If's branch tensor t is renamed outer/t, but the nested If's branches still read t."""
    from zcspec.impl.compiler.frontend import static_control

    def top_level_only(node, rename):
        node.input[:] = [rename.get(t, t) for t in node.input]

    monkeypatch.setattr(static_control, "_rename_reads", top_level_only)
    out = run_cases(monkeypatch, "nested_if", "nested_if_returns_enclosing_tensor", "if_condition_from_initializers_then")
    assert "must import" in out.caught("nested_if") and "'t'" in out.caught("nested_if")
    assert "must import" in out.caught("nested_if_returns_enclosing_tensor")
    assert out.caught("if_condition_from_initializers_then") == ""


def test_an_if_inlined_after_folding_on_the_wrong_branch_fails(monkeypatch):
    from zcspec.impl.compiler.frontend import onnx_import

    real = onnx_import.inline_if
    monkeypatch.setattr(onnx_import, "inline_if", lambda model, output, name, take: real(model, output, name, not take))
    out = run_cases(monkeypatch, "if_condition_from_shape_then", "if_condition_from_shape_else")
    assert out.outputs_wrong("if_condition_from_shape_then")
    assert out.outputs_wrong("if_condition_from_shape_else")


def test_a_declared_minus_one_taken_as_a_fixed_dim_fails(monkeypatch):
    """PaddlePaddle's -1 read as a fixed dim: no InputShapeError naming the input and the --shape to give."""
    from zcspec.impl.compiler.frontend import onnx_shapes

    def literal(value):
        t = value.type.tensor_type
        return tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim) \
            if t.HasField("shape") else None

    monkeypatch.setattr(onnx_shapes, "declared_dims", literal)
    out = run_cases(monkeypatch, "dynamic_dim_minus_one", "dynamic_dim_named")
    assert "expected a InputShapeError" in out.caught("dynamic_dim_minus_one")
    assert out.caught("dynamic_dim_named") == ""


def test_validation_without_the_weight_size_rule_fails(monkeypatch):
    from zcspec.impl.compiler import validate

    monkeypatch.setattr(validate, "_weights_consistent", lambda graph: None)
    out = run_cases(monkeypatch, "graph_json_weight_size", "graph_json_splat_weight_size")
    assert "imports; expected a GraphError" in out.caught("graph_json_weight_size")
    assert "imports; expected a GraphError" in out.caught("graph_json_splat_weight_size")


def test_a_merge_check_that_ignores_branch_labels_fails(monkeypatch):
    from zcspec.impl.compiler.memory import rules

    monkeypatch.setattr(rules, "batch_label", lambda node: "")
    out = run_cases(monkeypatch, "graph_json_merge_wrong_branch", "graph_json_merge_in_branch")
    assert out.caught("graph_json_merge_wrong_branch") and out.caught("graph_json_merge_in_branch")


def test_a_reader_that_ignores_float_tags_and_a_writer_that_drops_them_fail(monkeypatch):
    from zcspec.impl.compiler import graph_json

    real_decode, real_encode = graph_json.decode_value, graph_json.encode_value
    monkeypatch.setattr(graph_json, "decode_value", lambda v: v if isinstance(v, dict) and "float" in v else real_decode(v))
    assert "must import" in run_cases(monkeypatch, "graph_json_tagged_values").caught("graph_json_tagged_values")
    monkeypatch.setattr(graph_json, "decode_value", real_decode)
    monkeypatch.setattr(graph_json, "encode_value", lambda v: list(v) if isinstance(v, tuple) else real_encode(v))
    assert "to_json wrote" in run_cases(monkeypatch, "graph_json_written_by_to_json").caught("graph_json_written_by_to_json")


def test_a_recurrent_default_table_missing_an_activation_fails(monkeypatch):
    """Survivor of the mutation run at 4e340f3: LSTM's default activations left one Tanh short; the
    custom-activations case was still refused (with another message), so verify passed."""
    from zcspec.impl.platform import kernel_ops

    monkeypatch.setitem(kernel_ops.RECURRENT_ACTIVATIONS, "LSTM", ("Sigmoid", "Tanh"))
    errors = _errors()
    assert "must import" in errors["front-end case lstm_default_activations_named"]
    assert "front-end case gru_default_activations_named" not in errors


def test_a_separate_clean_check_let_through_fails(monkeypatch):
    """Survivor of the mutation run at 4e340f3 (units.py _check_clean_pieces: one piece's start read as its
    end, so the overlap of two live pieces went unseen): only the planner's unit test had a graph whose
    later inputs are live at once. The case catches that mutant too; here the check goes altogether."""
    from zcspec.impl.compiler.memory import units

    monkeypatch.setattr(units, "_check_clean_pieces", lambda lt, clean, pieces: None)
    errors = _errors()
    assert "expected a PlanError" in errors["front-end case graph_json_separate_clean_later_inputs_live_at_once"]


def test_every_op_with_opset_6_broadcasting_has_a_case_of_unknown_dims():
    """Each op the op table gives a legacy-broadcast limit reaches that refusal in a case (Mul and Gemm in
    their own; the others in the sweep), so the rewrite's path for each is walked by verify."""
    legacy = {op for op, limits in op_limits.UNSUPPORTED.items() if any(e.key == "legacy-broadcast" for e in limits)}
    names = {c.name for c in frontend_cases()}
    covered = {"Mul": "legacy_broadcast_dims_unknown", "Gemm": "legacy_gemm_c_rank_unknown"}
    assert legacy and all(covered.get(op, f"legacy_{op.lower()}_dims_unknown") in names for op in legacy)


@pytest.mark.parametrize("op, arity, case", [("Reshape", (0, 2), "graph_json_Reshape_no_input"),
                                             ("Sub", (2, 3), "graph_json_Sub_3_inputs")])
def test_an_op_table_arity_let_loose_fails(monkeypatch, op, arity, case):
    """Survivor of the mutation run at 4e340f3 (the views' minimum inputs 1 -> 0 in impl/compiler/ops.py):
    no graph JSON case had a node with the wrong number of inputs. The expected counts are ONNX's."""
    import attrs

    from zcspec.impl.compiler import ops

    monkeypatch.setitem(ops.OPS, op, attrs.evolve(ops.OPS[op], inputs=arity))
    assert "imports; expected a GraphError" in _errors()[f"front-end case {case}"]


def test_a_reader_that_calls_a_set_size_unreadable_fails_through_the_claim(monkeypatch):
    """The mutation run's graph_json.py:151 (a set size needs version 4, not 3): every version-3 file with a
    set size is refused as unreadable. The files that break another rule are still refused (their cases see the
    message); the one that breaks none, graph_json_set_size_compiled, is INPUT-FORMAT-REFUSAL-JUSTIFIED's."""
    from zcspec.impl.compiler import graph_json

    real = graph_json._set_size
    monkeypatch.setattr(graph_json, "_set_size", lambda tensor, version: real(tensor, version - 1 if version == 3
                                                                              else version))
    found = {(f.case, f.violation.invariant_id) for f in _run().findings}
    assert ("front-end case graph_json_set_size_compiled", "INPUT-FORMAT-REFUSAL-JUSTIFIED") in found, found


def test_an_opset_without_shape_inference_left_out_of_the_table_fails_its_case(monkeypatch):
    """The last sample's op_limits.py:167 (the table of opsets whose schema has no shape inference inverted)
    passed verify: no verify file used such an opset. Relu-1 now is a front-end case."""
    kept = tuple(e for e in op_limits.UNSUPPORTED["Relu"] if e.key != "opset")
    monkeypatch.setitem(op_limits.UNSUPPORTED, "Relu", kept)
    assert "front-end case relu_opset1_without_shape_inference" in _errors()
