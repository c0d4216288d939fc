"""Oracle steps for every kernel onnxruntime can run, drawn with the edge attributes its unit tests exercise.

DEVICE-KERNEL-ORACLE judges a probe's oracle steps (checks/strategies/device_probes.py) against onnxruntime.
Verify's models reach few branches of the kernel library (impl/device/kernels): a kernel that cropped a
negative Pad end the wrong way, or mis-broadcast a Gemm bias, passed verify and was caught by the unit tests
alone. ``kernel_steps(rng)`` draws, for every op of ``KERNELS`` but the recurrent ones (device_probes draws an
LSTM and a GRU) and those onnxruntime has no op for (``NOT_ONNX``), one or more steps over the legal spaces
tests/device/test_kernels_ort*.py draw from: negative axes and pads, every Pad mode, Slice's steps and
clamped bounds, broadcasting both ways, keepdims and noop_with_empty_axes, the opset forms the front end
maps to one IR form. It also draws steps onnxruntime refuses whose kernels must refuse too (``REFUSED``):
an index out of range, an LRN over a rank-2 input, a Gemm bias, Conv bias or BatchNormalization scale
that does not fit (the last three refused by numpy inside the kernel: the executor's KernelError, not the
kernel's own check). The kernels' other argument checks each get a malformed node of their own from
:mod:`zcspec.checks.strategies.kernel_steps_refused` (``refused_steps``), which device_probes appends after
every other oracle step, from a generator of its own, so that the steps drawn here stay as they were.

A step gives each input's values (multiples of 1/8, exact in every float type): the element-varying fill
device_probe_run uses otherwise has only positive floats and digits. Where the IR form differs from
ONNX's (the front end moves constant inputs into attributes: Clip's bounds, Pad's pads, Tile's repeats,
Expand's shape, Resize's scales and sizes, the opset-18 reductions' axes), the ONNX operands are
``onnx_only`` inputs and ``onnx_attrs`` are onnxruntime's attributes. Output shapes are ONNX's shape
inference of the one-node model (onnx, a core dependency), never the kernel's.
"""
from __future__ import annotations

import random

import numpy as np
import onnx.defs
from onnx import helper

from zcspec.checks.strategies.kernel_steps_spatial import SPATIAL
from zcspec.checks.strategies.kernel_step_form import F, I, io, omit, step

# Ops of KERNELS with no ONNX op for onnxruntime to run: the device's copies, its no-op and GE's Merge.
NOT_ONNX = {"MemcpyAsync": "a device copy task (its ONNX counterpart Identity is not the kernel's op type)",
            "MemcpyAddrAsync": "a device copy task", "NoOp": "a device no-op", "Merge": "GE's branch join"}
_UNARY = {"Relu": (-3, 3), "Neg": (-3, 3), "Abs": (-3, 3), "Exp": (-3, 3), "Tanh": (-3, 3), "Sigmoid": (-6, 6),
          "LeakyRelu": (-3, 3), "Floor": (-3, 3), "Erf": (-3, 3), "Sqrt": (0, 9), "Log": (0.125, 9),
          "Reciprocal": (0.125, 4)}


def _rank_shape(rng: random.Random, lo: int = 1, hi: int = 4) -> list[int]:
    return [rng.randint(1, 3) for _ in range(rng.randint(lo, hi))]


def _suffix(rng: random.Random, shape: list[int]) -> list[int]:
    """A shape that broadcasts against ``shape``: a suffix of it with some lengths 1."""
    k = rng.randint(0, len(shape))
    return [1 if rng.random() < 0.5 else d for d in shape[len(shape) - k:]]


def _admits_int32(op: str) -> bool:
    """Whether ONNX's schema of ``op`` (its latest version) lets an input be int32."""
    return any("tensor(int32)" in c.allowed_type_strs for c in onnx.defs.get_schema(op).type_constraints)


# Unary ops whose ONNX schema takes floating types only: an int32 input is a node onnxruntime refuses (its
# type constraint), so the device's kernel must refuse it too (a kernel whose float-only check lost Reciprocal
# computed integer reciprocals and passed verify: no step gave it an integer input).
_FLOAT_ONLY = frozenset(op for op in _UNARY if not _admits_int32(op))


