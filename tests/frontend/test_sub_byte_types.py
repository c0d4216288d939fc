"""Sub-byte element types (int4, uint4, float4e2m1, int2, uint2; float6 in storage): packed as ONNX packs
them, in the device, in the weights and in the user's buffers (impl/platform/storage.py), and converted
by Cast (and moved by Transpose) as ONNX defines.

The kernels are checked against onnxruntime where it runs the type (its Python binding takes no
sub-byte arrays, so the types stay inside the model: float -> Cast -> ... -> Cast -> float), and
against onnx.reference otherwise (float4e2m1, which onnxruntime has no Cast for) and for fractions:
onnx.reference (and so ONNX's node tests) truncates a float toward zero on its way to int4/int2, as
numpy's astype does, while onnxruntime rounds it to the nearest integer; the kernel follows
onnx.reference. Out of range, where ONNX leaves the result undefined, they differ as well.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from tests.helpers.kernel_harness import device_run

from zcspec.checks.conformance.cases import Case
from zcspec.checks.conformance.runner import run_case
from zcspec.impl.compiler import op_limits
from zcspec.impl.device import Device, Slot
from zcspec.impl.platform import dtypes, storage

DEV = Device("ascend910b")
ONNX_TYPE = {d: dtypes.get(d).onnx_id for d in op_limits.SUB_BYTE}
INTS = {"int4": (-8, 7), "uint4": (0, 15), "int2": (-2, 1), "uint2": (0, 3)}


def _np(dtype):
    return dtypes.numpy_dtype(dtype)


@pytest.mark.parametrize("dtype", sorted(op_limits.SUB_BYTE))
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 25])
def test_storage_packs_as_onnx_raw_data(dtype, n):
    codes = np.random.default_rng(n).integers(0, 2 ** dtypes.get(dtype).bits, n).astype(np.uint8)
    a = codes.view(_np(dtype))
    packed = storage.to_storage(a, dtype)
    assert packed.tobytes() == numpy_helper.from_array(a).raw_data
    assert packed.size == dtypes.nbytes((n,), dtype) == Slot("in", (n,), dtype).nbytes
    assert storage.from_storage(packed, (n,), dtype).view(np.uint8).tolist() == codes.tolist()


def test_a_splat_image_broadcasts_its_element():
    one = storage.to_storage(np.array([-3], ml_dtypes.int4), "int4").tobytes()
    image = storage.image(one, (2, 3), "int4", splat=True)
    assert image.tolist() == [0xDD] * 3
    assert storage.from_storage(image, (2, 3), "int4").astype(int).tolist() == [[-3] * 3] * 2


def _ort_chain(x: np.ndarray, dtype: str, *, transpose: bool) -> np.ndarray:
    """onnxruntime: float x -> Cast(dtype) [-> Transpose] -> Cast(float)."""
    nodes = [helper.make_node("Cast", ["x"], ["a"], to=ONNX_TYPE[dtype])]
    if transpose:
        nodes.append(helper.make_node("Transpose", ["a"], ["b"], perm=[1, 0]))
    nodes.append(helper.make_node("Cast", [nodes[-1].output[0]], ["y"], to=T.FLOAT))
    out = x.shape[::-1] if transpose else x.shape
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", T.FLOAT, out)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 25)])
    m.ir_version = min(m.ir_version, 11)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def _device_chain(x: np.ndarray, dtype: str, *, transpose: bool) -> np.ndarray:
    (a,) = device_run(DEV, "Cast", [x], [np.zeros(x.shape, _np(dtype))], to=ONNX_TYPE[dtype])
    assert a.dtype == _np(dtype)
    if transpose:
        (a,) = device_run(DEV, "Transpose", [a], [np.zeros(x.shape[::-1], _np(dtype))], perm=(1, 0))
    (y,) = device_run(DEV, "Cast", [a], [np.zeros(a.shape, np.float32)], to=T.FLOAT)
    return y


@pytest.mark.parametrize("dtype", sorted(INTS))
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("transpose", [False, True])
def test_cast_and_transpose_of_integers_match_onnxruntime(dtype, seed, transpose):
    lo, hi = INTS[dtype]
    rng = np.random.default_rng(seed)
    x = rng.integers(lo, hi + 1, (int(rng.integers(1, 6)), int(rng.integers(1, 6)))).astype(np.float32)
    np.testing.assert_array_equal(_device_chain(x, dtype, transpose=transpose), _ort_chain(x, dtype, transpose=transpose))


@pytest.mark.parametrize("dtype", sorted(op_limits.SUB_BYTE - {"float6e2m3", "float6e3m2"}))
@pytest.mark.parametrize("seed", range(3))
def test_cast_matches_onnx_reference_on_fractions(dtype, seed):
    rng = np.random.default_rng(seed)
    lo, hi = INTS.get(dtype, (-7, 7))
    x = rng.uniform(lo, hi, (3, 7)).astype(np.float32)
    node = helper.make_node("Cast", ["x"], ["y"], to=ONNX_TYPE[dtype])
    (want,) = ReferenceEvaluator(node).run(None, {"x": x})
    (got,) = device_run(DEV, "Cast", [x], [np.zeros(x.shape, _np(dtype))], to=ONNX_TYPE[dtype])
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))
    (back,) = device_run(DEV, "Cast", [got], [np.zeros(x.shape, np.float16)], to=T.FLOAT16)
    np.testing.assert_array_equal(back, want.astype(np.float16))


def _model() -> tuple[onnx.ModelProto, dict]:
    """Sub-byte tensors in every place: a graph input and outputs (user buffers), a weight of an odd
    number of elements, a splat weight (ConstantOfShape), kernels' inputs and outputs, a copy."""
    w = numpy_helper.from_array(np.array([[-8, 7, 3], [0, -1, 5], [2, 2, -4]], ml_dtypes.int4), "w")
    fill = numpy_helper.from_array(np.array([-3], ml_dtypes.int4))
    nodes = [
        helper.make_node("Cast", ["x"], ["x4"], to=T.INT4),
        helper.make_node("Transpose", ["x4"], ["t4"], perm=[1, 0]),
        helper.make_node("Cast", ["t4"], ["y"], to=T.FLOAT),
        helper.make_node("Identity", ["w"], ["w_out"]),
        helper.make_node("ConstantOfShape", ["shape"], ["fill"], value=fill),
        helper.make_node("Identity", ["fill"], ["fill_out"]),
        helper.make_node("Cast", ["u"], ["u_out"], to=T.FLOAT4E2M1),
    ]
    outs = [("y", T.FLOAT), ("t4", T.INT4), ("w_out", T.INT4), ("fill_out", T.INT4), ("u_out", T.FLOAT4E2M1)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [5, 3]),
                                       helper.make_tensor_value_info("u", T.UINT2, [7])],
                          [helper.make_tensor_value_info(n, t, None) for n, t in outs],
                          [w, numpy_helper.from_array(np.array([3, 5], np.int64), "shape")])
    feeds = {"x": np.random.default_rng(0).uniform(-8, 7, (5, 3)).astype(np.float32),
             "u": np.array([0, 1, 2, 3, 3, 2, 1], ml_dtypes.uint2)}
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 25)]), feeds


def test_sub_byte_tensors_run_end_to_end_on_both_runtimes():
    m, feeds = _model()
    want = ReferenceEvaluator(m).run(None, feeds)
    case = Case("sub_byte", m, (feeds["x"], feeds["u"]), tuple(want), 0.0, 0.0,
                tuple(sorted({n.op_type for n in m.graph.node})))
    result = run_case(case)
    assert result.status == "pass", result.detail
