"""Oracle steps onnxruntime refuses, one per argument check of the kernels (a ``raise fail(task, ...)`` of
impl/device/kernels) an ONNX node can reach: DEVICE-KERNEL-ORACLE holds the device to refuse each of them too.

verify's models and kernel_steps' legal spaces reached few of the kernels' own refusals: a Pad check whose
``or``s had become ``and``s, so that malformed pads ran, passed verify (the unit tests alone caught it).
``refused_steps(rng)`` draws one malformed node per check (two where a check has two conditions, or guards
several ops), each refused by onnxruntime (its schema, its shape inference or its kernel), or run by it into
outputs of other shapes. The spec holds the device to onnxruntime, never to our kernels: a check that refuses
a node onnxruntime runs (an axis named twice in a reduction, LSTM's input_forget or other activations) is not
drawn here. device_probes appends these steps to every program, after its other oracle steps.

Each step's ``outs`` are the shapes the kernel computes once the check is gone (numpy's reading of the same
operands: a wrapped axis, the leading pads, np.tile's promotion), not ONNX's (it has none): a kernel that lost
its check then runs into fitting output slots and DEVICE-KERNEL-ORACLE reports the run, where slots of other
shapes would have the executor refuse its results and hide the loss. Some losses stay hidden all the same:
without the check numpy refuses the operands, which the executor turns into the KernelError the spec wants
(Tile's negative count, a Gemm whose inner lengths differ, an LRN of size 0, a window longer than its input).
"""
from __future__ import annotations

import random

import numpy as np

from zcspec.checks.strategies.kernel_step_form import F, I, io
from zcspec.checks.strategies.kernel_steps_refused_nn import CHECKS_NN, floats, refused


def _shape(rng: random.Random, lo: int = 1, hi: int = 3) -> list[int]:
    return [rng.randint(2, 3) for _ in range(rng.randint(lo, hi))]


def _apart(rng: random.Random, shape: list[int]) -> tuple[list[int], list[int]]:
    """Two shapes that do not broadcast: ``shape`` twice, one axis of two lengths other than 1."""
    a, b = list(shape), list(shape)
    i = rng.randrange(len(shape))
    a[i], b[i] = rng.sample([2, 3, 4], 2)
    return a, b


def _out_of_range(rng: random.Random, rank: int) -> int:
    """An axis just outside [-rank, rank): without its check a kernel wraps it onto an axis and runs."""
    return rng.choice([rank, -rank - 1])


def _operand(values: list, index: int, dtype: str = "int64") -> dict:
    """An ONNX operand the IR keeps as an attribute (onnxruntime's alone)."""
    return io([len(values)], dtype, values, index=index, onnx_only=True)


def _padded(shape: list[int], pads: list[int]) -> list[int]:
    return [d + pads[i] + pads[i + len(shape)] for i, d in enumerate(shape)]


# Each builder's comment names the kernel function whose check it reaches (in the files its section names);
# "numpy too": without that check numpy refuses the operands, and the executor's KernelError hides the loss.

# -- activations, elementwise, comparisons (activation.py, elementwise.py, compare.py) ----------

def _gelu_mode(rng):   # gelu: approximate neither 'none' nor 'tanh'
    shape = _shape(rng)
    return refused("Gelu", [floats(rng, shape)], {"approximate": rng.choice(["erf", "fast", "Tanh"])}, [shape],
                   opset=20)


def _pow_apart(rng):   # pow_: operands that do not broadcast
    a, b = _apart(rng, _shape(rng))
    return refused("Pow", [io(a, "float32", F(rng, a, 0.5, 2)), floats(rng, b)], {}, [a])


def _where_apart(rng):   # where: operands that do not broadcast
    a, b = _apart(rng, _shape(rng))
    return refused("Where", [io(a, "bool", I(rng, a, 0, 1)), floats(rng, a), floats(rng, b)], {}, [a], opset=16)


