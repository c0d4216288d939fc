"""Operands that decide only values (Clip's min/max, Pad's constant value, Resize's roi) known only at run
time: the import keeps them as inputs, the kernel reads them on every run. ONE compiled model runs with
different values per run on runtime v1 and v2 and matches onnxruntime each time (that is the point: no
freezing, no recompiling). Operands that decide a shape, a size or the task list are refused, the refusal
saying what the operand decides (impl/compiler/frontend/onnx_nodes.py ``OPERANDS``)."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import given, settings, strategies as st
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from tests.helpers.kernel_harness import arrays, compare, device_run, shapes
from tests.helpers.onnx_factory import init, model, vi

from zcspec.checks.conformance.runner import RUNTIMES, execute
from zcspec.checks.oracle import oracle_outputs
from zcspec.impl.compiler import op_limits
from zcspec.impl.compiler.compile import compile as compile_model
from zcspec.impl.compiler.frontend.errors import RuntimeValueError
from zcspec.impl.compiler.frontend.onnx_import import from_model
from zcspec.impl.compiler.frontend.onnx_nodes import OPERANDS, SHAPE, SHAPE_READ, TASK, VALUE
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device import Device, KernelError
from zcspec.impl.platform.kernel_ops import VALUE_INPUTS

ort.set_default_logger_severity(4)
F, I32 = TensorProto.FLOAT, TensorProto.INT32
X = np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4)
RUNTIME_VALUE = op_limits.find(op_limits.ANY_OP, "runtime-value").feature


def _ort(m: onnx.ModelProto, feed: dict) -> list:
    m = onnx.ModelProto.FromString(m.SerializeToString())
    m.ir_version = min(m.ir_version, 9)
    return ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feed)


def _compiled(m: onnx.ModelProto, feed: dict):
    """The IR graph and the loaded model file, compiled once with the inputs' shapes from ``feed``."""
    graph = from_model(m, shapes={k: v.shape for k, v in feed.items()})
    return graph, load_model(compile_model(graph, CompileOptions(soc="ascend910b")))


def _runs_match(m: onnx.ModelProto, feeds: list[dict], *, reference=_ort, atol=1e-6):
    """Compile ``m`` once; every feed, on both runtimes, gives what ``reference`` gives. Returns the graph."""
    graph, compiled = _compiled(m, feeds[0])
    outputs = [o.name for o in m.graph.output]
    for feed in feeds:
        want = reference(m, feed)
        for runtime in RUNTIMES:
            got = execute(runtime, compiled, feed)
            for name, w in zip(outputs, want):
                assert got[name].shape == w.shape and got[name].dtype == w.dtype, (runtime, name)
                np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=atol, err_msg=f"{runtime} {feed}")
    return graph


def _node(graph, op_type: str):
    return next(n for n in graph.nodes if n.op_type == op_type)


def _scalar(v, dtype=np.float32):
    return np.array(v, dtype)


@pytest.mark.parametrize("dtype,elem", [(np.float32, F), (np.int32, I32)])
def test_clip_bounds_from_graph_inputs_are_read_on_every_run(dtype, elem):
    m = model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")],
              [vi("x", [2, 3, 4], elem), vi("lo", [], elem), vi("hi", [], elem)], [vi("y", [2, 3, 4], elem)])
    x = (X * 4).astype(dtype)
    bounds = [(-1, 1), (0, 2), (-20, 20), (3, -3)]   # the last: min above max gives max everywhere
    graph = _runs_match(m, [{"x": x, "lo": _scalar(lo, dtype), "hi": _scalar(hi, dtype)} for lo, hi in bounds])
    clip = _node(graph, "Clip")
    assert clip.inputs == ("x", "lo", "hi") and clip.attr(VALUE_INPUTS) == ("min", "max")
    assert clip.attr("min") is None and not graph.weights


def test_clip_omitted_min_and_a_runtime_max():
    m = model([helper.make_node("Clip", ["x", "", "hi"], ["y"], name="clip")],
              [vi("x", [2, 3, 4]), vi("hi", [])], [vi("y", [2, 3, 4])])
    graph = _runs_match(m, [{"x": X, "hi": _scalar(h)} for h in (-1.0, 0.25, 5.0)])
    assert _node(graph, "Clip").inputs == ("x", "hi") and _node(graph, "Clip").attr(VALUE_INPUTS) == ("max",)


