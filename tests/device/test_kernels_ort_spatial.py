"""Conv, the pools, Split, Slice, ReduceSum and the copy kernels against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

from zcspec.impl.device import Device
from tests.helpers.kernel_harness import arrays, compare, device_run, dims, ort_run, shapes

DEV = Device("ascend910b")


@st.composite
def windowed(draw, nd=2, max_kernel=3):
    """(spatial input sizes, kernel, strides, dilations, pads) that give at least one output pixel."""
    k = tuple(draw(st.integers(1, max_kernel)) for _ in range(nd))
    d = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    s = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    pads = tuple(draw(st.integers(0, kk - 1)) for kk in k * 2)
    sizes = tuple(draw(st.integers(dd * (kk - 1) + 1, dd * (kk - 1) + 6)) for kk, dd in zip(k, d))
    return sizes, k, s, d, pads


@pytest.mark.parametrize("nd", [1, 2])
@given(data=st.data())
def test_conv(nd, data):
    sizes, k, s, d, pads = data.draw(windowed(nd))
    groups = data.draw(st.integers(1, 3))
    cg, mg = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    x = data.draw(arrays((data.draw(st.integers(1, 2)), cg * groups) + sizes))
    w = data.draw(arrays((mg * groups, cg) + k))
    inputs = [x, w] + ([data.draw(arrays((mg * groups,)))] if data.draw(st.booleans()) else [])
    auto_pad = data.draw(st.sampled_from(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
    attrs = dict(kernel_shape=list(k), strides=list(s), group=groups, auto_pad=auto_pad)
    if auto_pad == "NOTSET":
        attrs["pads"] = list(pads)
    if auto_pad in ("NOTSET", "VALID"):
        attrs["dilations"] = list(d)  # ORT's SAME padding ignores dilations; keep to the common ground
    compare("Conv", inputs, dev=DEV, rtol=1e-4, atol=1e-4, **attrs)


@given(data=st.data())
def test_conv_pointwise(data):
    c, m = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6))
    x = data.draw(arrays((data.draw(st.integers(1, 2)), c, data.draw(dims), data.draw(dims))))
    compare("Conv", [x, data.draw(arrays((m, c, 1, 1)))], dev=DEV, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@given(data=st.data())
def test_pool(op, data):
    sizes, k, s, d, pads = data.draw(windowed(2))
    x = data.draw(arrays((data.draw(st.integers(1, 2)), data.draw(dims)) + sizes))
    attrs = dict(kernel_shape=list(k), strides=list(s), pads=list(pads), ceil_mode=data.draw(st.integers(0, 1)))
    if op == "MaxPool":
        attrs["dilations"] = list(d)
    else:
        attrs["count_include_pad"] = data.draw(st.integers(0, 1))
        assume(not (attrs["count_include_pad"] and attrs["ceil_mode"]))
    compare(op, [x], dev=DEV, opset=13, **attrs)


@given(data=st.data())
def test_maxpool_indices(data):
    sizes, k, s, _, pads = data.draw(windowed(2))
    x = data.draw(arrays((data.draw(st.integers(1, 2)), data.draw(dims)) + sizes))
    compare("MaxPool", [x], dev=DEV, n_outputs=2, kernel_shape=list(k), strides=list(s), pads=list(pads),
            storage_order=data.draw(st.integers(0, 1)))


@given(data=st.data())
def test_pool_same_padding(data):
    sizes, k, s, _, _ = data.draw(windowed(2))
    # onnxruntime rejects SAME padding that would be negative (stride past the window).
    assume(all(((i + st_ - 1) // st_ - 1) * st_ + kk >= i for i, kk, st_ in zip(sizes, k, s)))
    x = data.draw(arrays((1, 2) + sizes))
    compare("MaxPool", [x], dev=DEV, kernel_shape=list(k), strides=list(s),
            auto_pad=data.draw(st.sampled_from(["SAME_UPPER", "SAME_LOWER", "VALID"])))


@given(x=shapes(3, 5).flatmap(arrays))
def test_global_average_pool(x):
    compare("GlobalAveragePool", [x], dev=DEV)


@given(data=st.data())
def test_split(data):
    shape = data.draw(shapes())
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = data.draw(st.integers(1, 3))
    cuts = sorted(data.draw(st.lists(st.integers(0, shape[axis]), min_size=n - 1, max_size=n - 1)))
    sizes = np.diff([0] + cuts + [shape[axis]]).astype(np.int64)
    x = data.draw(arrays(shape))
    assume((sizes > 0).all())
    if data.draw(st.booleans()):   # opset 13: split sizes as an input
        compare("Split", [x, sizes], dev=DEV, n_outputs=n, axis=axis)
    else:                          # opset 11: the attribute form of the light models' era
        compare("Split", [x], dev=DEV, opset=11, n_outputs=n, axis=axis, split=[int(v) for v in sizes])


def _bound(draw, index: int, dim: int) -> int:
    """``index`` in one of its ONNX spellings: plain, negative, or clamped past the end."""
    if index >= dim:
        return dim + draw(st.integers(0, 3))
    if index < 0:
        return -dim - 1 - draw(st.integers(0, 3))
    return draw(st.sampled_from([index, index - dim]))


@given(data=st.data())
def test_slice(data):
    shape = data.draw(shapes())
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape), unique=True))
    starts, ends, steps = [], [], []
    for a in axes:
        d, step = shape[a], data.draw(st.sampled_from([1, 2, -1, -2]))
        i = data.draw(st.integers(0, d - 1))
        j = data.draw(st.integers(i + 1, d) if step > 0 else st.integers(-1, i - 1))
        starts.append(_bound(data.draw, i, d))
        ends.append(_bound(data.draw, j, d))
        steps.append(step)
    x = data.draw(arrays(shape))
    compare("Slice", [x, *(np.array(v, np.int64) for v in (starts, ends, axes, steps))], dev=DEV)
    if all(st_ == 1 for st_ in steps):
        compare("Slice", [x], dev=DEV, opset=9, starts=starts, ends=ends, axes=axes)


@given(data=st.data())
def test_reduce_sum(data):
    shape = data.draw(shapes())
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), max_size=len(shape), unique_by=lambda a: a % len(shape)))
    keep = data.draw(st.integers(0, 1))
    x = data.draw(arrays(shape))
    if data.draw(st.booleans()):
        compare("ReduceSum", [x, np.array(axes, np.int64)], dev=DEV, clean=True, keepdims=keep)
    else:
        compare("ReduceSum", [x], dev=DEV, opset=11, clean=True, keepdims=keep, **({"axes": axes} if axes else {}))


@pytest.mark.parametrize("op", ["MemcpyAsync", "MemcpyAddrAsync"])
@given(x=shapes().flatmap(arrays))
def test_copy_kernels_match_identity(op, x):
    expected = ort_run("Identity", [x])
    (got,) = device_run(DEV, op, [x], expected)
    np.testing.assert_array_equal(got, expected[0])
