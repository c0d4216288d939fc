"""Oracle steps for the neural-network kernels: convolutions, pools, normalisations, Gemm, MatMul, LRN, Resize
(the spaces of tests/device/test_kernels_ort.py, _spatial, _norm_reduce and _resize). See kernel_steps.

Some steps must be refused: onnxruntime refuses their node, so the device must too (DEVICE-KERNEL-ORACLE).
An LRN over a rank-2 input (the kernel's own check: without it the kernel would normalise over axis 1) and
a MatMul whose inner lengths differ are refused by the kernels' checks; a Gemm bias that does not broadcast,
a Conv bias or a BatchNormalization scale of the wrong length are refused by numpy inside the kernel,
which the executor turns into a KernelError (impl/device/executor.py run_kernel): no other verify step
reaches that branch.
"""
from __future__ import annotations

import random

from zcspec.checks.strategies.kernel_step_form import F, I, io, omit, step

_COORDS = ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel")
_NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _windowed(rng: random.Random, nd: int, max_kernel: int = 3):
    """(spatial sizes, kernel, strides, dilations, pads) that give at least one output element."""
    k = [rng.randint(1, max_kernel) for _ in range(nd)]
    d = [rng.randint(1, 2) for _ in range(nd)]
    s = [rng.randint(1, 3) for _ in range(nd)]
    pads = [rng.randint(0, kk - 1) for kk in k * 2]
    sizes = [rng.randint(dd * (kk - 1) + 1, dd * (kk - 1) + 4) for kk, dd in zip(k, d)]
    return sizes, k, s, d, pads


def _x(rng: random.Random, shape, lo: float = -3.0, hi: float = 3.0) -> dict:
    return io(shape, "float32", F(rng, shape, lo, hi))


