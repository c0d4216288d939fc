"""Resize (nearest, linear, cubic; antialias, tf_crop_and_resize, keep_aspect_ratio_policy) and ConvTranspose
against onnxruntime.

Resize's scales/sizes are attributes in the IR (the front end moves the inputs there); the
kernel reads the output size from its slot, so the test gives it onnxruntime's output.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

from zcspec.impl.device import Device, KernelError
from tests.helpers.kernel_harness import arrays, compare, device_run, dims, ort_run

DEV = Device("ascend910b")
COORDS = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"]
NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
EMPTY = np.zeros((0,), np.float32)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("coord", COORDS)
@given(data=st.data())
def test_resize_scales_opset13(mode, coord, data):
    x = data.draw(arrays((data.draw(dims), data.draw(dims), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6)))))
    scales = np.array([1, 1] + [data.draw(st.sampled_from([0.5, 0.75, 1.0, 1.5, 2.0, 3.0])) for _ in range(2)],
                      np.float32)
    attrs = {"mode": mode, "coordinate_transformation_mode": coord}
    if mode == "nearest":
        attrs["nearest_mode"] = data.draw(st.sampled_from(NEAREST))
    compare("Resize", [x, EMPTY, scales], dev=DEV, kernel_inputs=[x], kernel_attrs={**attrs, "scales": tuple(scales.tolist())},
            rtol=1e-5, atol=1e-5, **attrs)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@given(data=st.data())
def test_resize_sizes_opset11(mode, data):
    x = data.draw(arrays((1, data.draw(dims), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6)))))
    sizes = np.array([1, x.shape[1], data.draw(st.integers(1, 12)), data.draw(st.integers(1, 12))], np.int64)
    coord = data.draw(st.sampled_from(COORDS))
    attrs = {"mode": mode, "coordinate_transformation_mode": coord}
    compare("Resize", [x, EMPTY, EMPTY, sizes], dev=DEV, opset=11, kernel_inputs=[x],
            kernel_attrs={**attrs, "sizes": tuple(sizes.tolist())}, rtol=1e-5, atol=1e-5, **attrs)


def test_resize_opset10_is_asymmetric_floor():
    """Opset 10 has no coordinate or rounding mode: the front end records onnxruntime's (asymmetric, floor)."""
    x = np.arange(2 * 3 * 5, dtype=np.float32).reshape(1, 2, 3, 5)
    for mode in ("nearest", "linear"):
        for s in ([1, 1, 2.0, 1.5], [1, 1, 0.6, 0.5]):
            scales = np.array(s, np.float32)
            compare("Resize", [x, scales], dev=DEV, opset=10, mode=mode, kernel_inputs=[x],
                    kernel_attrs={"mode": mode, "scales": tuple(s), "coordinate_transformation_mode": "asymmetric",
                                  "nearest_mode": "floor"})


@pytest.mark.parametrize("coord", COORDS)
@given(data=st.data())
def test_resize_cubic(coord, data):
    x = data.draw(arrays((1, data.draw(dims), data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6)))))
    scales = np.array([1, 1] + [data.draw(st.sampled_from([0.5, 0.8, 1.0, 1.5, 2.0, 3.0])) for _ in range(2)],
                      np.float32)
    attrs = {"mode": "cubic", "coordinate_transformation_mode": coord,
             "cubic_coeff_a": data.draw(st.sampled_from([-0.75, -0.5])), "exclude_outside": data.draw(st.sampled_from([0, 1]))}
    compare("Resize", [x, EMPTY, scales], dev=DEV, kernel_inputs=[x], kernel_attrs={**attrs, "scales": tuple(scales.tolist())},
            rtol=1e-4, atol=1e-4, **attrs)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@given(data=st.data())
def test_resize_antialias(mode, data):
    """Downscaling with the filter stretched by 1/scale (opset 18), to sizes or by scales."""
    x = data.draw(arrays((1, 1, data.draw(st.integers(2, 9)), data.draw(st.integers(2, 9)))))
    sizes = np.array([1, 1] + [data.draw(st.integers(1, n)) for n in x.shape[2:]], np.int64)
    attrs = {"mode": mode, "antialias": 1, "coordinate_transformation_mode": data.draw(st.sampled_from(
        ["half_pixel", "pytorch_half_pixel", "asymmetric"]))}
    compare("Resize", [x, None, None, sizes], dev=DEV, opset=18, kernel_inputs=[x],
            kernel_attrs={**attrs, "sizes": tuple(sizes.tolist())}, rtol=1e-4, atol=1e-4, **attrs)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@given(data=st.data())
