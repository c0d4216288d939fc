"""Stale shape annotations (issue 39): value_info entries and declared outputs written for another input
size, or before a rewrite, are hints the graph overrides; they are reported, not trusted and not fatal.

Each model here is one a strict ONNX shape inference over the file's annotations refuses (checked
first, so the case is the one the issue is about) and onnxruntime runs: it must import, compile and
run through runtime v1 and v2 with onnxruntime's results, and the import must name the annotations
it ignored. An element type that disagrees is refused, as onnxruntime refuses it.
"""
from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, shape_inference
from tests.helpers.onnx_e2e import run_v1, run_v2
from tests.helpers.onnx_factory import init, light_path, save, vi

from zcspec.checks.cli.main import main
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.frontend.errors import DeclaredTypeError
from zcspec.impl.compiler.frontend.onnx_import import import_model, import_onnx, load_onnx

W = 20          # the width the tests give with --shape
OLD_W = 16      # the width the stale annotations were written for
SHAPES = {"x": (1, 4, W)}


def crnn(value_info=(), output=None) -> onnx.ModelProto:
    """A recogniser's tail: x (1, 4, W) -> Transpose t (1, W, 4) -> MatMul m (1, W, 3) -> Reshape r (1, 3W)
    -> Relu y. ``value_info`` and the declared ``output`` are the file's annotations."""
    w = np.arange(12, dtype=np.float32).reshape(4, 3) / 10 - 0.5
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1], name="transpose"),
             helper.make_node("MatMul", ["t", "w"], ["m"], name="matmul"),
             helper.make_node("Reshape", ["m", "s"], ["r"], name="Reshape_101"),
             helper.make_node("Relu", ["r"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "crnn", [vi("x", [1, 4, "W"])], [output or vi("y", [1, "D"])],
                              [init("w", w), init("s", np.array([0, -1], np.int64))], value_info=list(value_info))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def fixed(m: onnx.ModelProto) -> onnx.ModelProto:
    """``m`` with its input fixed as --shape fixes it, annotations untouched."""
    out = onnx.ModelProto()
    out.CopyFrom(m)
    out.graph.input[0].CopyFrom(vi("x", SHAPES["x"]))
    return out


def ort_outputs(m: onnx.ModelProto, feeds: dict) -> dict:
    """onnxruntime's outputs on the model as the file has it (stale annotations included)."""
    session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in m.graph.output], session.run(None, feeds)))


def imports_and_runs(m: onnx.ModelProto):
    """Import with --shape, compile, run on v1 and v2 and check both against onnxruntime; the import."""
    with pytest.raises(shape_inference.InferenceError):   # the issue: the file's annotations sink strict inference
        shape_inference.infer_shapes(fixed(m), check_type=True, strict_mode=True, data_prop=True)
    imported = import_model(m, shapes=SHAPES)
    assert imported.graph.desc["y"].shape == (1, 3 * W)
    compiled = build_model(imported.graph)
    feeds = {"x": np.random.default_rng(0).standard_normal(SHAPES["x"]).astype(np.float32)}
    want = ort_outputs(m, feeds)
    for runtime, got in (("v1", run_v1(compiled, feeds)), ("v2", run_v2(compiled, feeds))):
        np.testing.assert_allclose(got["y"], want["y"], rtol=1e-5, atol=1e-6, err_msg=f"runtime {runtime}")
    return imported


def described(imported) -> list[str]:
    return [str(s) for s in imported.stale]


def test_a_value_info_of_another_rank_is_ignored_and_reported():
    # The Reshape used to keep three dims: ONNX says "Inferred shape and existing shape differ in rank".
    imported = imports_and_runs(crnn([vi("r", [1, OLD_W, 3])]))
    assert described(imported) == [f"'r' declared (1, {OLD_W}, 3) inferred (1, {3 * W})"]
    assert imported.stale[0].role == "value_info" and imported.graph.desc["r"].shape == (1, 3 * W)


def test_value_infos_written_for_another_input_size_are_ignored_and_reported():
    stale = [vi("t", [1, OLD_W, 4]), vi("m", [1, OLD_W, 3]), vi("r", [1, 3 * OLD_W])]
    imported = imports_and_runs(crnn(stale))
    assert described(imported) == [f"'t' declared (1, {OLD_W}, 4) inferred (1, {W}, 4)",
                                   f"'m' declared (1, {OLD_W}, 3) inferred (1, {W}, 3)",
                                   f"'r' declared (1, {3 * OLD_W}) inferred (1, {3 * W})"]
    assert [imported.graph.desc[t].shape for t in "tmr"] == [(1, W, 4), (1, W, 3), (1, 3 * W)]


def test_a_declared_output_with_a_stale_shape_takes_the_inferred_one_and_is_reported():
    imported = imports_and_runs(crnn(output=vi("y", [1, 3 * OLD_W])))
    assert described(imported) == [f"output 'y' declared (1, {3 * OLD_W}) inferred (1, {3 * W})"]
    assert imported.stale[0].role == "output"