def test_a_computed_runtime_min_beside_a_constant_max():
    """min is computed from a graph input (Neg), max is an initializer: one of each form on one node."""
    m = model([helper.make_node("Neg", ["a"], ["lo"], name="neg"),
               helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")],
              [vi("x", [2, 3, 4]), vi("a", [])], [vi("y", [2, 3, 4])], [init("hi", np.float32(1.5))])
    graph = _runs_match(m, [{"x": X, "a": _scalar(a)} for a in (0.5, -1.0, 4.0)])
    clip = _node(graph, "Clip")
    assert clip.inputs == ("x", "lo") and clip.attr(VALUE_INPUTS) == ("min",) and clip.attr("max") == 1.5


def test_constant_bounds_stay_attributes_and_place_no_weight():
    m = model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")], [vi("x", [2, 3, 4])],
              [vi("y", [2, 3, 4])], [init("lo", np.float32(-1)), init("hi", np.float32(1))])
    graph = _runs_match(m, [{"x": X}])
    clip = _node(graph, "Clip")
    assert clip.inputs == ("x",) and clip.attr(VALUE_INPUTS) is None and (clip.attr("min"), clip.attr("max")) == (-1, 1)
    assert not graph.weights


@pytest.mark.parametrize("opset", [13, 18])
def test_pad_constant_value_from_a_graph_input(opset):
    axes = [init("axes", np.array([1, 2], np.int64))] if opset == 18 else []
    pads = np.array([1, 0, 2, 1], np.int64) if opset == 18 else np.array([0, 1, 0, 0, 2, 1], np.int64)
    inputs = ["x", "pads", "v"] + (["axes"] if opset == 18 else [])
    m = model([helper.make_node("Pad", inputs, ["y"], name="pad", mode="constant")],
              [vi("x", [2, 3, 4]), vi("v", [])], [vi("y", [2, 6, 5])], [init("pads", pads), *axes], opset=opset)
    graph = _runs_match(m, [{"x": X, "v": _scalar(v)} for v in (0.0, -7.5, 3.25)])
    pad = _node(graph, "Pad")
    assert pad.inputs == ("x", "v") and pad.attr(VALUE_INPUTS) == ("value",) and pad.attr("pads") == tuple(pads)


def _reference(m: onnx.ModelProto, feed: dict) -> list:
    return ReferenceEvaluator(m).run(None, feed)


def test_resize_roi_from_a_graph_input():
    """tf_crop_and_resize's roi maps coordinates only; the output's size is the constant ``sizes``.
    ONNX's reference is the judge here, as for ONNX's own Resize node tests (onnxruntime's crop differs)."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    m = model([helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], name="resize", mode="linear",
                                coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1.0)],
              [vi("x", [1, 1, 4, 4]), vi("roi", [8])], [vi("y", [1, 1, 3, 3])], [init("sizes", np.array([1, 1, 3, 3], np.int64))])
    rois = [[0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8], [0, 0, 0, 0, 1, 1, 1, 1], [0, 0, -0.5, 0.2, 1, 1, 1.2, 0.9]]
    graph = _runs_match(m, [{"x": x, "roi": np.array(r, np.float32)} for r in rois], reference=_reference, atol=1e-5)
    assert _node(graph, "Resize").attr(VALUE_INPUTS) == ("roi",)


def _refused(m, shapes):
    with pytest.raises(RuntimeValueError) as e:
        from_model(m, shapes=shapes)
    return e.value


@pytest.mark.parametrize("op,operand,node", [
    ("Pad", "pads", helper.make_node("Pad", ["x", "w"], ["y"], name="n", mode="constant")),
    ("Expand", "shape", helper.make_node("Expand", ["x", "w"], ["y"], name="n")),
    ("Tile", "repeats", helper.make_node("Tile", ["x", "w"], ["y"], name="n")),
    ("Reshape", "shape", helper.make_node("Reshape", ["x", "w"], ["y"], name="n")),
    ("Resize", "sizes", helper.make_node("Resize", ["x", "", "", "w"], ["y"], name="n")),
])
def test_a_shape_deciding_operand_from_a_graph_input_is_refused_saying_so(op, operand, node):
    m = model([node], [vi("x", [2, 3, 4]), vi("w", [6 if op == "Pad" else 3], TensorProto.INT64)], ["y"])
    e = _refused(m, {"x": (2, 3, 4), "w": (6 if op == "Pad" else 3,)})
    text = str(e)
    assert f"{op}: {RUNTIME_VALUE} not supported" in text
    assert f"operand {operand!r} decides the output's shape; it is tensor 'w'" in text and e.inputs == ("w",)


def test_a_runtime_training_mode_is_refused_as_deciding_the_task():
    """Whether Dropout is the identity (a view, no memory of its own) or a random op is fixed at compile
    time, as GE fixes the task list; a run that set training mode would otherwise have no task to run."""
    m = model([helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="drop")],
              [vi("x", [2, 3, 4]), vi("r", []), vi("t", [], TensorProto.BOOL)], ["y"])
    e = _refused(m, {"x": (2, 3, 4)})
    assert "operand 'training_mode' decides whether the node is the identity" in str(e) and e.inputs == ("t",)


def test_the_classification_is_complete_data():
    """Every operand the table lists says what it decides, and the ones the issue names are where it says."""
    assert {o.decides for d in OPERANDS.values() for o in d.values()} <= {SHAPE, SHAPE_READ, TASK, VALUE}
    assert {(op, o.name) for op, d in OPERANDS.items() for o in d.values() if o.decides == VALUE} == {
        ("Clip", "min"), ("Clip", "max"), ("Pad", "value"), ("Resize", "roi")}
    assert OPERANDS["Pad"][1].decides == SHAPE and OPERANDS["Dropout"][2].decides == TASK


# The IR attribute names that differ from the newest schema's input name (the older opsets' attribute name).
_RENAMED = {("Pad", "value"): "constant_value"}


def test_each_classified_position_is_the_operand_onnx_names_there():
    """A position off by one would move the wrong operand into an attribute: hold the table to ONNX's schemas."""
    for op, operands in OPERANDS.items():
        schema = onnx.defs.get_schema(op)
        for i, o in operands.items():
            assert schema.inputs[i].name == _RENAMED.get((op, o.name), o.name), (op, i, o.name)