def test_resize_tf_crop_and_resize(mode, data):
    x = data.draw(arrays((1, 1, data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6)))))
    # binary fractions: a coordinate on a rounding tie is one in float32 (onnxruntime's) and float64 alike
    starts = [data.draw(st.sampled_from([-0.25, 0.0, 0.25, 0.375])) for _ in range(2)]
    ends = [s + data.draw(st.sampled_from([0.25, 0.5, 0.75, 1.25])) for s in starts]
    roi = np.array([0, 0, *starts, 1, 1, *ends], np.float32)
    sizes = np.array([1, 1, data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7))], np.int64)
    # onnxruntime leaves an axis whose size does not change as it is, whatever its roi (onnx.reference does not)
    assume(all(s != n for s, n in zip(sizes[2:], x.shape[2:])))
    attrs = {"mode": mode, "coordinate_transformation_mode": "tf_crop_and_resize",
             "extrapolation_value": data.draw(st.sampled_from([0.0, 10.0]))}
    compare("Resize", [x, roi, None, sizes], dev=DEV, opset=13, kernel_inputs=[x],
            kernel_attrs={**attrs, "sizes": tuple(sizes.tolist()), "roi": tuple(roi.tolist())},
            rtol=1e-4, atol=1e-4, **attrs)


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
@given(data=st.data())
def test_resize_keep_aspect_ratio(policy, data):
    x = data.draw(arrays((1, 2, data.draw(st.integers(1, 6)), data.draw(st.integers(1, 6)))))
    sizes = np.array([data.draw(st.integers(1, 12)) for _ in range(2)], np.int64)
    attrs = {"mode": data.draw(st.sampled_from(["nearest", "linear", "cubic"])), "axes": [2, 3],
             "keep_aspect_ratio_policy": policy}
    compare("Resize", [x, None, None, sizes], dev=DEV, opset=18, kernel_inputs=[x],
            kernel_attrs={**attrs, "sizes": tuple(sizes.tolist())}, rtol=1e-4, atol=1e-4, **attrs)


@pytest.mark.parametrize("nd", [1, 2])
@given(data=st.data())
def test_conv_transpose(nd, data):
    group = data.draw(st.integers(1, 2))
    cg, mg = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    k = tuple(data.draw(st.integers(1, 3)) for _ in range(nd))
    s = tuple(data.draw(st.integers(1, 3)) for _ in range(nd))
    d = tuple(data.draw(st.integers(1, 2)) for _ in range(nd))
    pads = [data.draw(st.integers(0, kk - 1)) for kk in k * 2]
    out_pad = [data.draw(st.integers(0, ss - 1)) for ss in s]  # onnxruntime wants output_padding < stride
    x = data.draw(arrays((data.draw(st.integers(1, 2)), cg * group) + tuple(data.draw(st.integers(1, 4)) for _ in k)))
    assume(all(ss * (n - 1) + dd * (kk - 1) + 1 + op - pb - pe > 0 for ss, n, dd, kk, op, pb, pe
               in zip(s, x.shape[2:], d, k, out_pad, pads[:nd], pads[nd:])))
    w = data.draw(arrays((cg * group, mg) + k))
    ins = [x, w] + ([data.draw(arrays((mg * group,)))] if data.draw(st.booleans()) else [])
    compare("ConvTranspose", ins, dev=DEV, rtol=1e-4, atol=1e-4, group=group, strides=list(s), dilations=list(d),
            pads=pads, output_padding=out_pad)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_conv_transpose_same_padding_and_output_shape(auto_pad):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 2, 3, 4)).astype(np.float32), rng.standard_normal((2, 3, 3, 2)).astype(np.float32)
    compare("ConvTranspose", [x, w], dev=DEV, rtol=1e-4, atol=1e-4, strides=[2, 2], auto_pad=auto_pad)
    compare("ConvTranspose", [x, w], dev=DEV, rtol=1e-4, atol=1e-4, strides=[2, 3], output_shape=[6, 11])


def test_conv_transpose_output_shape_past_the_full_extent_pads_zeros():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((1, 2, 3, 4)).astype(np.float32), rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
    compare("ConvTranspose", [x, w], dev=DEV, rtol=1e-4, atol=1e-4, strides=[3, 2], output_shape=[10, 8])


@pytest.mark.parametrize("pads, out", [([2, 0, 2, 0], (1, 4, 2, 3)), ([1, 1, 1, 1], (1, 2, 3, 2)), (None, (1, 2, 4, 3))])
def test_conv_transpose_refuses_an_output_longer_or_shorter_than_its_pads_give(pads, out):
    """With explicit pads (or none) the output extent is stride*(n-1) + kernel - pads: the kernel once sliced
    whatever output slot it was given from the uncropped result, so a slot one longer than onnxruntime's
    output ran, reading the end padding (found by DEVICE-KERNEL-ORACLE's ConvTranspose steps)."""
    c = out[1]
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, (1, c, 2, 2)).astype(np.float32)
    w = rng.uniform(-3, 3, (c, 1, 3, 2)).astype(np.float32)
    attrs = {"group": c, "strides": [2, 1], **({"pads": pads} if pads else {})}
    (want,) = ort_run("ConvTranspose", [x, w], **attrs)
    assert want.shape != out
    with pytest.raises(KernelError, match="is not the extent"):
        device_run(Device(), "ConvTranspose", [x, w], [np.zeros(out, np.float32)], **attrs)
    compare("ConvTranspose", [x, w], rtol=1e-4, atol=1e-4, **attrs)
