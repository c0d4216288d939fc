"""Every kernel against onnxruntime on one-node graphs, over Hypothesis-drawn shapes and attributes."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from zcspec.impl.device import Device
from tests.helpers.kernel_harness import arrays, compare, dims, shapes

DEV = Device("ascend910b")


def broadcastable(draw, shape):
    """A shape that broadcasts against ``shape``: a suffix of it with some dims set to 1."""
    k = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.booleans()) else d for d in shape[len(shape) - k:])


@pytest.mark.parametrize("op", ["Relu", "Neg", "Abs", "Exp", "Tanh", "Sigmoid", "LeakyRelu"])
@given(data=st.data())
def test_unary(op, data):
    x = data.draw(arrays(data.draw(shapes())))
    attrs = {"alpha": data.draw(st.floats(0.01, 0.5))} if op == "LeakyRelu" else {}
    compare(op, [x], dev=DEV, **attrs)


@given(x=shapes().flatmap(lambda s: arrays(s, lo=0.0, hi=9.0)))
def test_sqrt(x):
    compare("Sqrt", [x], dev=DEV)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min"])
@given(data=st.data())
def test_binary_broadcast(op, data):
    shape = data.draw(shapes())
    other = broadcastable(data.draw, shape)
    a, b = data.draw(arrays(shape)), data.draw(arrays(other, lo=0.5, hi=3.0))
    if data.draw(st.booleans()):
        a, b = b, a
    opset = 12 if op in ("Max", "Min") else 13
    compare(op, [a, b], dev=DEV, opset=opset)


@pytest.mark.parametrize("op", ["Add", "Mul", "Div"])
@given(data=st.data())
def test_binary_int32(op, data):
    shape = data.draw(shapes())
    a = data.draw(arrays(shape, np.int32, -50, 50))
    b = data.draw(arrays(shape, np.int32, 1, 9))
    compare(op, [a, b * np.where(a > 0, 1, -1).astype(np.int32)], dev=DEV)


@given(data=st.data())
def test_sum(data):
    shape = data.draw(shapes())
    xs = [data.draw(arrays(broadcastable(data.draw, shape) if i else shape)) for i in range(data.draw(st.integers(1, 4)))]
    compare("Sum", xs, dev=DEV)


@pytest.mark.parametrize("to", [np.int32, np.float16, np.float64])
@given(x=shapes().flatmap(lambda s: arrays(s, lo=-100, hi=100)))
def test_cast(to, x):
    from onnx import helper

    compare("Cast", [x], dev=DEV, to=helper.np_dtype_to_tensor_dtype(np.dtype(to)))


@given(data=st.data())
def test_softmax(data):
    shape = data.draw(shapes())
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    compare("Softmax", [data.draw(arrays(shape))], dev=DEV, axis=axis, kernel_attrs={"axis": axis, "_opset": 13})


@given(data=st.data())
def test_softmax_opset9(data):
    """Without ``_opset`` a node has the light models' opset-9 semantics: coerce to 2-D at ``axis``."""
    shape = data.draw(shapes(2, 4))
    attrs = {"axis": data.draw(st.integers(0, len(shape) - 1))} if data.draw(st.booleans()) else {}
    compare("Softmax", [data.draw(arrays(shape))], dev=DEV, opset=9, **attrs)


@given(data=st.data())
def test_lrn(data):
    shape = (data.draw(dims), data.draw(st.integers(1, 8)), data.draw(dims), data.draw(dims))
    attrs = dict(size=data.draw(st.sampled_from([1, 3, 5, 7])), alpha=data.draw(st.floats(1e-4, 1e-2)),
                 beta=data.draw(st.floats(0.5, 0.9)), bias=data.draw(st.floats(1.0, 2.0)))
    compare("LRN", [data.draw(arrays(shape))], dev=DEV, **attrs)


@pytest.mark.parametrize("opset", [9, 15])
@given(data=st.data())
def test_batch_norm(opset, data):
    shape = (data.draw(dims), data.draw(dims)) + data.draw(shapes(0, 2))
    c = shape[1]
    x, scale, bias, mean = (data.draw(arrays(s)) for s in (shape, (c,), (c,), (c,)))
    var = data.draw(arrays((c,), lo=0.1, hi=2.0))
    compare("BatchNormalization", [x, scale, bias, mean, var], dev=DEV, opset=opset,
            epsilon=data.draw(st.floats(1e-5, 1e-2)))


@given(data=st.data())
def test_gemm(data):
    m, k, n = data.draw(dims), data.draw(dims), data.draw(dims)
    ta, tb = data.draw(st.integers(0, 1)), data.draw(st.integers(0, 1))
    a = data.draw(arrays((k, m) if ta else (m, k)))
    b = data.draw(arrays((n, k) if tb else (k, n)))
    c = data.draw(arrays(data.draw(st.sampled_from([(n,), (m, n), (1, n), (m, 1)]))))
    compare("Gemm", [a, b, c], dev=DEV, transA=ta, transB=tb,
            alpha=data.draw(st.floats(0.5, 2.0)), beta=data.draw(st.floats(0.5, 2.0)))


@given(data=st.data())
def test_matmul(data):
    m, k, n = data.draw(dims), data.draw(dims), data.draw(dims)
    batch = data.draw(shapes(0, 2))
    compare("MatMul", [data.draw(arrays(batch + (m, k))), data.draw(arrays((k, n)))], dev=DEV)


@given(data=st.data())
def test_transpose(data):
    shape = data.draw(shapes())
    perm = data.draw(st.permutations(range(len(shape))))
    compare("Transpose", [data.draw(arrays(shape))], dev=DEV, perm=list(perm))


@given(data=st.data())
def test_concat(data):
    shape = data.draw(shapes())
    axis = data.draw(st.integers(0, len(shape) - 1))
    xs = []
    for _ in range(data.draw(st.integers(1, 4))):
        s = list(shape)
        s[axis] = data.draw(dims)
        xs.append(data.draw(arrays(tuple(s))))
    compare("Concat", xs, dev=DEV, axis=axis)
