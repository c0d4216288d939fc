"""End to end for a small ONNX model: import, compile, run through runtime v1 and v2, compare with onnxruntime.

``check_model(model, feeds)`` asserts that both runtimes' outputs match onnxruntime's on
``feeds`` (graph input name -> array) and returns the imported IR graph, so a test can also
check what the front end made of the model (e.g. that no Shape node is left).
"""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort

from zcspec.checks.errors import OracleUnavailable
from zcspec.checks.oracle import oracle_outputs
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.frontend.onnx_import import from_model
from zcspec.impl.device import Device
from zcspec.impl.platform import storage
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1.config import LoadOptions
from zcspec.impl.runtime.v1.load import load
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.tensors import Tensor


def run_v1(model, feeds: dict) -> dict:
    dev = Device(model.soc)
    lm = load(dev, model, LoadOptions())
    ins, outs = stage_inputs(dev, model, feeds), alloc_outputs(dev, model)
    lm.execute(ins, outs)
    got = read_outputs(dev, model, outs)
    lm.unload()
    free_buffers(dev, ins + outs)
    return got


def run_v2(model, feeds: dict) -> dict:
    dev = Device(model.soc)
    ins = [Tensor(dev.upload(storage.to_storage(np.reshape(feeds[io.name], io.shape), io.dtype), tag=f"in {io.tensor}"),
                  io.nbytes, name=io.name) for io in model.tasks.inputs]
    outs = [Tensor(dev.malloc(max(io.nbytes, 1), tag=f"out {io.name}"), io.nbytes, name=io.name)
            for io in model.tasks.outputs]
    exe = StreamExecutor(model, dev, LoweringOptions())
    got = {}
    for io, t in zip(model.tasks.outputs, exe.execute(ins, outs)):
        read = dev.peek if t.placement == "device" else dev.host_read
        got[io.name] = storage.from_storage(read(t.addr, (io.nbytes,), np.uint8), io.shape, io.dtype)
    exe.unload()
    return got


def ort_outputs(model: onnx.ModelProto, feeds: dict) -> dict:
    """Output name -> onnxruntime's value (``model`` is not modified)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    m.ir_version = min(m.ir_version, 9)
    for o in m.graph.output:   # onnxruntime refuses an output typed UNDEFINED; untyped is fine
        o.ClearField("type")
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in m.graph.output]
    return dict(zip(names, sess.run(names, feeds)))


def check_model(model: onnx.ModelProto, feeds: dict, *, rtol=1e-4, atol=1e-5, oracle: bool = True):
    """Assert runtime v1 and v2 agree with onnxruntime on every output; the imported graph.

    With ``oracle`` the checker's oracle (``zcspec.checks.oracle``, the IR graph exported back to
    ONNX) must agree as well, or refuse the graph with OracleUnavailable."""
    graph = from_model(model)
    compiled = build_model(graph)
    want = ort_outputs(model, feeds)
    for runtime, got in (("v1", run_v1(compiled, feeds)), ("v2", run_v2(compiled, feeds))):
        for name, expected in want.items():
            assert name in got, (runtime, name, sorted(got))
            np.testing.assert_allclose(got[name], expected, rtol=rtol, atol=atol, err_msg=f"runtime {runtime} {name}")
    if oracle:
        try:
            told = oracle_outputs(graph, feeds)
        except OracleUnavailable:
            return graph
        for name, expected in want.items():
            np.testing.assert_allclose(told[name], expected, rtol=rtol, atol=atol, err_msg=f"oracle {name}")
    return graph