DEV = Device("ascend910b")


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_clip_kernel_reads_runtime_bounds_like_onnxruntime(data):
    x = data.draw(arrays(data.draw(shapes())))
    lo, hi = (np.float32(data.draw(st.floats(-3, 3, width=32))) for _ in range(2))
    which = data.draw(st.sampled_from([("min", "max"), ("min",), ("max",)]))
    onnx_inputs = [x, np.array(lo) if "min" in which else None, np.array(hi) if "max" in which else None]
    while onnx_inputs[-1] is None:
        onnx_inputs.pop()
    compare("Clip", onnx_inputs, dev=DEV, kernel_inputs=[a for a in onnx_inputs if a is not None],
            kernel_attrs={VALUE_INPUTS: which})


def test_a_runtime_bound_that_is_not_a_scalar_fails_loudly():
    with pytest.raises(KernelError, match="operand 'max' must be a scalar, got a tensor of shape \\[2\\]"):
        device_run(DEV, "Clip", [X, np.array([1.0, 2.0], np.float32)], [X], **{VALUE_INPUTS: ("max",)})
    with pytest.raises(KernelError, match="names 2 run-time operands, the task has 1 inputs"):
        device_run(DEV, "Pad", [X], [X], pads=(0, 0, 0, 0, 0, 0), **{VALUE_INPUTS: ("value", "x")})


@pytest.mark.parametrize("name", ["clip_both", "clip_max", "clip_min_computed", "pad_value"])
def test_the_checkers_oracle_evaluates_the_runtime_form(name):
    """checks/oracle.py exports the IR at opset 9, where these operands are attributes: it writes the
    run-time form out (checks/oracle_forms.py), held to onnxruntime on the source model."""
    nodes, ins, inits, feed = {
        "clip_both": ([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")],
                      [vi("lo", []), vi("hi", [])], [], {"lo": _scalar(-1), "hi": _scalar(0.5)}),
        "clip_max": ([helper.make_node("Clip", ["x", "", "hi"], ["y"], name="clip")], [vi("hi", [])], [],
                     {"hi": _scalar(0.25)}),
        "clip_min_computed": ([helper.make_node("Neg", ["a"], ["lo"], name="neg"),
                               helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")],
                              [vi("a", [])], [init("hi", np.float32(1.5))], {"a": _scalar(2.0)}),
        "pad_value": ([helper.make_node("Pad", ["x", "pads", "v"], ["y"], name="pad")], [vi("v", [])],
                      [init("pads", np.array([0, 1, 0, 0, 2, 1], np.int64))], {"v": _scalar(-7.5)}),
    }[name]
    m = model(nodes, [vi("x", [2, 3, 4]), *ins], [vi("y", [2, 6, 5] if name == "pad_value" else [2, 3, 4])], inits)
    feed = {"x": X, **feed}
    graph = from_model(m, shapes={k: v.shape for k, v in feed.items()})
    assert any(n.attr(VALUE_INPUTS) for n in graph.nodes)
    np.testing.assert_allclose(oracle_outputs(graph, feed)["y"], _ort(m, feed)[0], rtol=1e-6)