def _variadic_apart(rng):   # variadic: Max/Min/Sum/Mean operands that do not broadcast
    a, b = _apart(rng, _shape(rng))
    return refused(rng.choice(["Max", "Min", "Sum", "Mean"]), [floats(rng, a), floats(rng, b)], {}, [a])


def _logic_not_bool(rng):   # _need_bool: And/Or/Not of int32 or float32 tensors
    shape, dtype, op = _shape(rng), rng.choice(["int32", "float32"]), rng.choice(["And", "Or", "Not"])
    ins = [floats(rng, shape, dtype) for _ in range(1 if op == "Not" else 2)]
    return refused(op, ins, {}, [io(shape, "bool")])


def _compare_types(rng):   # compare: a comparison of two element types
    shape = _shape(rng)
    ins = [floats(rng, shape, "float32"), floats(rng, shape, "int32")]
    rng.shuffle(ins)
    op = rng.choice(["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"])
    return refused(op, ins, {}, [io(shape, "bool")])


def _compare_apart(rng):   # compare: operands that do not broadcast
    a, b = _apart(rng, _shape(rng))
    return refused(rng.choice(["Equal", "Greater", "LessOrEqual"]), [floats(rng, a), floats(rng, b)], {},
                   [io(a, "bool")])


# -- indexing (indexing.py, common.py) ----------------------------------------------------------

def _gather(rng, dtype: str, bad_axis: bool) -> dict:
    """gather's indices of ``dtype`` (a float type: refused), along an axis in range or (``bad_axis``) one
    just outside it (common.axis)."""
    shape = _shape(rng)
    axis = _out_of_range(rng, len(shape)) if bad_axis else rng.randrange(len(shape))
    a, idx = axis % len(shape), [rng.randint(1, 3)]
    return refused("Gather", [floats(rng, shape), io(idx, dtype, I(rng, idx, 0, shape[a] - 1))], {"axis": axis},
                   [shape[:a] + idx + shape[a + 1:]])


def _tile_count(rng):   # common.ints(n=): repeats one too many or too few for the rank
    shape = _shape(rng)
    reps = [rng.randint(1, 2) for _ in range(len(shape) + (1 if len(shape) == 1 or rng.random() < 0.5 else -1))]
    return refused("Tile", [floats(rng, shape), _operand(reps, 1)], {"repeats": reps},
                   [list(np.tile(np.zeros(shape), reps).shape)], onnx_attrs={})


def _tile_negative(rng):   # tile: a negative repeat count (numpy too)
    shape = _shape(rng)
    reps = [rng.randint(1, 2) for _ in shape]
    reps[rng.randrange(len(reps))] = -rng.randint(1, 2)
    return refused("Tile", [floats(rng, shape), _operand(reps, 1)], {"repeats": reps}, [shape], onnx_attrs={})


def _pad(rng, shape: list[int], pads: list[int], mode: str, *extra: dict, x: dict | None = None,
         value: list | None = None, opset: int = 13) -> dict:
    """A Pad of ``mode`` (``extra`` its ONNX operands after pads) whose ``outs`` read ``pads`` as begins then
    ends (any further entries left out)."""
    attrs = {"pads": pads, "mode": mode, **({} if value is None else {"value": value})}
    return refused("Pad", [x or floats(rng, shape), _operand(pads, 1), *extra], attrs, [_padded(shape, pads)],
                   onnx_attrs={"mode": mode}, opset=opset)


def _pad_long(rng):   # _full_pads: pads of 2 * rank + 2 entries
    shape = _shape(rng)
    return _pad(rng, shape, [rng.randint(0, 2) for _ in range(2 * len(shape) + 2)], "constant")


