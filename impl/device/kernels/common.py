"""The kernel registry and the helpers every kernel family shares.

A kernel is ``fn(task, ins, outs) -> tuple of arrays``: ``ins`` are read-only
views of its input tensors in device memory, ``outs`` views of its outputs
(read only as well: only atomic kernels read them, to accumulate, and they are registered with
``accumulates=True`` so that the device records those reads). It returns one
array per output slot; the device writes them after the kernel returns, so a
kernel that fails (``KernelError``) has written nothing. ``task.attr(name,
default)`` gives the node's attributes as the IR keeps them (the ONNX front end
keeps the source model's attribute form, so kernels accept the opset-9 forms of
the light models as well as the newer ones).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from zcspec.impl.device.errors import KernelError
from zcspec.impl.platform.kernel_ops import KERNEL_OPS, VALUE_INPUTS

Kernel = Callable[..., tuple]
KERNELS: dict[str, Kernel] = {}
# Op types whose kernel reads its outputs (accumulates into them): the device records those reads.
ACCUMULATES: set[str] = set()


def kernel(*op_types: str, accumulates: bool = False):
    """Register the decorated function as the kernel of every op type named.

    Each op type must be declared in ``zcspec.impl.platform.kernel_ops.KERNEL_OPS`` (what the
    model-file loader accepts), and have one kernel only. ``accumulates``: the kernel reads its
    output slots (``out + ...``), so a launch of it reads the output ranges before writing them.
    """

    def register(fn: Kernel) -> Kernel:
        for op in op_types:
            if op not in KERNEL_OPS:
                raise ValueError(f"kernel for op type {op!r}, which zcspec.impl.platform.kernel_ops does not declare")
            if op in KERNELS:
                raise ValueError(f"two kernels for op type {op!r}")
            KERNELS[op] = fn
            if accumulates:
                ACCUMULATES.add(op)
        return fn

    return register


def fail(task, why: str) -> KernelError:
    """The error to raise when ``task`` cannot run; use as ``raise fail(task, ...)``."""
    return KernelError(task.name, task.op_type, why)


# numpy's IEEE floats. ml_dtypes' bfloat16 and 8-bit floats are not (one of them even reports kind "f"):
# kernels computing in numpy float arithmetic take these only (zcspec.impl.compiler.op_limits.KERNEL_FLOATS).
_IEEE_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def need_float(task, *arrays) -> None:
    for a in arrays:
        if a.dtype not in _IEEE_FLOATS:
            raise fail(task, f"needs floating-point tensors (float16, float32 or float64), got {a.dtype}")


def ints(task, key: str, default=None, *, n: int | None = None) -> tuple[int, ...] | None:
    """An integer-list attribute (or ``default``), checked to have ``n`` entries when given."""
    value = task.attr(key, default)
    if value is None:
        return None
    value = tuple(int(v) for v in (value if isinstance(value, (tuple, list)) else (value,)))
    if n is not None and len(value) != n:
        raise fail(task, f"attribute {key!r}={value!r} needs {n} entries")
    return value


def axis(task, key: str, default: int, rank: int) -> int:
    a = int(task.attr(key, default))
    if not -rank <= a < max(rank, 1):
        raise fail(task, f"attribute {key}={a} is out of range for rank {rank}")
    return a % max(rank, 1)


def input_or_attr(task, ins, index: int, key: str, default=None):
    """An ONNX parameter that moved from an attribute to input ``index`` in newer opsets."""
    if len(ins) > index:
        return tuple(int(v) for v in np.asarray(ins[index]).reshape(-1))
    return ints(task, key, default)


def _value_names(task, ins) -> tuple[str, ...]:
    names = tuple(task.attr(VALUE_INPUTS, ()) or ())
    if len(names) > len(ins) or len(set(names)) != len(names):
        raise fail(task, f"{VALUE_INPUTS}={names!r} names {len(names)} run-time operands, the task has {len(ins)} inputs")
    return names


def data_inputs(task, ins) -> tuple:
    """The inputs without the run-time value operands the node's ``_value_inputs`` names (its last inputs)."""
    names = _value_names(task, ins)
    return tuple(ins[:len(ins) - len(names)])


def value_operand(task, ins, key: str, default=None):
    """An operand that decides only values (Clip's ``min``, Pad's ``value``, ...): the tensor the kernel
    reads at run time when ``_value_inputs`` names ``key`` (an array), else the attribute ``key``
    (fixed at compile time), else ``default``."""
    names = _value_names(task, ins)
    if key in names:
        return np.asarray(ins[len(ins) - len(names) + names.index(key)])
    return task.attr(key, default)


def scalar_operand(task, ins, key: str, dtype, default=None):
    """A scalar value operand (``value_operand``) as a numpy scalar of ``dtype``; None when absent. A run-time
    tensor with other than one element is a KernelError: ONNX makes these operands scalars."""
    value = value_operand(task, ins, key, default)
    if value is None:
        return None
    value = np.asarray(value)
    if value.size != 1:
        raise fail(task, f"operand {key!r} must be a scalar, got a tensor of shape {list(value.shape)}")
    return value.reshape(()).astype(dtype)