def _unary(op: str):
    def draw(rng: random.Random) -> list[dict]:
        shape, (lo, hi) = _rank_shape(rng), _UNARY[op]
        if op in _FLOAT_ONLY and rng.random() < 0.25:
            return [step(op, [io(shape, "int32", I(rng, shape, 0, 9))], {})]
        if op in ("Abs", "Neg") and rng.random() < 0.4:
            return [step(op, [io(shape, "int32", I(rng, shape, -9, 9))], {})]
        x = io(shape, "float32", F(rng, shape, lo, hi))
        if op == "LeakyRelu":
            return [step(op, [x], omit(rng, {"alpha": rng.choice([0.01, 0.125, 0.5])}, alpha=0.01))]
        if op == "Reciprocal":
            x["values"] = [v if rng.random() < 0.5 else -v for v in x["values"]]
        return [step(op, [x], {})]
    return draw


def _activation(rng: random.Random, op: str) -> list[dict]:
    shape = _rank_shape(rng)
    x = io(shape, "float32", F(rng, shape, -6, 6))
    if op == "HardSigmoid":
        attrs = {"alpha": rng.choice([0.125, 0.25]), "beta": rng.choice([0.0, 0.5, 0.75])} if rng.random() < 0.6 else {}
        return [step(op, [x], attrs, opset=6)]
    if op == "HardSwish":
        return [step(op, [x], {}, opset=14)]
    mode = rng.choice([None, "none", "tanh"])
    return [step(op, [x], {} if mode is None else {"approximate": mode}, opset=20)]


def _binary(rng: random.Random, op: str) -> list[dict]:
    shape = _rank_shape(rng)
    other = _suffix(rng, shape)
    if rng.random() < 0.35:   # integers: Div truncates toward zero, divisors of either sign
        a, b = io(shape, "int32", I(rng, shape, -20, 20)), io(other, "int32", I(rng, other, 1, 5))
        b["values"] = [v if rng.random() < 0.5 else -v for v in b["values"]]
    else:
        a, b = io(shape, "float32", F(rng, shape)), io(other, "float32", F(rng, other, 0.5, 3))
    return [step(op, [b, a] if op != "Div" and rng.random() < 0.5 else [a, b], {})]   # Div: no zero divisor


def _pow(rng: random.Random) -> list[dict]:
    shape = _rank_shape(rng)
    if rng.random() < 0.5:
        other = _suffix(rng, shape)
        return [step("Pow", [io(shape, "float32", F(rng, shape, 0.125, 3)), io(other, "float32", F(rng, other, -2, 3))],
                     {})]
    if rng.random() < 0.5:
        return [step("Pow", [io(shape, "float32", F(rng, shape)), io([], "int64", [rng.randint(0, 3)])], {}, opset=15)]
    return [step("Pow", [io(shape, "int32", I(rng, shape, -5, 5)), io([], "int32", [rng.randint(0, 4)])], {},
                 opset=15)]


def _variadic(rng: random.Random, op: str) -> list[dict]:
    shape = _rank_shape(rng)
    dtype = "int32" if op in ("Max", "Min") and rng.random() < 0.3 else "float32"   # onnxruntime: Sum of floats
    shapes = [shape] + [_suffix(rng, shape) for _ in range(rng.randint(0, 3))]
    rng.shuffle(shapes)   # the widest input need not come first
    return [step(op, [io(s, dtype, F(rng, s) if dtype == "float32" else I(rng, s, -9, 9)) for s in shapes], {})]


_CASTS = [("float32", "int32"), ("int32", "float32"), ("float32", "float16"), ("float32", "bool"), ("bool", "float32"),
          ("int64", "int32"), ("int32", "int64"), ("float32", "float64"), ("float16", "float32")]


def _cast(rng: random.Random) -> list[dict]:
    src, dst = rng.choice(_CASTS)
    shape = _rank_shape(rng)
    values = (I(rng, shape, 0, 1) if src == "bool" else F(rng, shape, -100, 100) if src.startswith("float")
              else I(rng, shape, -100, 100))
    return [step("Cast", [io(shape, src, values)], {"to": helper.np_dtype_to_tensor_dtype(np.dtype(dst))})]


def _compare(rng: random.Random, op: str) -> list[dict]:
    shape = _rank_shape(rng)
    other = _suffix(rng, shape)
    if op in ("And", "Or"):
        ins = [io(shape, "bool", I(rng, shape, 0, 1)), io(other, "bool", I(rng, other, 0, 1))]
    else:   # values from a small set, so that ties happen
        dtype = rng.choice(["float32", "int32"])
        ins = [io(s, dtype, [v / 2 if dtype == "float32" else v for v in I(rng, s, -2, 2)]) for s in (shape, other)]
    rng.shuffle(ins)
    return [step(op, ins, {})]


