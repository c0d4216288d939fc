"""The kernels whose ONNX semantics depend on the opset or the operand count, against onnxruntime:
variadic Max/Min/Sum/Mean (1 to 4 broadcast inputs), ReduceSum's empty axes and
noop_with_empty_axes (opset 13), zero-sized inputs, MaxPool of integers (opset 12)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from zcspec.impl.device import Device
from tests.helpers.kernel_harness import arrays, compare, shapes

DEV = Device("ascend910b")


def _suffix_shape(draw, shape):
    k = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.booleans()) else d for d in shape[len(shape) - k:])


@pytest.mark.parametrize("op", ["Max", "Min", "Sum", "Mean"])
@given(data=st.data())
def test_variadic(op, data):
    shape = data.draw(shapes())
    n = data.draw(st.integers(1, 4))
    xs = [data.draw(arrays(shape if i == 0 else _suffix_shape(data.draw, shape))) for i in range(n)]
    if data.draw(st.booleans()):
        xs.reverse()   # the widest input need not come first
    compare(op, xs, dev=DEV, opset=13)


@pytest.mark.parametrize("op", ["Max", "Min"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.float16, np.float64])
def test_variadic_max_min_dtypes(op, dtype):
    rng = np.random.default_rng(1)
    xs = [rng.integers(0, 100, (2, 3)).astype(dtype) for _ in range(3)]
    compare(op, xs, dev=DEV, opset=13)


@given(data=st.data())
def test_reduce_sum_empty_axes_and_noop(data):
    x = data.draw(arrays(data.draw(shapes())))
    keep, noop = data.draw(st.integers(0, 1)), data.draw(st.integers(0, 1))
    axes = np.zeros((0,), np.int64)
    with_input = data.draw(st.booleans())   # an empty axes input, or none at all: the same meaning
    compare("ReduceSum", [x, axes] if with_input else [x], dev=DEV, opset=13, clean=True, keepdims=keep,
            noop_with_empty_axes=noop)


@pytest.mark.parametrize("keep", [0, 1])
@pytest.mark.parametrize("axes", [[1], [0, 2], []])
def test_reduce_sum_of_a_zero_sized_input(axes, keep):
    x = np.zeros((2, 0, 3), np.float32)
    compare("ReduceSum", [x, np.array(axes, np.int64)], dev=DEV, opset=13, clean=True, keepdims=keep)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@given(data=st.data())
def test_max_pool_of_integers(dtype, data):
    lo = 0 if dtype == np.uint8 else -120
    x = data.draw(arrays((1, data.draw(st.integers(1, 3)), data.draw(st.integers(2, 6)), data.draw(st.integers(2, 6))),
                         dtype, lo, 120))
    pads = [data.draw(st.integers(0, 1)) for _ in range(4)]
    compare("MaxPool", [x], dev=DEV, opset=12, kernel_shape=[2, 2], pads=pads, strides=[1, 2])


@pytest.mark.parametrize("op, inputs, attrs", [
    ("Softmax", [np.zeros((2, 0), np.float32)], {"axis": 1}),
    ("Softmax", [np.zeros((0, 3), np.float32)], {"axis": 1}),
    ("Softmax", [np.zeros((0, 3, 2), np.float32)], {"axis": 1, "opset9": True}),
    ("Max", [np.zeros((0, 3), np.float32)] * 3, {}),
    ("Mean", [np.zeros((0, 3), np.float32), np.zeros((3,), np.float32)], {}),
    ("MaxPool", [np.zeros((0, 2, 4, 4), np.float32)], {"kernel_shape": [2, 2]}),
    ("Conv", [np.zeros((0, 2, 4, 4), np.float32), np.ones((3, 2, 2, 2), np.float32)], {}),
    ("BatchNormalization", [np.zeros((0, 2, 3), np.float32)] + [np.ones(2, np.float32)] * 4, {}),
    ("Gemm", [np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)], {}),
    ("Concat", [np.zeros((2, 0), np.float32), np.ones((2, 3), np.float32)], {"axis": 1}),
])
def test_zero_sized_inputs(op, inputs, attrs):
    attrs = dict(attrs)
    opset = 9 if attrs.pop("opset9", False) else 13
    kernel_attrs = {**attrs, "_opset": 13} if op == "Softmax" and opset == 13 else None
    compare(op, inputs, dev=DEV, opset=opset, kernel_attrs=kernel_attrs, **attrs)
