"""Kernels that bring tensors into the graph: the caller's inputs and outputs, weights, views (GE: build_tensor.cc
``SplitDataTensor``, memory_copy.cc ``MakeSureTensorAtDevice``)."""
from __future__ import annotations

from zcspec.impl.device import MemcpyTask
from zcspec.impl.runtime.v2.errors import InputBufferError
from zcspec.impl.runtime.v2.tensors import Tensor, TensorData


def input_data(frame, node, args):
    return tuple(frame.inputs)


def output_data(frame, node, args):
    """The caller's output tensors; a missing one (None) is created here, as GE does (AllocModelOutTensor,
    EnsureTensorAtOutMemory)."""
    names = node.attr("names")
    for i, t in enumerate(frame.outputs):
        if t is None:
            frame.outputs[i] = Tensor(name=names[i])
    return tuple(frame.outputs)


def split_data_tensor(frame, node, args):
    """The caller's input as tensor data, shared (no copy); a null or short buffer is an error."""
    (tensor,) = args
    name, need = node.attr("tensor"), node.attr("nbytes")
    if tensor is None or not tensor.addr:
        raise InputBufferError(name, "no buffer (null address): inputs must be passed by the caller", node=node.name,
                              index=node.attr("index"))
    if tensor.size < need:
        raise InputBufferError(name, f"buffer is {tensor.size} bytes, the model reads {need}", node=node.name,
                              index=node.attr("index"))
    frame.io_addresses[("input", node.attr("index"))] = tensor.addr
    return (TensorData(tensor.addr, tensor.size, tensor.placement),)


def make_sure_tensor_at_device(frame, node, args):
    """Share a device input; copy a host one into runtime memory (async H2D on stream 0)."""
    td, allocator = args
    if td.placement == "device":
        return (td,)
    name, nbytes = node.attr("tensor"), node.attr("nbytes")
    block = allocator.malloc(nbytes, tag=f"input {name} on device", io=f"input:{node.attr('index')}")
    frame.hold(block)
    frame.device.launch(MemcpyTask(node.name, block.addr, td.addr, nbytes, "h2d"))
    frame.io_addresses[("input", node.attr("index"))] = block.addr
    return (TensorData(block.addr, block.size, "device", block),)


def copy_tensor_data(frame, node, args):
    """Copy a caller's input into the runtime memory it is planned inside (async D2D on stream 0)."""
    src, dst = args
    frame.device.launch(MemcpyTask(node.name, dst.addr, src.addr, node.attr("nbytes"), "d2d"))
    return ()


def const_tensor_data(frame, node, args):
    base = frame.loaded.region_base(node.attr("region"))
    return (TensorData(base + node.attr("offset"), node.attr("size"), "device"),)


def identity_addr(frame, node, args):
    return (args[0],)


def view_addr(frame, node, args):
    return (args[0].view(node.attr("offset"), node.attr("size")),)


KERNELS = {
    "InputData": input_data, "OutputData": output_data, "SplitDataTensor": split_data_tensor,
    "MakeSureTensorAtDevice": make_sure_tensor_at_device, "CopyTensorData": copy_tensor_data,
    "ConstTensorData": const_tensor_data,
    "IdentityAddr": identity_addr, "ViewAddr": view_addr,
}
