"""Test helpers: run one op through onnxruntime and through the emulated device.

``ort_run`` builds a one-node ONNX model with onnx.helper; ``device_run`` does what
a runtime does for one kernel: malloc, H2D copies, an argument table, a kernel
task, synchronize, D2H copies (and frees everything afterwards). ``arrays``, ``shapes``
and ``dims`` draw the kernels' inputs.
"""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
from hypothesis import strategies as st
from onnx import helper

from zcspec.impl.device import Device, KernelTask, Slot
from zcspec.impl.platform import dtypes, storage

ort.set_default_logger_severity(4)
_SESSION_OPTIONS = ort.SessionOptions()
_SESSION_OPTIONS.intra_op_num_threads = 1
_SESSION_OPTIONS.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
_SESSION_OPTIONS.log_severity_level = 4


def _dtype_name(arr) -> str:
    return dtypes.of_numpy(arr.dtype)


def ort_run(op_type: str, inputs: list, n_outputs: int = 1, *, opset: int = 13, **attrs) -> list[np.ndarray]:
    """Run ``op_type`` on ``inputs`` (arrays; None for a skipped optional input) in onnxruntime."""
    names = [f"in{i}" if a is not None else "" for i, a in enumerate(inputs)]
    outs = [f"out{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outs, **attrs)
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                    for n, a in zip(names, inputs) if a is not None]
    graph_outputs = [helper.make_empty_tensor_value_info(o) for o in outs]
    graph = helper.make_graph([node], "single", graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 9)
    sess = ort.InferenceSession(model.SerializeToString(), _SESSION_OPTIONS, providers=["CPUExecutionProvider"])
    feed = {n: a for n, a in zip(names, inputs) if a is not None}
    return sess.run(outs, feed)


def device_run(dev: Device, op_type: str, inputs: list, out_like: list, *, clean: bool = False,
               in_loop: bool = False, **attrs) -> list[np.ndarray]:
    """Run ``op_type`` as a kernel task on ``dev``; outputs shaped and typed like ``out_like``.

    ``clean`` memsets the outputs to zero first (what the runtime does for atomic ops).
    """
    ins = [np.ascontiguousarray(a).reshape(np.shape(a)) for a in inputs]  # ascontiguousarray makes 0-d 1-d
    slots = [Slot("in", a.shape, _dtype_name(a)) for a in ins] + [Slot("out", o.shape, _dtype_name(o)) for o in out_like]
    # sub-byte tensors lie packed in device memory (impl/platform/storage.py)
    in_addrs = [dev.upload(storage.to_storage(a, s.dtype), tag=f"in{i}") for i, (a, s) in enumerate(zip(ins, slots))]
    out_slots = slots[len(ins):]
    out_addrs = [dev.malloc(max(s.nbytes, 1), tag=f"out{i}") for i, s in enumerate(out_slots)]
    args = dev.malloc(8 * len(slots), tag="args")
    task = KernelTask(f"{op_type.lower()}_0", op_type, args, slots, tuple(attrs.items()), in_loop=in_loop)
    try:
        dev.write_args(task, in_addrs + out_addrs)
        for a, s in zip(out_addrs, out_slots):
            if clean:
                dev.memset(a, s.nbytes)
        dev.launch(task)
        dev.synchronize()
        return [storage.from_storage(dev.download(a, (s.nbytes,), np.uint8), s.shape, s.dtype)
                for a, s in zip(out_addrs, out_slots)]
    finally:
        for a in in_addrs + out_addrs + [args]:
            dev.free(a)


def compare(op_type: str, inputs: list, *, opset: int = 13, n_outputs: int = 1, dev: Device | None = None,
            clean: bool = False, kernel_attrs: dict | None = None, kernel_inputs: list | None = None,
            rtol=1e-4, atol=1e-5, **attrs) -> None:
    """Assert the device kernel matches onnxruntime on ``inputs``.

    ``kernel_attrs`` replaces the attributes the kernel sees (when the IR form differs
    from the ONNX form, e.g. Softmax's ``_opset``); ``kernel_inputs`` the inputs (when the
    front end moves constant operands into attributes, e.g. Clip's opset-11 ``min``).
    """
    expected = ort_run(op_type, inputs, n_outputs, opset=opset, **attrs)
    dev = dev or Device()
    ins = [a for a in inputs if a is not None] if kernel_inputs is None else kernel_inputs
    got = device_run(dev, op_type, ins, expected, clean=clean,
                     **(attrs if kernel_attrs is None else kernel_attrs))
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g.shape == e.shape, (op_type, i, g.shape, e.shape)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"{op_type} output {i}")


dims = st.integers(1, 5)


def arrays(shape, dtype=np.float32, lo=-3.0, hi=3.0):
    """A strategy for arrays of ``shape``, seeded so Hypothesis shrinks the seed."""
    return st.integers(0, 2**32 - 1).map(
        lambda seed: np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(dtype))


@st.composite
def shapes(draw, min_rank=1, max_rank=4):
    return tuple(draw(st.lists(dims, min_size=min_rank, max_size=max_rank)))
