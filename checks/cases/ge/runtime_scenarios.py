"""Shared helpers for the runtime ports of GE's zero-copy tests (RUNTIME_CASES.md).

GE's runtime tests fake a model (``ATTR_MODEL_MEMORY_SIZE``, op offsets, task defs) and then read
DavinciModel / ModelV2Executor state or the runtime stub's records (launch arguments, memcpy
records). Here the same scenario is a zcspec graph compiled by zcspec, loaded and executed on the
emulated device, and the facts are read from what the device saw: its trace (argument writes,
launches with the byte ranges they read and wrote, copies, allocations) and its counters.
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.device.trace import Copy, Launch
from zcspec.impl.platform import dtypes

# GE's DavinciModel fixtures use one tensor GeShape({1, 4, 4, 8}) float: 512 bytes.
NCHW_512 = (1, 4, 4, 8)


def data_kernel_netoutput(op: str = "Relu", shape=NCHW_512, name: str = "memcpy"):
    """GE's TestNnExecute graph, data -> memcpy -> output, with the copy as one kernel (``op``)."""
    b = GraphBuilder("data_kernel_netoutput")
    x = b.input("data", shape)
    b.output(b.op(op, [x], name=name))
    return build_model(b.build())


def data_to_netoutput(n: int = 2, shape=(4, 2), dtype: str = "int64"):
    """Data nodes feeding NetOutput directly (GE's CreateNodeV2/V3 fixtures: int64, 64 bytes each)."""
    b = GraphBuilder("data_to_netoutput")
    b.output(*[b.input(f"data{i + 1}", shape, dtype) for i in range(n)])
    return build_model(b.build())


def two_input_add(shape=(8 * 3 * 224 * 224,)):
    """GE's ShareGraph::BuildSingleNodeGraph: data1, data2 -> add1 -> NetOutput (float)."""
    b = GraphBuilder("single_node_add")
    x1, x2 = b.input("data1", shape), b.input("data2", shape)
    b.output(b.op("Add", [x1, x2], name="add1"))
    return build_model(b.build())


def launches(device: Device, mark: int, op_type: str | None = None) -> list[Launch]:
    return [e for e in device.trace.of_type(Launch, mark) if op_type is None or e.op_type == op_type]


def copies(device: Device, mark: int) -> list[Copy]:
    return list(device.trace.of_type(Copy, mark))


def written_starts(launch: Launch) -> set[int]:
    """Start addresses of the byte ranges a launched task wrote."""
    return {r[0] for r in launch.writes}


def range_starts(ranges) -> set[int]:
    return {r[0] for r in ranges}


def ones(model) -> dict[str, np.ndarray]:
    return {io.tensor: np.ones(io.shape, dtypes.numpy_dtype(io.dtype)) for io in model.tasks.inputs}
