"""Reductions at their edges, as the dtype sweep (checks/dtype_sweep_cases.py) found them: an integer
ReduceMean truncates toward zero as onnxruntime and ONNX's reference do, and ReduceMax/ReduceMin run on
bfloat16 (whose numpy kind is not "f": the empty-set identity must not ask numpy's iinfo of it)."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.impl.device import Device
from zcspec.impl.platform import dtypes
from tests.helpers.kernel_harness import device_run

DEV = Device("ascend910b")


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_an_integer_mean_truncates_toward_zero(dtype):
    x = np.array([[-1, -2], [-3, -3], [1, 2], [-4, 4]], dtype)
    (y,) = device_run(DEV, "ReduceMean", [x], [np.zeros((4, 1), dtype)], axes=(1,), keepdims=1)
    assert y.reshape(-1).tolist() == [-1, -3, 1, 0]   # -1.5 -> -1, -3 -> -3, 1.5 -> 1, 0 -> 0


@pytest.mark.parametrize("op, want", [("ReduceMax", [2.0, 4.0]), ("ReduceMin", [-1.0, 3.0])])
def test_max_and_min_run_on_bfloat16(op, want):
    bf16 = dtypes.numpy_dtype("bfloat16")
    x = np.array([[-1, 2], [3, 4]], np.float32).astype(bf16)
    (y,) = device_run(DEV, op, [x], [np.zeros((2,), bf16)], axes=(1,), keepdims=0)
    assert y.astype(np.float32).tolist() == want