def _not(rng: random.Random) -> list[dict]:
    shape = _rank_shape(rng)
    return [step("Not", [io(shape, "bool", I(rng, shape, 0, 1))], {})]


def _where(rng: random.Random) -> list[dict]:
    shape = _rank_shape(rng)
    dtype = rng.choice(["float32", "int64"])
    c, y = _suffix(rng, shape), _suffix(rng, shape)
    xs = [io(shape, dtype, I(rng, shape, -9, 9)), io(y, dtype, I(rng, y, -9, 9))]
    rng.shuffle(xs)
    return [step("Where", [io(c, "bool", I(rng, c, 0, 1)), *xs], {}, opset=16)]


def _clip(rng: random.Random) -> list[dict]:
    shape = _rank_shape(rng)
    if rng.random() < 0.3:   # opset 6: the bounds are attributes in ONNX too
        lo = -rng.randint(0, 16) / 8
        return [step("Clip", [io(shape, "float32", F(rng, shape))], {"min": lo, "max": lo + rng.randint(0, 24) / 8},
                     opset=6)]
    dtype = rng.choice(["float32", "int32", "int64"])
    x = io(shape, dtype, I(rng, shape, -50, 50))
    lo, hi = rng.randint(-20, 0), rng.randint(-5, 20)   # hi sometimes below lo: then every value is hi
    which = rng.choice([("min", "max"), ("min",), ("max",), ()])
    ins, attrs = [x], {}
    for index, (k, v) in enumerate((("min", lo), ("max", hi)), start=1):
        if k in which:   # opset 13: a bound is an input in ONNX, an attribute in the IR
            ins.append(io([], dtype, [v], index=index, onnx_only=True))
            attrs[k] = v
    return [step("Clip", ins, attrs, onnx_attrs={})]


def _gather(rng: random.Random) -> list[dict]:
    shape = _rank_shape(rng)
    axis = rng.randint(-len(shape), len(shape) - 1)
    n = shape[axis]
    idx_shape = _rank_shape(rng, 0, 2)
    dtype = rng.choice(["int64", "int32"])
    data = io(shape, "float32", F(rng, shape))
    good = step("Gather", [data, io(idx_shape, dtype, I(rng, idx_shape, -n, n - 1))], {"axis": axis})
    bad_idx = I(rng, idx_shape, -n, n - 1)
    bad_idx[rng.randrange(len(bad_idx))] = rng.choice([n, -n - 1])   # one index out of range: refused
    a = axis % len(shape)
    bad = step("Gather", [data, io(idx_shape, dtype, bad_idx)], {"axis": axis},
               outs=[io(shape[:a] + idx_shape + shape[a + 1:])])
    return [good, bad]


def _expand(rng: random.Random) -> list[dict]:
    out = _rank_shape(rng)
    x = _suffix(rng, out)
    target = out if rng.random() < 0.6 else [1] * len(out)
    return [step("Expand", [io(x, "float32", F(rng, x)), io([len(target)], "int64", target, index=1, onnx_only=True)],
                 {"shape": target}, onnx_attrs={})]


def _tile(rng: random.Random) -> list[dict]:
    shape = _rank_shape(rng, 1, 3)
    reps = [rng.randint(0, 3) for _ in shape]
    return [step("Tile", [io(shape, "float32", F(rng, shape)), io([len(reps)], "int64", reps, index=1, onnx_only=True)],
                 {"repeats": reps}, onnx_attrs={})]


def _pad_one(rng: random.Random, mode: str) -> dict:
    shape = [rng.randint(3, 4) for _ in range(rng.randint(1, 3))]
    lo = 0 if mode == "reflect" else -1   # negative pads crop (reflect's: left out, as in the unit tests)
    pads = [rng.randint(lo, 2) for _ in range(2 * len(shape))]
    if mode != "reflect":
        pads[len(shape) + rng.randrange(len(shape))] = -1   # at least one negative end: a crop at the end
    x = io(shape, "float32", F(rng, shape))
    ins, attrs = [x, io([len(pads)], "int64", pads, index=1, onnx_only=True)], {"pads": pads, "mode": mode}
    if mode == "constant":
        value = rng.randint(-16, 16) / 8
        ins.append(io([], "float32", [value], index=2, onnx_only=True))
        attrs["value"] = value
    if rng.random() < 0.3 and mode != "constant":   # opset 18's axes: some axes only, negative ones
        axes = sorted(rng.sample(range(len(shape)), rng.randint(1, len(shape))))
        axes = [a - len(shape) if rng.random() < 0.5 else a for a in axes]
        sub = [pads[a % len(shape)] for a in axes] + [pads[len(shape) + a % len(shape)] for a in axes]
        ins[1] = io([len(sub)], "int64", sub, index=1, onnx_only=True)
        ins.append(io([len(axes)], "int64", axes, index=3, onnx_only=True))
        attrs.update(pads=sub, axes=axes)
    return step("Pad", ins, attrs, onnx_attrs={"mode": mode}, opset=19 if mode == "wrap" or "axes" in attrs else 13)