def _pad_axes(rng):   # _full_pads: an entry of axes (opset 18) out of range (numpy too)
    shape = _shape(rng)
    axis, pads = _out_of_range(rng, len(shape)), [rng.randint(0, 2), rng.randint(0, 2)]
    return refused("Pad", [floats(rng, shape), _operand(pads, 1), _operand([axis], 3)],
                   {"pads": pads, "axes": [axis], "mode": "edge"}, [shape], onnx_attrs={"mode": "edge"}, opset=18)


def _pad_mode(rng):   # pad: a mode ONNX does not define
    shape = _shape(rng)
    return _pad(rng, shape, [rng.randint(0, 1) for _ in range(2 * len(shape))], rng.choice(["symmetric", "mirror",
                                                                                             "Reflect"]))


def _pad_reflect(rng):   # pad: reflect padding as long as the axis or longer (onnxruntime: below its length)
    shape = _shape(rng)
    a = rng.randrange(len(shape))
    shape[a] = rng.randint(1, 3)
    pads = [rng.randint(0, 1) if d > 1 else 0 for d in shape * 2]
    pads[a + rng.choice([0, len(shape)])] = shape[a] + rng.randint(0, 1)
    return _pad(rng, shape, pads, "reflect")


def _pad_empty(rng):   # pad: edge or wrap padding of an empty axis (numpy too)
    shape = _shape(rng)
    a = rng.randrange(len(shape))
    shape[a] = 0
    pads = [0] * (2 * len(shape))
    pads[a + rng.choice([0, len(shape)])] = 1
    return _pad(rng, shape, pads, rng.choice(["edge", "wrap"]), x=io(shape, "float32", []), opset=19)


def _value_not_scalar(rng):   # common.scalar_operand: Pad's value or a Clip bound of two elements (numpy too)
    shape, value = _shape(rng), F(rng, [2])
    if rng.random() < 0.5:
        pads = [rng.randint(0, 1) for _ in range(2 * len(shape))]
        return _pad(rng, shape, pads, "constant", _operand(value, 2, "float32"), value=value)
    bound, index = rng.choice([("min", 1), ("max", 2)])
    return refused("Clip", [floats(rng, shape), _operand(value, index, "float32")], {bound: value}, [shape],
                   onnx_attrs={})


# -- shape (shape.py, common.py, reduce.py) -----------------------------------------------------

def _softmax_axis(rng):   # common.axis: Softmax's axis out of range
    shape = _shape(rng)
    return refused("Softmax", [floats(rng, shape)], {"axis": _out_of_range(rng, len(shape)), "_opset": 13}, [shape])


def _concat_axis(rng):   # common.axis: Concat's axis out of range
    shape, n = _shape(rng), rng.randint(2, 3)
    axis = _out_of_range(rng, len(shape))
    out = list(shape)
    out[axis % len(shape)] *= n
    return refused("Concat", [floats(rng, shape) for _ in range(n)], {"axis": axis}, [out])


def _concat_apart(rng):   # concat: inputs whose other axes differ
    shape = _shape(rng, 2, 3)
    axis = rng.randrange(len(shape))
    other = list(shape)
    other[rng.choice([i for i in range(len(shape)) if i != axis])] += 1
    out = list(shape)
    out[axis] *= 2
    return refused("Concat", [floats(rng, shape), floats(rng, other)], {"axis": axis}, [out])


def _transpose_perm(rng):   # transpose: a perm that is not a permutation (a negative entry, or one twice)
    shape = _shape(rng, 2, 3)
    perm = rng.sample(range(len(shape)), len(shape))
    if rng.random() < 0.5:
        perm[rng.randrange(len(perm))] -= len(perm)   # numpy takes it: without the check the kernel runs
    else:
        perm[0] = perm[1]
    return refused("Transpose", [floats(rng, shape)], {"perm": perm}, [[shape[p] for p in perm]])


