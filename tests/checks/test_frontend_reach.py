"""The front-end cases for code `zcspec verify` never ran (benchmarks/verify_reach.py): opset 1-6
broadcasting (frontend/legacy_broadcast.py) and the file's shape annotations (onnx_shapes.judge_annotations),
checks/frontend_cases.py ``_legacy_broadcast_cases``. Each bug installed below is one the coverage of verify
says it could not see before these cases; each now fails a case when run as verify runs it
(tests/helpers/frontend_cases.py).

onnxruntime has no opset-6 Add, so verify holds the opset-6 cases that import to onnx.reference on the
imported graph, which shares any mistake of the rewrite in values: the cases are built so that a wrong
alignment does not broadcast (the runtimes refuse it), and the last test holds their values to numpy's
reading of the opset-6 rules, computed without the rewrite.
"""
from __future__ import annotations

import numpy as np
import onnx

from zcspec.checks.frontend_cases import frontend_cases
from zcspec.checks.oracle import oracle_outputs
from zcspec.impl.compiler import op_limits
from zcspec.impl.compiler.frontend import legacy_broadcast, onnx_import, onnx_shapes
from zcspec.impl.compiler.frontend.errors import DeclaredTypeError
from zcspec.impl.compiler.frontend.onnx_import import from_model

from tests.helpers.frontend_cases import run_cases

LEGACY_IMPORTS = ("legacy_broadcast_axis_alignment", "legacy_broadcast_in_if_branch")


def _case(name: str):
    (case,) = [c for c in frontend_cases() if c.name == name]
    return case


def test_the_new_cases_are_met_as_verify_runs_them(monkeypatch):
    names = [c.name for c in frontend_cases() if c.name.startswith("legacy_") or c.name in (
        "op_without_schema_at_opset", "annotations_stale_leftover_and_shapeless", "declared_element_type_differs",
        "undefined_element_type")]
    assert len(names) == 25   # 16, and one case per op whose opsets 1-6 broadcast by axis (the sweep)
    out = run_cases(monkeypatch, *names)
    assert out.errors == {} and out.findings == {}


def test_a_rewrite_that_only_strips_the_attributes_fails(monkeypatch):
    """B left as it is (no in-place dims, no copy, no Unsqueeze): the IR's numpy broadcasting of (2, 3, 4, 5)
    and (3, 4) fails in the kernels (opset-6 shape inference gives A's shape without looking at B)."""
    monkeypatch.setattr(legacy_broadcast, "_aligned", lambda name, node, a, b: None)
    out = run_cases(monkeypatch, *LEGACY_IMPORTS)
    for name in LEGACY_IMPORTS:   # an error of the case's run (the kernel's refusal), not of its import
        assert "do not broadcast" in out.errors[f"front-end case {name} [execution]"]


def test_an_aligned_copy_that_takes_a_taken_name_fails(monkeypatch):
    def unchecked(self, wanted):
        self.taken.add(wanted)
        return wanted

    monkeypatch.setattr(legacy_broadcast._Names, "fresh", unchecked)
    caught = run_cases(monkeypatch, "legacy_broadcast_axis_alignment").caught("legacy_broadcast_axis_alignment")
    assert "must import" in caught and "'mul_w/aligned_w' is written more than once" in caught


def test_an_insertion_that_renames_the_unnamed_nodes_after_it_fails(monkeypatch):
    def unpinned(graph, names, added):
        nodes = list(graph.node)
        for i, n in reversed(added):
            nodes.insert(i, n)
        del graph.node[:]
        graph.node.extend(nodes)

    monkeypatch.setattr(legacy_broadcast, "_insert", unpinned)
    caught = run_cases(monkeypatch, "legacy_model_with_foreign_ops").caught("legacy_model_with_foreign_ops")
    assert "does not name 'FrobnicateXYZ_2'" in caught and "'FrobnicateXYZ_3'" in caught


def test_a_negative_axis_read_the_numpy_way_fails(monkeypatch):
    real = legacy_broadcast._aligned

    def numpy_axis(name, node, a, b):
        axis = legacy_broadcast._attr(node, "axis")
        if axis is not None and axis < 0 and a is not None:
            fixed = onnx.NodeProto()
            fixed.CopyFrom(node)
            for attr in fixed.attribute:
                if attr.name == "axis":
                    attr.i = axis % len(a)
            node = fixed
        return real(name, node, a, b)

    monkeypatch.setattr(legacy_broadcast, "_aligned", numpy_axis)
    caught = run_cases(monkeypatch, "legacy_broadcast_negative_axis").caught("legacy_broadcast_negative_axis")
    assert "imports; expected a LegacyBroadcastError" in caught


