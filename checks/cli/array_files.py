"""Tensors as files every numpy reads: ``zcspec run``'s ``--output-dir`` and ``--input``.

A ``.npy`` header names its element type by numpy's type string, and numpy has none for the types
ml_dtypes adds (bfloat16, the float8s, int4/uint4, float4 and the other sub-byte types): ``np.save``
writes one anyway (``'<f1'`` for float8e4m3fn, ``'<V2'`` for bfloat16) and ``np.load`` cannot read it
back ("descr is not a valid dtype descriptor"). Such a tensor is written as its raw items: an
unsigned-integer array of the same item size (one item per element, as numpy holds them, so an int4
element is one byte holding its value), beside a ``<name>.json`` that names the ONNX type::

    {"onnx_type": "float8e4m3fn", "stored_as": "uint8", "shape": [2, 3]}

``ml_dtypes`` users get the values back with ``np.load(f).view(ml_dtypes.float8_e4m3fn)``. A tensor
numpy can name is a plain ``.npy`` and no JSON is written. ``read_input`` takes either form for an input
of such a type: the raw items (an unsigned array of the item size), or an array of the type itself.
"""
from __future__ import annotations

import json
import os

import numpy as np

from zcspec.impl.platform import dtypes


def npy_readable(dt: np.dtype) -> bool:
    """Whether ``np.load`` reads back an ``.npy`` of element type ``dt``."""
    try:
        return np.lib.format.descr_to_dtype(np.lib.format.dtype_to_descr(dt)) == dt
    except (ValueError, TypeError):
        return False


def raw_items_dtype(dt: np.dtype) -> np.dtype:
    """The unsigned integer type with ``dt``'s item size: how a type numpy cannot name is stored."""
    return np.dtype(f"<u{dt.itemsize}")


def file_stem(folder: str, name: str) -> str:
    """``folder/<name with / replaced by _>``: where tensor ``name``'s files go."""
    return os.path.join(folder, name.replace("/", "_"))


def write_output(folder: str, name: str, array: np.ndarray, onnx_type: str) -> list[str]:
    """Write ``array`` (the tensor ``name`` of ONNX type ``onnx_type``) into ``folder``; the paths written."""
    stem = file_stem(folder, name)
    if npy_readable(array.dtype):
        np.save(stem + ".npy", array, allow_pickle=False)
        return [stem + ".npy"]
    stored = raw_items_dtype(array.dtype)
    np.save(stem + ".npy", np.ascontiguousarray(array).view(stored), allow_pickle=False)
    with open(stem + ".json", "w") as f:
        json.dump({"onnx_type": onnx_type, "stored_as": stored.name, "shape": list(array.shape)}, f)
        f.write("\n")
    return [stem + ".npy", stem + ".json"]


def as_input(array: np.ndarray, onnx_type: str) -> np.ndarray | None:
    """``array`` as the input's element type: itself when it has it; its raw items reinterpreted when
    the type is one numpy cannot name and ``array`` holds unsigned items of its size; else None."""
    want = np.dtype(dtypes.numpy_dtype(onnx_type))
    if array.dtype == want:
        return array
    if not npy_readable(want) and array.dtype == raw_items_dtype(want):
        return np.ascontiguousarray(array).view(want)
    return None
