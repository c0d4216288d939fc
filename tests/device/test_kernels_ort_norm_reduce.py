"""LayerNormalization, InstanceNormalization and the overwriting reductions against onnxruntime.

The reductions' ``axes`` is an attribute in the IR (the front end moves the opset-18 input
there), so onnxruntime gets the opset's own form and the kernel the attribute.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from zcspec.impl.device import Device, KernelError
from zcspec.impl.platform.reduce_axes import ReduceAxesError, reduce_axes
from tests.helpers.kernel_harness import arrays, compare, device_run, dims, shapes

DEV = Device("ascend910b")
REDUCE = ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"]


@given(data=st.data())
def test_layer_norm_opset17(data):
    shape = data.draw(shapes(1, 4))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    norm = shape[axis % len(shape):]
    ins = [data.draw(arrays(shape)), data.draw(arrays(norm))]
    if data.draw(st.booleans()):
        ins.append(data.draw(arrays(norm)))
    n_out = data.draw(st.integers(1, 3))
    compare("LayerNormalization", ins, dev=DEV, opset=17, n_outputs=n_out, axis=axis,
            epsilon=data.draw(st.sampled_from([1e-5, 1e-3])), rtol=1e-4, atol=1e-4)


@given(data=st.data())
def test_instance_norm(data):
    # A single spatial element normalises to exactly the bias; onnxruntime returns a value off by up to
    # 1e-4 there (seen in CI: bias 0.07093 came back 0.071045), so that degenerate case is left out.
    spatial = data.draw(shapes(1, 2).filter(lambda s: int(np.prod(s)) > 1))
    shape = (data.draw(dims), data.draw(dims)) + spatial
    c = shape[1]
    compare("InstanceNormalization", [data.draw(arrays(shape)), data.draw(arrays((c,))), data.draw(arrays((c,)))],
            dev=DEV, epsilon=data.draw(st.sampled_from([1e-5, 1e-2])), rtol=1e-4, atol=1e-4)


@given(data=st.data())
def test_batch_norm_training_mode(data):
    """training_mode=1 (opset 15, which then wants all 3 outputs): the batch's statistics, and the running
    ones moved by momentum."""
    shape = (data.draw(dims), data.draw(dims)) + data.draw(shapes(0, 2))
    c = shape[1]
    x, scale, bias, mean = (data.draw(arrays(s)) for s in (shape, (c,), (c,), (c,)))
    var = data.draw(arrays((c,), lo=0.1, hi=2.0))
    # One element per channel: the batch's variance is 0 and y = (x - mean) / sqrt(eps) * scale + bias, so
    # onnxruntime's float32 rounding of x - mean (about 1e-7) reaches 1e-4 at eps=1e-5 (a failure found by a
    # random seed): such batches take the larger epsilon.
    one = x.size == c
    attrs = {"training_mode": 1, "epsilon": 1e-2 if one else data.draw(st.sampled_from([1e-5, 1e-2])),
             "momentum": data.draw(st.sampled_from([0.9, 0.5]))}
    compare("BatchNormalization", [x, scale, bias, mean, var], dev=DEV, opset=15, n_outputs=3,
            rtol=1e-4, atol=1e-4, **attrs)


def _axes(data, rank):
    picked = data.draw(st.lists(st.integers(0, rank - 1), unique=True, max_size=rank))
    return [a - rank if data.draw(st.booleans()) else a for a in picked]


@pytest.mark.parametrize("op", REDUCE)
@given(data=st.data())
def test_reduce_opset13_attribute(op, data):
    x = data.draw(arrays(data.draw(shapes()), lo=0.5, hi=1.5))
    axes = _axes(data, x.ndim)
    keep = data.draw(st.integers(0, 1))
    attrs = {"keepdims": keep, **({"axes": axes} if axes else {})}
    compare(op, [x], dev=DEV, opset=13, rtol=1e-5, **attrs)


@pytest.mark.parametrize("op", REDUCE)
@given(data=st.data())
def test_reduce_opset18_axes_input(op, data):
    x = data.draw(arrays(data.draw(shapes()), lo=0.5, hi=1.5))
    axes = _axes(data, x.ndim)
    keep, noop = data.draw(st.integers(0, 1)), data.draw(st.integers(0, 1))
    ins = [x, np.array(axes, np.int64)] if axes or data.draw(st.booleans()) else [x]
    compare(op, ins, dev=DEV, opset=18, kernel_inputs=[x], rtol=1e-5, keepdims=keep, noop_with_empty_axes=noop,
            kernel_attrs={"axes": tuple(axes), "keepdims": keep, "noop_with_empty_axes": noop})


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin", "ReduceProd"])
def test_reduce_int64(op):
    x = np.arange(-6, 6, dtype=np.int64).reshape(3, 4)
    compare(op, [x], dev=DEV, opset=13, axes=[1], keepdims=0)


def test_reduce_axes_rule():
    assert reduce_axes([-1, 0], 3) == (0, 2)
    assert reduce_axes(None, 3) == (0, 1, 2)
    assert reduce_axes((), 2, noop_with_empty_axes=True) == ()
    with pytest.raises(ReduceAxesError, match="twice"):
        reduce_axes([1, -2], 3)
    with pytest.raises(ReduceAxesError, match="out of range"):
        reduce_axes([3], 3)
    with pytest.raises(KernelError, match="out of range"):
        device_run(DEV, "ReduceMean", [np.ones((2, 2), np.float32)], [np.ones((2,), np.float32)], axes=(2,), keepdims=0)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_reduce_over_an_empty_axis_gives_the_identity(op):
    x = np.zeros((2, 0, 3), np.float32)
    compare(op, [x], dev=DEV, opset=13, axes=[1], keepdims=1)