def _pad(rng: random.Random) -> list[dict]:
    """A Pad of each mode (all but reflect with a negative end); now and then the opset-2 attribute form."""
    steps = [_pad_one(rng, mode) for mode in ("constant", "reflect", "edge", "wrap")]
    if rng.random() < 0.3:
        x = [rng.randint(1, 3), 3, rng.randint(2, 4)]
        steps.append(step("Pad", [io(x, "float32", F(rng, x))], {"pads": [rng.randint(0, 2) for _ in range(6)],
                                                                  "value": 1.5}, opset=2))
    return steps


def _bound(rng: random.Random, index: int, dim: int) -> int:
    """``index`` in one of its ONNX spellings: plain, negative, or clamped past either end."""
    if index >= dim:
        return dim + rng.randint(0, 3)
    if index < 0:
        return -dim - 1 - rng.randint(0, 3)
    return rng.choice([index, index - dim])


def _slice(rng: random.Random) -> list[dict]:
    shape = _rank_shape(rng)
    axes = rng.sample(range(len(shape)), rng.randint(1, len(shape)))
    starts, ends, steps_ = [], [], []
    for a in axes:
        d, st = shape[a], rng.choice([1, 2, -1, -2, -3])
        i = rng.randint(0, d - 1)
        j = rng.randint(i + 1, d) if st > 0 else rng.randint(-1, i - 1)
        starts.append(_bound(rng, i, d))
        ends.append(_bound(rng, j, d) if rng.random() < 0.8 else (2 ** 63 - 1 if st > 0 else -2 ** 63))
        steps_.append(st)
    axes = [a - len(shape) if rng.random() < 0.4 else a for a in axes]
    x = io(shape, "float32", F(rng, shape))
    out = [step("Slice", [x] + [io([len(axes)], "int64", v) for v in (starts, ends, axes, steps_)], {})]
    if rng.random() < 0.3:
        plain = [(s, e, a % len(shape)) for s, e, a, st in zip(starts, ends, axes, steps_) if st == 1 and abs(e) < 2 ** 62]
        if plain:
            s, e, a = map(list, zip(*sorted(plain, key=lambda t: t[2])))   # onnx infers opset 9's sorted only
            out.append(step("Slice", [x], {"starts": s, "ends": e, "axes": a}, opset=9))
    return out


def _split(rng: random.Random) -> list[dict]:
    shape = [rng.randint(2, 4) for _ in range(rng.randint(1, 3))]
    axis = rng.randrange(len(shape))
    n = rng.randint(1, min(3, shape[axis]))
    cuts = sorted(rng.sample(range(1, shape[axis]), n - 1))
    sizes = list(np.diff([0] + cuts + [shape[axis]]).tolist())
    signed = axis - len(shape) if rng.random() < 0.4 else axis
    x = io(shape, "float32", F(rng, shape))
    form = rng.choice(["input", "attr", "equal"])
    if form == "input":
        return [step("Split", [x, io([n], "int64", sizes)], {"axis": signed}, n_out=n)]
    if form == "attr":
        return [step("Split", [x], {"axis": signed, "split": sizes}, opset=11, n_out=n)]
    n = rng.choice([k for k in (1, 2, 3) if shape[axis] % k == 0])
    return [step("Split", [x], {"axis": signed}, n_out=n)]


def _concat(rng: random.Random) -> list[dict]:
    shape = _rank_shape(rng)
    axis = rng.randrange(len(shape))
    ins = []
    for _ in range(rng.randint(1, 4)):
        s = list(shape)
        s[axis] = rng.randint(1, 3)
        ins.append(io(s, "float32", F(rng, s)))
    return [step("Concat", ins, {"axis": axis - len(shape) if rng.random() < 0.4 else axis})]


def _transpose(rng: random.Random) -> list[dict]:
    shape = _rank_shape(rng)
    perm = list(range(len(shape)))
    rng.shuffle(perm)
    return [step("Transpose", [io(shape, "float32", F(rng, shape))], {"perm": perm} if rng.random() < 0.8 else {})]