def test_a_gemm_c_left_unchecked_fails(monkeypatch):
    monkeypatch.setattr(legacy_broadcast, "_check_gemm", lambda name, node, types: None)
    out = run_cases(monkeypatch, "legacy_gemm_c_not_m_by_n", "legacy_gemm_c_rank_unknown")
    assert "imports; expected a LegacyBroadcastError" in out.caught("legacy_gemm_c_not_m_by_n")
    assert "imports; expected a UnsupportedFeatureError" in out.caught("legacy_gemm_c_rank_unknown")


def test_a_limit_looked_up_for_the_op_itself_fails_on_xor(monkeypatch):
    """Xor has no legacy-broadcast entry in the op table: the refusal borrows Add's."""
    monkeypatch.setattr(legacy_broadcast, "_limit", lambda op_type: op_limits.find(op_type, "legacy-broadcast"))
    caught = run_cases(monkeypatch, "legacy_xor_dims_unknown").caught("legacy_xor_dims_unknown")
    assert "KeyError" in caught


def test_a_judge_that_lets_a_declared_type_through_fails(monkeypatch):
    real = onnx_import.judge_annotations

    def lenient(model, types, producer, tensors):
        try:
            return real(model, types, producer, tensors)
        except DeclaredTypeError:
            return onnx_shapes.Judgement((), frozenset())

    monkeypatch.setattr(onnx_import, "judge_annotations", lenient)
    caught = run_cases(monkeypatch, "declared_element_type_differs").caught("declared_element_type_differs")
    assert "imports; expected a DeclaredTypeError" in caught


def test_a_judge_that_trusts_stale_annotations_fails(monkeypatch):
    """The value_info declaring h (4, 5) trusted: strict inference refuses the model onnxruntime runs."""
    real = onnx_import.judge_annotations

    def trusting(model, types, producer, tensors):
        judged = real(model, types, producer, tensors)
        return onnx_shapes.Judgement((), judged.filling | {(s.role, s.tensor) for s in judged.stale if s.inferred})

    monkeypatch.setattr(onnx_import, "judge_annotations", trusting)
    caught = run_cases(monkeypatch, "annotations_stale_leftover_and_shapeless").caught(
        "annotations_stale_leftover_and_shapeless")
    assert "must import" in caught and "ShapeInferenceError" in caught


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def test_the_legacy_cases_compute_what_opset_6_says():
    """numpy's reading of the opset-6 rules (B indexed along the axes it lines up with), against
    onnx.reference on the imported graph: what verify's oracle is for these files."""
    rng = np.random.default_rng(0)
    model = _case("legacy_broadcast_axis_alignment").model
    k, w = (onnx.numpy_helper.to_array(t) for t in model.graph.initializer)
    x, c = rng.standard_normal((2, 3, 4, 5)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
    h3 = (x + k[None, :, :, None]) * w[None, :, None, None] - w[None, :, None, None]
    h6 = _sigmoid(h3) / np.exp(c)[:, :, None, None] + np.arange(1, 5, dtype=np.float32)[None, None, :, None]
    got = oracle_outputs(from_model(model), {"x": x, "c": c})["y"]
    np.testing.assert_allclose(got, h6 + x, rtol=1e-5, atol=1e-6)

    x = rng.standard_normal((2, 3)).astype(np.float32)
    got = oracle_outputs(from_model(_case("legacy_broadcast_in_if_branch").model), {"x": x})["y"]
    np.testing.assert_allclose(got, x + np.array([1.5, -2], np.float32)[:, None] - x.max(axis=1)[:, None], rtol=1e-6)


def test_an_is_test_default_read_as_inference_fails(monkeypatch):
    """The mutation run's op_limits.py:150 survivor: BatchNormalization's is_test read as 1 when left out, so
    an opset-6 node without it (training mode, ONNX's default 0) imported; no case left it out."""
    import attrs
    entries = tuple(attrs.evolve(e, default=1) if e.key == "is-test" else e
                    for e in op_limits.UNSUPPORTED["BatchNormalization"])
    monkeypatch.setitem(op_limits.UNSUPPORTED, "BatchNormalization", entries)
    out = run_cases(monkeypatch, "batchnorm_opset6_training_by_default", "batchnorm_opset6_training",
                    "batchnorm_opset6_inference")
    assert "imports; expected a UnsupportedFeatureError" in out.caught("batchnorm_opset6_training_by_default")
    assert out.caught("batchnorm_opset6_training") == "" and out.caught("batchnorm_opset6_inference") == ""



def test_the_opset_6_batchnorm_cases_are_met(monkeypatch):
    out = run_cases(monkeypatch, "batchnorm_opset6_training_by_default", "batchnorm_opset6_training",
                    "batchnorm_opset6_inference")
    assert out.errors == {} and out.findings == {}