@pytest.mark.parametrize("m, tensor, node, role", [
    (crnn([vi("m", [1, W, 3], TensorProto.INT64)]), "m", "matmul", "value_info entry of tensor"),
    (crnn(output=vi("y", [1, 3 * W], TensorProto.INT64)), "y", "relu", "graph output"),
])
def test_an_element_type_the_graph_does_not_compute_is_refused_naming_the_tensor(m, tensor, node, role):
    # onnxruntime refuses these too ("Type Error: Type (tensor(float)) of output arg ..."): the type says
    # what the bytes mean, and neither choice is safe for a caller who reads them.
    with pytest.raises(Exception, match="Type Error"):
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(DeclaredTypeError, match=rf"{role} '{tensor}' \(written by node '{node}'\) declares element "
                                                r"type int64, the graph computes float") as e:
        import_model(m, shapes=SHAPES, file="crnn.onnx")
    assert e.value.tensor == tensor and e.value.node == node and e.value.file == "crnn.onnx"


def test_annotations_that_agree_or_leave_dims_dynamic_are_not_reported():
    agreeing = [vi("t", [1, W, 4]), vi("m", ["batch", W, None]), vi("r", [-1, 3 * W])]
    imported = import_model(crnn(agreeing, output=vi("y", [1, 3 * W])), shapes=SHAPES)
    assert imported.stale == () and imported.graph.desc["y"].shape == (1, 3 * W)


def test_an_entry_naming_no_tensor_of_the_graph_is_reported():
    imported = import_model(crnn([vi("gone", [1, 5])]), shapes=SHAPES)
    assert described(imported) == ["'gone' declared (1, 5), no tensor of the graph has that name"]


def test_an_import_of_a_clean_file_reports_nothing_and_load_onnx_still_gives_the_graph():
    imported = import_onnx(light_path("squeezenet"))
    assert imported.stale == () and imported.graph == load_onnx(light_path("squeezenet"))


def test_summary_names_the_ignored_annotations(tmp_path, capsys):
    stale = [vi("t", [1, OLD_W, 4]), vi("m", [1, OLD_W, 3]), vi("r", [1, 3 * OLD_W])]
    path = save(crnn(stale, output=vi("y", [1, 3 * OLD_W])), tmp_path, "crnn.onnx")
    assert main(["summary", path, "--shape", f"x=1x4x{W}"]) == 0
    out = capsys.readouterr().out
    assert "4 stale shape annotations ignored" in out
    for line in (f"'t' declared (1, {OLD_W}, 4) inferred (1, {W}, 4)",
                 f"'m' declared (1, {OLD_W}, 3) inferred (1, {W}, 3)",
                 f"'r' declared (1, {3 * OLD_W}) inferred (1, {3 * W})",
                 f"output 'y' declared (1, {3 * OLD_W}) inferred (1, {3 * W})"):
        assert line in out
    assert f"output y  1x{3 * W}" in out
    assert main(["summary", path, "--shape", f"x=1x4x{W}", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["stale_annotations"][3] == {"tensor": "y", "role": "output", "declared": [1, 3 * OLD_W],
                                            "inferred": [1, 3 * W]}
    assert main(["summary", save(crnn(), tmp_path, "clean.onnx"), "--shape", f"x=1x4x{W}"]) == 0
    assert "stale" not in capsys.readouterr().out


def test_an_agreeing_annotation_that_fixes_what_the_graph_leaves_unknown_is_still_trusted():
    # ReduceSum's axes are a run-time input: the graph alone cannot size r, the file's value_info does,
    # and inference carries it on to y (ONNX's node tests declare shapes so).
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    feeds = {"x": x, "axes": np.array([0], np.int64)}
    nodes = [helper.make_node("ReduceSum", ["x", "axes"], ["r"], keepdims=0, name="reduce"),
             helper.make_node("Relu", ["r"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "g", [vi("x", [2, 3, 4]), vi("axes", [1], TensorProto.INT64)], [vi("y", None)],
                              value_info=[vi("r", [3, 4])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    imported = import_model(m)
    assert imported.stale == () and imported.graph.desc["y"].shape == (3, 4)
    compiled = build_model(imported.graph)
    want = ort_outputs(m, feeds)
    for runtime, got in (("v1", run_v1(compiled, feeds)), ("v2", run_v2(compiled, feeds))):
        np.testing.assert_allclose(got["y"], want["y"], rtol=1e-5, atol=1e-6, err_msg=f"runtime {runtime}")


def test_summary_refuses_a_contradicting_element_type_with_exit_code_2(tmp_path, capsys):
    path = save(crnn([vi("m", [1, W, 3], TensorProto.INT64)]), tmp_path, "typed.onnx")
    assert main(["summary", path, "--shape", f"x=1x4x{W}"]) == 2
    err = capsys.readouterr().err
    assert path in err and "value_info entry of tensor 'm' (written by node 'matmul')" in err and "Traceback" not in err
