"""Small models and a harness shared by the runtime-v1 tests."""
from __future__ import annotations

import numpy as np

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import alloc_outputs, stage_inputs


def mlp(soc: str = "ascend910b"):
    """x -> Add(w) -> Relu -> y, plus Neg(x) -> z: two inputs' worth of slots, two zero-copy outputs."""
    b = GraphBuilder("mlp")
    x = b.input("x", (2, 3))
    h = b.op("Add", [x, b.weight("w", np.arange(6, dtype=np.float32).reshape(2, 3))], name="add")
    b.output(b.op("Relu", [h], name="relu"), b.op("Neg", [x], name="neg"))
    return build_model(b.build(), CompileOptions(soc=soc))


def expected(x):
    return {"relu:0": np.maximum(x + np.arange(6, dtype=np.float32).reshape(2, 3), 0), "neg:0": -x}


def passthrough():
    """Data feeding NetOutput (also through a view), an HCCL collective, and a kernel output."""
    return passthrough_on("ascend910b")


def passthrough_on(soc: str):
    b = GraphBuilder("io")
    x = b.input("x", (4,))
    y = b.input("y", (2, 3))
    b.output(b.op("HcomAllReduce", [x], name="ar", reduction="sum"), y,
             b.op("Flatten", [y], name="fl", shape=(2, 3), axis=1), b.op("Relu", [y], name="r"))
    return build_model(b.build(), CompileOptions(soc=soc))


def buffers(device, model, x=None, placement="device"):
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2 if x is None else x
    return stage_inputs(device, model, {"x": x}, placement), alloc_outputs(device, model, placement)


def device(soc: str = "ascend910b", **kw) -> Device:
    return Device(soc, **kw)
