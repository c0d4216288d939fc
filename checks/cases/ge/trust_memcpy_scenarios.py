"""Scenarios of the ports of GE's ``trust_output_tensor_system_test.cc`` and
``memcpy_addr_async_task_info_unittest.cc`` (TRUST_OUTPUT_CASES.md, MEMCPY_ADDR_ASYNC_CASES.md).

GE's graphs (``ShareGraph::BuildSingleNodeGraph``, ``BuildTwoAddNodeGraph``,
``BuildMinimumGradAndAddGraph``; the MemcpyAddrAsync task fixture) rebuilt as zcspec graphs with
the shapes GE executes with, and GE's fake tensors' buffer sizes. Nothing here reads what a
runtime reports about itself: the tests judge from the device trace and the lowered graph.
"""
from __future__ import annotations

import math

import numpy as np

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.runtime.v2.tensors import Tensor

from zcspec.checks.cases.ge.runtime_scenarios import NCHW_512

N = 8 * 3 * 224 * 224               # FakeTensors({8 * 3 * 224 * 224}, 2): float elements per input
IN_BYTES = N * 4
STORAGE = (8, 1, 224, 224, 16)      # TensorFaker().StorageShape({8, 1, 224, 224, 16})


def faked_size(shape, itemsize: int = 4) -> int:
    """The buffer GE's ``TensorFaker::Build`` allocates: the storage shape's bytes, rounded up to 32, plus 32."""
    return -(-math.prod(shape) * itemsize // 32) * 32 + 32


def fake_tensors_size(shape) -> int:
    """The buffer GE's ``FakeTensors`` allocates for each tensor (8 bytes an element, rounded up to 32, plus 32)."""
    return -(-math.prod(shape) * 8 // 32) * 32 + 32


def two_add_nodes():
    """``BuildTwoAddNodeGraph``: data1, data2 -> add1; data1, add1 -> add2 -> NetOutput (float, 1-D N)."""
    b = GraphBuilder("two_add_nodes")
    d1, d2 = b.input("data1", (N,)), b.input("data2", (N,))
    add1 = b.op("Add", [d1, d2], name="add1")
    b.output(b.op("Add", [d1, add1], name="add2"))
    return build_model(b.build())


def two_output_node_and_add():
    """``BuildMinimumGradAndAddGraph`` with zcspec ops: a node with two outputs of shape 1x2x3x4, output 0
    to NetOutput, output 1 into an Add with the last input, the Add to NetOutput. zcspec has no
    MinimumGrad (grads, x1, x2 -> dx1, dx2): the two-output node is a Split of a 1x2x3x8 input along
    its last axis, so GE's unused-here input x1 is dropped."""
    b = GraphBuilder("minimum_grad_and_add")
    d0, d2 = b.input("data0", (1, 2, 3, 8)), b.input("data2", (1, 2, 3, 4))
    mg0, mg1 = b.op("Split", [d0], name="mg", outputs=[((1, 2, 3, 4), "float32")] * 2, axis=3, split=(4, 4))
    b.output(mg0, b.op("Add", [mg1, d2], name="add0"))
    return build_model(b.build())


def device_inputs(dev: Device, model, value: float = 1.0) -> list[Tensor]:
    return [Tensor(dev.upload(np.full(io.shape, value, np.float32)), io.nbytes, name=io.tensor)
            for io in model.tasks.inputs]


def memcpy_addr_async_in_feature_map():
    """GE's fixture: one MemcpyAddrAsync task (D2D, dst_max 512) whose src and dst both lie in the feature
    map. Here data -> Relu -> MemcpyAddrAsync ("dummy_op") -> Neg -> output, 512-byte tensors: the copy
    reads the Relu's output and writes the Neg's input, both feature-map tensors."""
    b = GraphBuilder("memcpy_addr_async")
    x = b.input("data", NCHW_512)
    copy = b.op("MemcpyAddrAsync", [b.op("Relu", [x], name="relu")], name="dummy_op")
    b.output(b.op("Neg", [copy], name="neg"))
    return build_model(b.build())