def _split_sum(rng):   # split: sizes that do not sum to the axis
    shape = [rng.randint(3, 4) for _ in range(rng.randint(1, 3))]
    a = rng.randrange(len(shape))
    sizes = [1, shape[a] - 1 + rng.choice([-1, 1])]
    outs = [shape[:a] + [p] + shape[a + 1:] for p in (1, shape[a] - 1)]   # np.split: the last part the rest
    return refused("Split", [floats(rng, shape), io([2], "int64", sizes)], {"axis": a}, outs)


def _slice(rng, shape: list[int], starts, ends, axes, steps, out) -> dict:
    ins = [floats(rng, shape)] + [io([len(v)], "int64", v) for v in (starts, ends, axes, steps) if v is not None]
    return refused("Slice", ins, {}, [out])


def _slice_lengths(rng):   # slice_: starts and ends of different lengths
    shape = _shape(rng, 2, 3)
    return _slice(rng, shape, [0] * len(shape), [1] * (len(shape) - 1), None, None, [1] * (len(shape) - 1) + shape[-1:])


def _slice_axis(rng):   # slice_: an axis out of range (numpy too)
    shape = _shape(rng)
    axis = _out_of_range(rng, len(shape))
    return _slice(rng, shape, [0], [1], [axis], None, [1 if i == axis % len(shape) else d for i, d in enumerate(shape)])


def _slice_step(rng):   # slice_: a step of zero (numpy too)
    shape = _shape(rng)
    a = rng.randrange(len(shape))
    return _slice(rng, shape, [0], [shape[a]], [a], [0], shape)


def _reduce_sum_axis(rng):   # reduce_sum: an axis out of range
    shape = _shape(rng)
    return refused("ReduceSum", [floats(rng, shape), io([1], "int64", [_out_of_range(rng, len(shape))])],
                   {"keepdims": 1}, [[1] * len(shape)])


def _reduce_sum_out(rng):   # reduce_sum: an output slot of the other keepdims' shape (onnxruntime's differs)
    shape = _shape(rng)
    a = rng.randrange(len(shape))
    return refused("ReduceSum", [floats(rng, shape), io([1], "int64", [a])], {"keepdims": 0},
                   [[1 if i == a else d for i, d in enumerate(shape)]])


def _reduce_axis(rng):   # reduce (reduce_axes): an axis out of range
    shape = _shape(rng)
    op = rng.choice(["ReduceMax", "ReduceMin", "ReduceMean", "ReduceProd", "ReduceL2"])
    return refused(op, [floats(rng, shape)], {"axes": [_out_of_range(rng, len(shape))], "keepdims": 1},
                   [[1] * len(shape)])


CHECKS = {
    "Gelu approximate": _gelu_mode, "Pow broadcast": _pow_apart, "Where broadcast": _where_apart,
    "variadic broadcast": _variadic_apart, "logic of non-bool": _logic_not_bool,
    "comparison of two types": _compare_types, "comparison broadcast": _compare_apart,
    "Gather float indices": lambda rng: _gather(rng, "float32", False),
    "Gather axis": lambda rng: _gather(rng, "int64", True), "Tile repeats count": _tile_count,
    "Tile negative repeat": _tile_negative, "Pad pads length": _pad_long, "Pad axes": _pad_axes,
    "Pad mode": _pad_mode, "Pad reflect length": _pad_reflect, "Pad of empty": _pad_empty,
    "value not scalar": _value_not_scalar, "Softmax axis": _softmax_axis, "Concat axis": _concat_axis,
    "Concat shapes": _concat_apart, "Transpose perm": _transpose_perm, "Split sizes": _split_sum,
    "Slice lengths": _slice_lengths, "Slice axis": _slice_axis, "Slice step": _slice_step,
    "ReduceSum axis": _reduce_sum_axis, "ReduceSum out": _reduce_sum_out, "reduce axis": _reduce_axis,
    **CHECKS_NN,
}


def refused_steps(rng: random.Random) -> list[dict]:
    """One malformed oracle step per entry of ``CHECKS``, in its order, drawn with ``rng``."""
    return [draw(rng) for draw in CHECKS.values()]
