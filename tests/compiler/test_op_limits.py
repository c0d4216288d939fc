"""The op table's unsupported list (impl/compiler/op_limits.py) is well formed and agrees with the device:
the element types it lists are exactly the ones the kernels and the device's operands refuse."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.impl.compiler import op_limits, ops
from zcspec.impl.device import Device, KernelError, Slot
from zcspec.impl.device.kernels.common import need_float
from zcspec.impl.platform import dtypes
from tests.helpers.kernel_harness import device_run

DEV = Device("ascend910b")


def test_every_listed_op_is_claimed_and_every_entry_is_distinct():
    assert set(op_limits.UNSUPPORTED) - {op_limits.ANY_OP} <= set(ops.OPS)
    for op in op_limits.UNSUPPORTED:
        keys = [e.key for e in op_limits.entries(op)]
        assert len(keys) == len(set(keys)), op
        assert all(e.feature and e.why for e in op_limits.entries(op))


def test_the_sub_byte_types_are_those_the_device_stores_packed():
    packed = {d for d in dtypes.DTYPES if d != "string" and Slot("in", (8,), d).packed}
    assert packed == op_limits.SUB_BYTE
    assert all(Slot("in", (8,), d).nbytes < 8 for d in packed)


def test_only_the_packed_ops_take_sub_byte_types():
    for op in sorted(ops.OPS):
        hit = op_limits.check(op, attributes={}, dtypes=["uint4"], opset=25)
        assert (hit is None) == (op in op_limits.PACKED_OPS), op


def test_the_exotic_floats_are_those_need_float_refuses():
    class Task:
        name, op_type = "t", "Exp"

    floats = [d for d in dtypes.DTYPES if "float" in d and d not in op_limits.SUB_BYTE]
    refused = set()
    for d in floats:
        try:
            need_float(Task, np.zeros(2, dtypes.numpy_dtype(d)))
        except KernelError:
            refused.add(d)
    assert refused == op_limits.EXOTIC_FLOATS


_X = np.ones((1, 2, 3, 3), np.float32)
# op -> (inputs, output shape, attributes): one valid call of each float-only kernel the table lists.
_FLOAT_ONLY = {
    "Exp": ([_X], _X.shape, {}), "Sqrt": ([_X], _X.shape, {}), "Tanh": ([_X], _X.shape, {}),
    "Sigmoid": ([_X], _X.shape, {}), "LeakyRelu": ([_X], _X.shape, {}), "Softmax": ([_X], _X.shape, {}),
    "LRN": ([_X], _X.shape, {"size": 3}), "Mean": ([_X, _X], _X.shape, {}),
    "GlobalAveragePool": ([_X], (1, 2, 1, 1), {}),
    "MaxPool": ([_X], (1, 2, 2, 2), {"kernel_shape": (2, 2)}),
    "AveragePool": ([_X], (1, 2, 2, 2), {"kernel_shape": (2, 2)}),
    "Conv": ([_X, np.ones((2, 2, 2, 2), np.float32)], (1, 2, 2, 2), {}),
    "BatchNormalization": ([_X] + [np.ones(2, np.float32)] * 4, _X.shape, {}),
    "Log": ([_X], _X.shape, {}), "Reciprocal": ([_X], _X.shape, {}), "Floor": ([_X], _X.shape, {}),
    "GlobalMaxPool": ([_X], (1, 2, 1, 1), {}),
    "ConvTranspose": ([_X, np.ones((2, 2, 2, 2), np.float32)], (1, 2, 4, 4), {}),
    "Erf": ([_X], _X.shape, {}), "Gelu": ([_X], _X.shape, {}), "HardSigmoid": ([_X], _X.shape, {}),
    "HardSwish": ([_X], _X.shape, {}),
    "InstanceNormalization": ([_X, np.ones(2, np.float32), np.ones(2, np.float32)], _X.shape, {}),
    "LayerNormalization": ([_X, np.ones(3, np.float32), np.ones(3, np.float32)], _X.shape, {}),
    # recurrent ops: several outputs (Y, Y_h), so a list of shapes
    "GRU": ([np.ones((2, 1, 3), np.float32), np.ones((1, 6, 3), np.float32), np.ones((1, 6, 2), np.float32)],
            [(2, 1, 1, 2), (1, 1, 2)], {"hidden_size": 2}),
    "LSTM": ([np.ones((2, 1, 3), np.float32), np.ones((1, 8, 3), np.float32), np.ones((1, 8, 2), np.float32)],
             [(2, 1, 1, 2), (1, 1, 2)], {"hidden_size": 2}),
}


def test_every_op_listed_as_float_only_is_checked_here():
    listed = {op for op, es in op_limits.UNSUPPORTED.items() if any(e.key == "float-kinds" for e in es)}
    assert listed == set(_FLOAT_ONLY)


@pytest.mark.parametrize("op", sorted(_FLOAT_ONLY))
def test_a_float_only_kernel_runs_float16_and_refuses_bfloat16(op):
    ins, shape, attrs = _FLOAT_ONLY[op]
    shapes = shape if isinstance(shape, list) else [shape]
    half = [a.astype(np.float16) for a in ins]
    device_run(DEV, op, half, [np.zeros(s, np.float16) for s in shapes], **attrs)
    bf16 = dtypes.numpy_dtype("bfloat16")
    with pytest.raises(KernelError, match="floating-point"):
        device_run(DEV, op, [a.astype(bf16) for a in ins], [np.zeros(s, bf16) for s in shapes], **attrs)


def test_check_names_the_value_the_node_has():
    hit = op_limits.check("Dropout", attributes={"training_mode": 1}, dtypes=["float32"], opset=15)
    assert hit is not None and hit[0].key == "training" and hit[1] == "training_mode=1"
    assert op_limits.check("Dropout", attributes={}, dtypes=["float32"], opset=15) is None
    assert op_limits.check("BatchNormalization", attributes={"training_mode": 1}, dtypes=["float32"], opset=15) is None
    entry, detail = op_limits.check("Relu", attributes={}, dtypes=["int4", "float32"], opset=21)
    assert entry.key == "sub-byte" and detail == "element type int4"
    assert op_limits.check("Cast", attributes={}, dtypes=["int4", "float32"], opset=21) is None
    assert op_limits.check("Reshape", attributes={}, dtypes=["int4"], opset=21, compute=False) is None