def _conv(rng: random.Random) -> list[dict]:
    nd = rng.randint(1, 2)
    sizes, k, s, d, pads = _windowed(rng, nd)
    groups, cg, mg = rng.randint(1, 3), rng.randint(1, 2), rng.randint(1, 2)
    x, w = _x(rng, [rng.randint(1, 2), cg * groups] + sizes), _x(rng, [mg * groups, cg] + k)
    inputs = [x, w] + ([_x(rng, [mg * groups])] if rng.random() < 0.5 else [])
    auto_pad = rng.choice(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
    attrs = omit(rng, {"kernel_shape": k, "strides": s, "group": groups, "auto_pad": auto_pad}, group=1,
                 auto_pad="NOTSET")
    if auto_pad == "NOTSET":
        attrs["pads"] = pads
    if auto_pad in ("NOTSET", "VALID"):
        attrs["dilations"] = d   # onnxruntime's SAME padding ignores dilations: kept to the common ground
    good = step("Conv", inputs, attrs)
    m = mg * groups   # a bias one longer than the output channels: onnxruntime refuses, numpy in the kernel too
    bad = step("Conv", [x, w, _x(rng, [m + 1])], attrs, outs=good["outs"])
    return [good, bad]


def _conv_transpose(rng: random.Random) -> list[dict]:
    nd = rng.randint(1, 2)
    group, cg, mg = rng.randint(1, 2), rng.randint(1, 2), rng.randint(1, 2)
    k, s, d = ([rng.randint(lo, hi) for _ in range(nd)] for lo, hi in ((1, 3), (1, 3), (1, 2)))
    x = _x(rng, [rng.randint(1, 2), cg * group] + [rng.randint(1, 3) for _ in range(nd)])
    inputs = [x, _x(rng, [cg * group, mg] + k)] + ([_x(rng, [mg * group])] if rng.random() < 0.5 else [])
    attrs = {"group": group, "strides": s, "dilations": d}
    form = rng.choice(["pads", "pads", "auto_pad", "output_shape"])
    full = [st * (n - 1) + dd * (kk - 1) + 1 for st, n, dd, kk in zip(s, x["shape"][2:], d, k)]
    if form == "pads":
        attrs["pads"] = [rng.randint(0, kk - 1) for kk in k * 2]
        attrs["output_padding"] = [rng.randint(0, st - 1) for st in s]   # onnxruntime wants it below the stride
        if any(f + op - pb - pe <= 0 for f, op, pb, pe in zip(full, attrs["output_padding"], attrs["pads"][:nd],
                                                               attrs["pads"][nd:])):
            attrs["pads"] = [0] * 2 * nd
    elif form == "auto_pad":
        attrs["auto_pad"] = rng.choice(["SAME_UPPER", "SAME_LOWER"])
        attrs["dilations"] = [1] * nd
    else:
        # past the full extent by less than a stride (zeros there): onnxruntime refuses a longer one
        attrs["output_shape"] = [f + rng.randint(0, st - 1) for f, st in zip(full, s)]
    return [step("ConvTranspose", inputs, attrs)]


def _ceil_out(shape: list[int], attrs: dict) -> list[dict]:
    """A ceil_mode pool's output: ONNX's rule that the last window starts inside the input or its begin pad
    (onnxruntime's; the installed onnx's shape inference keeps a window that starts in the end pad)."""
    out = list(shape[:2])
    nd = len(shape) - 2
    for n, k, s, d, pb, pe in zip(shape[2:], attrs["kernel_shape"], attrs["strides"], attrs.get("dilations", [1] * nd),
                                  attrs["pads"][:nd], attrs["pads"][nd:]):
        m = -(-(n + pb + pe - (d * (k - 1) + 1)) // s) + 1
        out.append(m - 1 if (m - 1) * s >= n + pb else m)
    return [io(out)]


def _pool(rng: random.Random, op: str, nd: int) -> list[dict]:
    sizes, k, s, d, pads = _windowed(rng, nd)
    shape = [rng.randint(1, 2), rng.randint(1, 3)] + sizes
    attrs = {"kernel_shape": k, "strides": s, "pads": pads}
    if op == "AveragePool":   # one with count_include_pad and ceil_mode drawn, one at their defaults (0)
        attrs["count_include_pad"], attrs["ceil_mode"] = rng.choice([(0, 0), (0, 1), (1, 0)])
        outs = _ceil_out(shape, attrs) if attrs["ceil_mode"] else None
        plain = {k: v for k, v in attrs.items() if k not in ("count_include_pad", "ceil_mode")}
        # begin pads to count or not (below the kernel: onnxruntime refuses a pad as long as the kernel)
        plain["pads"] = [min(max(p, 1), k[j] - 1) if j < len(k) else p for j, p in enumerate(pads)]
        return [step(op, [_x(rng, shape)], omit(rng, attrs, count_include_pad=0, ceil_mode=0), outs=outs),
                step(op, [_x(rng, shape)], plain)]
    form = rng.choice(["dilated", "indices", "integers"])
    if form == "dilated":
        attrs.update(dilations=d, ceil_mode=rng.randint(0, 1))
        return [step(op, [_x(rng, shape)], attrs, outs=_ceil_out(shape, attrs) if attrs["ceil_mode"] else None)]
    if form == "indices":
        attrs["storage_order"] = rng.randint(0, 1)
        return [step(op, [_x(rng, shape)], attrs, n_out=2)]
    dtype = rng.choice(["int8", "uint8"])
    values = I(rng, shape, 0 if dtype == "uint8" else -120, 120)
    return [step(op, [io(shape, dtype, values)], attrs, opset=12)]


def _global_pool(rng: random.Random, op: str) -> list[dict]:
    shape = [rng.randint(1, 2), rng.randint(1, 3)] + [rng.randint(1, 3) for _ in range(rng.randint(1, 3))]
    return [step(op, [_x(rng, shape)], {})]


def _lrn(rng: random.Random) -> list[dict]:
    shape = [rng.randint(1, 2), rng.randint(1, 5), rng.randint(1, 3), rng.randint(1, 3)]
    attrs = {"size": rng.choice([1, 3, 5, 7]), "alpha": rng.choice([1e-4, 1e-3, 1e-2]), "beta": rng.choice([0.5, 0.75]),
             "bias": rng.choice([1.0, 2.0])}
    flat = [rng.randint(1, 3), rng.randint(1, 5)]   # rank 2: onnxruntime wants N x C x D1 ...: refused
    return [step("LRN", [_x(rng, shape)], attrs), step("LRN", [_x(rng, flat)], attrs, outs=[io(flat)])]


def _batch_norm(rng: random.Random) -> list[dict]:
    shape = [rng.randint(1, 3), rng.randint(1, 3)] + [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
    c = shape[1]
    params = [_x(rng, [c]), _x(rng, [c]), _x(rng, [c]), _x(rng, [c], 0.125, 2)]
    eps = rng.choice([1e-5, 1e-2])
    if rng.random() < 0.35:
        attrs = {"training_mode": 1, "epsilon": eps, "momentum": rng.choice([0.9, 0.5])}
        good = step("BatchNormalization", [_x(rng, shape)] + params, attrs, opset=15, n_out=3)
    else:
        good = step("BatchNormalization", [_x(rng, shape)] + params, {"epsilon": eps}, opset=rng.choice([9, 15]))
    # a scale one longer than the channels (2 or 3 of them: one channel would broadcast against any scale)
    shape = [shape[0], rng.randint(2, 3)] + shape[2:]
    wrong = [_x(rng, [shape[1] + 1])] + [_x(rng, [shape[1]]) for _ in range(2)] + [_x(rng, [shape[1]], 0.125, 2)]
    bad = step("BatchNormalization", [_x(rng, shape)] + wrong, {"epsilon": eps}, opset=15, outs=[io(shape)])
    return [good, bad]


def _gemm(rng: random.Random) -> list[dict]:
    m, k, n = (rng.randint(1, 3) for _ in range(3))
    ta, tb = rng.randint(0, 1), rng.randint(0, 1)
    a, b = _x(rng, [k, m] if ta else [m, k]), _x(rng, [n, k] if tb else [k, n])
    c = rng.choice([[n], [m, n], [1, n], [m, 1], None])
    attrs = omit(rng, {"transA": ta, "transB": tb, "alpha": rng.choice([0.5, 1.0, 2.0]),
                       "beta": rng.choice([0.5, 1.0, 2.0])}, transA=0, transB=0, alpha=1.0, beta=1.0)
    good = step("Gemm", [a, b] + ([] if c is None else [_x(rng, c)]), attrs)
    bad = step("Gemm", [a, b, _x(rng, [m + 1, n])], attrs, outs=[io([m, n])])   # a bias that does not broadcast
    return [good, bad]


def _matmul(rng: random.Random) -> list[dict]:
    m, k, n = (rng.randint(1, 3) for _ in range(3))
    batch = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
    a = batch + [m, k] if rng.random() < 0.8 else [k]
    b = [k, n] if rng.random() < 0.6 else [1 if rng.random() < 0.5 else d for d in batch] + [k, n]
    good = step("MatMul", [_x(rng, a), _x(rng, b)], {})
    bad = step("MatMul", [_x(rng, [m, k]), _x(rng, [k + 1, n])], {}, outs=[io([m, n])])
    return [good, bad]


def _layer_norm(rng: random.Random) -> list[dict]:
    shape = [rng.randint(1, 3) for _ in range(rng.randint(1, 4))]
    axis = rng.randint(-len(shape), len(shape) - 1)
    norm = shape[axis % len(shape):]
    ins = [_x(rng, shape), _x(rng, norm)] + ([_x(rng, norm)] if rng.random() < 0.5 else [])
    return [step("LayerNormalization", ins, {"axis": axis, "epsilon": rng.choice([1e-5, 1e-3])}, opset=17,
                 n_out=rng.randint(1, 3))]


def _instance_norm(rng: random.Random) -> list[dict]:
    spatial = [rng.randint(2, 3)] + [rng.randint(1, 3) for _ in range(rng.randint(0, 1))]
    c = rng.randint(1, 3)
    return [step("InstanceNormalization", [_x(rng, [rng.randint(1, 2), c] + spatial), _x(rng, [c]), _x(rng, [c])],
                 {"epsilon": rng.choice([1e-5, 1e-2])})]


def _resize(rng: random.Random) -> list[dict]:
    """One Resize in one of the forms the unit tests draw: scales (opset 13), sizes (opset 11), antialiased
    sizes and keep_aspect_ratio_policy (opset 18), tf_crop_and_resize."""
    form = rng.choice(["scales", "sizes", "antialias", "crop", "aspect"])
    x = [1, rng.randint(1, 2), rng.randint(1, 5), rng.randint(1, 5)]
    empty = io([0], "float32", [], index=1, onnx_only=True)
    if form == "scales":
        mode = rng.choice(["nearest", "linear", "cubic"])
        scales = [1.0, 1.0] + [rng.choice([0.5, 0.75, 1.0, 1.5, 2.0, 3.0]) for _ in range(2)]
        attrs = {"mode": mode, "coordinate_transformation_mode": rng.choice(_COORDS)}
        if mode == "nearest":
            attrs["nearest_mode"] = rng.choice(_NEAREST)
        if mode == "cubic":
            attrs.update(cubic_coeff_a=rng.choice([-0.75, -0.5]), exclude_outside=rng.randint(0, 1))
        return [step("Resize", [_x(rng, x), empty, io([4], "float32", scales, index=2, onnx_only=True)],
                     {**attrs, "scales": scales}, onnx_attrs=attrs)]
    if form == "sizes":
        attrs = {"mode": rng.choice(["nearest", "linear"]), "coordinate_transformation_mode": rng.choice(_COORDS)}
        sizes = [1, x[1], rng.randint(1, 8), rng.randint(1, 8)]
        return [step("Resize", [_x(rng, x), empty, io([0], "float32", [], index=2, onnx_only=True),
                                io([4], "int64", sizes, index=3, onnx_only=True)],
                     {**attrs, "sizes": sizes}, onnx_attrs=attrs, opset=11)]
    if form == "antialias":
        x = [1, 1, rng.randint(2, 6), rng.randint(2, 6)]
        sizes = [1, 1] + [rng.randint(1, d) for d in x[2:]]
        attrs = {"mode": rng.choice(["linear", "cubic"]), "antialias": 1,
                 "coordinate_transformation_mode": rng.choice(["half_pixel", "pytorch_half_pixel", "asymmetric"])}
        return [step("Resize", [_x(rng, x), io([4], "int64", sizes, index=3, onnx_only=True)],
                     {**attrs, "sizes": sizes}, onnx_attrs=attrs, opset=18)]
    if form == "aspect":
        sizes = [rng.randint(1, 8) for _ in range(2)]
        policy = rng.choice(["not_larger", "not_smaller"])
        scale = (min if policy == "not_larger" else max)(m / n for m, n in zip(sizes, x[2:]))
        if any(scale * n < 0.5 for n in x[2:]):   # an axis resized to nothing: not what the tests draw
            sizes = [2 * n for n in x[2:]]
        attrs = {"mode": rng.choice(["nearest", "linear", "cubic"]), "axes": [2, 3], "keep_aspect_ratio_policy": policy}
        return [step("Resize", [_x(rng, x), io([2], "int64", sizes, index=3, onnx_only=True)],
                     {**attrs, "sizes": sizes}, onnx_attrs=attrs, opset=18)]
    x = [1, 1, rng.randint(1, 5), rng.randint(1, 5)]
    # binary fractions: a coordinate on a rounding tie is one in float32 (onnxruntime's) and float64 alike
    starts = [rng.choice([-0.25, 0.0, 0.25, 0.375]) for _ in range(2)]
    roi = [0.0, 0.0, *starts, 1.0, 1.0, *(st + rng.choice([0.25, 0.5, 0.75, 1.25]) for st in starts)]
    # onnxruntime leaves an axis whose size does not change as it is, whatever its roi: sizes differ
    sizes = [1, 1] + [rng.choice([m for m in range(1, 7) if m != n]) for n in x[2:]]
    attrs = {"mode": rng.choice(["nearest", "linear", "cubic"]), "coordinate_transformation_mode": "tf_crop_and_resize",
             "extrapolation_value": rng.choice([0.0, 10.0])}
    return [step("Resize", [_x(rng, x), io([8], "float32", roi, index=1, onnx_only=True),
                            io([4], "int64", sizes, index=3, onnx_only=True)],
                 {**attrs, "sizes": sizes, "roi": roi}, onnx_attrs=attrs)]


SPATIAL = {
    "Conv": _conv, "ConvTranspose": _conv_transpose, "LRN": _lrn, "BatchNormalization": _batch_norm, "Gemm": _gemm,
    "MatMul": _matmul, "LayerNormalization": _layer_norm, "InstanceNormalization": _instance_norm, "Resize": _resize,
    # two spatial axes and one: a kernel that took only images (N x C x H x W) refused every 1-D pool
    **{op: (lambda r, o=op: _pool(r, o, 2) + _pool(r, o, 1)) for op in ("MaxPool", "AveragePool")},
    **{op: (lambda r, o=op: _global_pool(r, o)) for op in ("GlobalAveragePool", "GlobalMaxPool")},
}