def _axes(rng: random.Random, rank: int) -> list[int]:
    picked = rng.sample(range(rank), rng.randint(0, rank))
    return [a - rank if rng.random() < 0.5 else a for a in picked]


def _reduce_sum(rng: random.Random) -> list[dict]:
    shape = _rank_shape(rng)
    axes, keep, noop = _axes(rng, len(shape)), rng.randint(0, 1), rng.randint(0, 1)
    x = io(shape, "float32", F(rng, shape))
    if rng.random() < 0.7:   # opset 13: axes an input the kernel reads (empty, or none at all: all axes)
        ins = [x, io([len(axes)], "int64", axes)] if axes or rng.random() < 0.5 else [x]
        return [step("ReduceSum", ins, omit(rng, {"keepdims": keep, "noop_with_empty_axes": noop}, keepdims=1,
                                             noop_with_empty_axes=0))]
    return [step("ReduceSum", [x], omit(rng, {"keepdims": keep, **({"axes": axes} if axes else {})}, keepdims=1),
                 opset=11)]


def _reduce(rng: random.Random, op: str) -> list[dict]:
    shape = _rank_shape(rng)
    dtype = "int32" if op in ("ReduceMax", "ReduceMin", "ReduceProd") and rng.random() < 0.3 else "float32"
    x = io(shape, dtype, F(rng, shape, 0.5, 1.5) if dtype == "float32" else I(rng, shape, -2, 2))   # no overflow
    axes, keep = _axes(rng, len(shape)), rng.randint(0, 1)
    if rng.random() < 0.5:   # opset 18: axes an input in ONNX, an attribute in the IR
        noop = rng.randint(0, 1)
        ins = [x, io([len(axes)], "int64", axes, index=1, onnx_only=True)] if axes or rng.random() < 0.5 else [x]
        return [step(op, ins, {"axes": axes, "keepdims": keep, "noop_with_empty_axes": noop}, opset=18,
                     onnx_attrs={"keepdims": keep, "noop_with_empty_axes": noop})]
    return [step(op, [x], omit(rng, {"keepdims": keep, **({"axes": axes} if axes else {})}, keepdims=1))]


def _softmax(rng: random.Random) -> list[dict]:
    if rng.random() < 0.6:
        shape = _rank_shape(rng)
        axis = rng.randint(-len(shape), len(shape) - 1)
        return [step("Softmax", [io(shape, "float32", F(rng, shape))], {"axis": axis, "_opset": 13})]
    shape = _rank_shape(rng, 2, 4)   # opset 9: coerced to 2-D at axis (default 1)
    attrs = {"axis": rng.randrange(len(shape))} if rng.random() < 0.5 else {}
    return [step("Softmax", [io(shape, "float32", F(rng, shape))], attrs, opset=9)]


_BUILDERS = {
    **{op: _unary(op) for op in _UNARY},
    **{op: (lambda r, o=op: _activation(r, o)) for op in ("HardSigmoid", "HardSwish", "Gelu")},
    **{op: (lambda r, o=op: _binary(r, o)) for op in ("Add", "Sub", "Mul", "Div")},
    **{op: (lambda r, o=op: _variadic(r, o)) for op in ("Max", "Min", "Sum", "Mean")},
    **{op: (lambda r, o=op: _compare(r, o)) for op in ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual",
                                                        "And", "Or")},
    **{op: (lambda r, o=op: _reduce(r, o)) for op in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                                       "ReduceL2")},
    "Pow": _pow, "Cast": _cast, "Not": _not, "Where": _where, "Clip": _clip, "Gather": _gather, "Expand": _expand,
    "Tile": _tile, "Pad": _pad, "Slice": _slice, "Split": _split, "Concat": _concat, "Transpose": _transpose,
    "ReduceSum": _reduce_sum, "Softmax": _softmax, **SPATIAL,
}
DRAWN_ELSEWHERE = ("LSTM", "GRU")   # device_probes._recurrent draws these (one of each per program)


def covered() -> frozenset[str]:
    """The op types ``kernel_steps`` draws steps for."""
    return frozenset(_BUILDERS)


def kernel_steps(rng: random.Random) -> list[dict]:
    """One or more oracle steps per op of ``covered()``, in op order, drawn with ``rng``."""
    return [s for op in sorted(_BUILDERS) for s in _BUILDERS[op](rng)]
