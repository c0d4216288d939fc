"""Output kernels: AllocModelOutTensor, SplitTensorForOutputData, EnsureTensorAtOutMemory (GE: model_outputs.cc,
build_tensor.cc, memory_copy.cc)."""
from __future__ import annotations

from zcspec.impl.device import MemcpyTask
from zcspec.impl.platform import dtypes
from zcspec.impl.runtime.v2.errors import EnsureOutputError, OutputBufferError
from zcspec.impl.runtime.v2.tensors import Tensor, TensorData


def _key(node) -> tuple:
    return ("output", node.attr("index"))


def _share(frame, node, tensor) -> tuple:
    frame.io_addresses[_key(node)] = tensor.addr
    return (TensorData(tensor.addr, tensor.size, tensor.placement),)


def alloc_model_out_tensor(frame, node, args):
    """Inputs (allocator, output tensor); output: the tensor data the producer writes (AllocModelOutTensor).

    1. the caller's buffer is on the device and (unless ``check_size`` is off: ge_compat,
       GE's unchecked sharing, AllocModelOutTensor) at least ``raw`` bytes -> zero copy: share it, no reference;
    2. no address, or (zcspec's default) a buffer too small to hold the output -> allocate
       into the *caller's tensor* (AllocModelOutTensor): the tensor owns the block and EnsureTensorAtOutMemory
       finds source == destination; the caller's own small buffer is never written;
    3. a host buffer -> allocate tensor data the graph owns; EnsureTensorAtOutMemory copies (AllocModelOutTensor).
    """
    allocator, tensor = args
    output, raw, size = node.attr("output"), node.attr("raw"), node.attr("size")
    check = node.attr("check_size", True)
    on_device = tensor.placement == allocator.placement
    if tensor.addr and on_device and (not check or tensor.size >= raw):
        return _share(frame, node, tensor)
    block = allocator.malloc(size, tag=f"output {output}", io=f"output:{node.attr('index')}")
    frame.hold(block)
    if not tensor.addr or on_device:
        tensor.adopt(block)
        frame.handed[block.addr] = _key(node)
    frame.io_addresses[_key(node)] = block.addr
    return (TensorData(block.addr, block.size, block.placement, block),)


def split_tensor_for_output_data(frame, node, args):
    """always_zero_copy: the caller's buffer or an error (SplitTensorForOutputData); no allocation, no
    reference, no fallback.

    The required size is the raw bytes of the output's own shape, without padding (SplitTensorForOutputData).
    """
    (tensor,) = args
    _validate(node, tensor)
    return _share(frame, node, tensor)


def check_output_tensor(frame, node, args):
    """always_zero_copy for an output no allocation produces (a model input or a weight passed
    through): the same checks as SplitTensorForOutputData, before anything runs; Ensure then copies."""
    _validate(node, args[0])
    return ()


def every_bad_output(graph, outputs) -> list[OutputBufferError]:
    """The errors of every always_zero_copy output check that fails for ``outputs`` (the executor
    reports them all when the first fails, so the caller can fix every buffer at once)."""
    errors = []
    for node in graph.of_type("SplitTensorForOutputData", "CheckOutputTensor"):
        try:
            _validate(node, outputs[node.attr("index")])
        except OutputBufferError as e:
            errors.append(e)
    return errors


def _validate(node, tensor) -> None:
    output, raw = node.attr("output"), node.attr("raw")
    where = dict(node=node.name, index=node.attr("index"), required=raw)
    if tensor is None or not tensor.addr:
        raise OutputBufferError(output, "no buffer (null address). In the always_zero_copy mode the output tensor "
                                "and its address must be allocated and passed by the caller", given=0, **where)
    if tensor.size < raw:
        raise OutputBufferError(output, f"the output tensor memory size {tensor.size} is smaller than the actual size "
                                f"{raw} required by the tensor (always_zero_copy is on, so no fallback allocation "
                                f"is made)", given=tensor.size, **where)
    if node.attr("check_placement", True) and tensor.placement != "device":
        raise OutputBufferError(output, f"the buffer is {tensor.placement} memory; always_zero_copy needs device "
                                "memory", given=tensor.size, **where)


def ensure_tensor_at_out_memory(frame, node, args):
    """Deliver the output in the caller's tensor (EnsureTensorAtOutMemory): share, find it already there, or
    copy into it.

    With ``fallback`` (zcspec's default; off under ge_compat) a buffer too small for the output is
    treated like no buffer: the output is handed over in runtime memory instead of GE's GRAPH_FAILED
    (EnsureTensorAtOutMemory), so the default mode never fails because of an output buffer.

    With ``trust_shape`` (TrustOutTensor) the shape is the one the caller put on its tensor, which is
    left as it is (GE writes the caller's own shape back), and the bytes to deliver are that shape's
    (memory_copy.cc ``TensorToOut``); more than the caller's buffer or the runtime's tensor data holds
    fails, as in GE (the fallback stays for a buffer short of the model's output bytes). A
    tensor with no shape (None) declares no size: the model's bytes are delivered and its shape stays None.
    """
    td, tensor, allocator = args
    output = node.attr("output")
    if td is None or tensor is None:
        raise EnsureOutputError(output, "null tensor data or output tensor", node=node.name,
                                index=node.attr("index"))
    trusted = node.attr("trust_shape", False)
    nbytes = _nbytes(node, tensor) if trusted else node.attr("nbytes")
    if not trusted:
        tensor.shape = tuple(node.attr("shape"))
    tensor.dtype = node.attr("dtype")
    frame.io_addresses.setdefault(_key(node), td.addr)
    if not tensor.addr or (node.attr("fallback", False) and node.attr("nbytes") > tensor.size):
        return _hand_over(frame, node, td, tensor, allocator)  # the fallback is for a buffer short of the output
    if nbytes > tensor.size:
        raise EnsureOutputError(output, f"given buffer size {tensor.size} is less than output tensor size {nbytes}",
                                node=node.name, index=node.attr("index"))
    if td.addr == tensor.addr:
        return ()  # zero copy took effect
    if nbytes > td.size:
        raise EnsureOutputError(output, f"output tensor data size {td.size} is less than copy size {nbytes}",
                                node=node.name, index=node.attr("index"))
    _copy(frame, node, td, tensor, nbytes, output)
    return ()


def _nbytes(node, tensor) -> int:
    """The bytes a trusted-shape Ensure delivers: those of the caller's shape (TrustOutTensor wires OutputData
    to the Ensure's shape input), or the model's when the caller's tensor has none."""
    if tensor.shape is None:
        return node.attr("nbytes")
    return dtypes.nbytes(tuple(tensor.shape), node.attr("dtype"), tensor=node.attr("output"))


def _hand_over(frame, node, td, tensor, allocator) -> tuple:
    """No usable caller memory: the tensor takes a reference on the output's block (EnsureTensorAtOutMemory).

    When that block is not the output's alone (no block: the caller's input or the loaded weights;
    a piece of a larger tensor; a block already handed to another output), the output is copied
    into a block of its own first. GE would share, handing the caller an alias of its input, of
    read-only model memory or of another output (zcspec deviation).
    """
    key = _key(node)
    whole = td.block is not None and (td.addr, td.size) == (td.block.addr, td.block.size)
    if whole and td.block.addr not in frame.handed:
        tensor.adopt(td.block, addr=td.addr, size=td.size)
        frame.handed[td.block.addr] = key
        return ()
    nbytes = node.attr("nbytes")
    block = allocator.malloc(nbytes, tag=f"output {node.attr('output')}", io=f"output:{node.attr('index')}")
    _copy(frame, node, td, Tensor(block.addr, block.size, block.placement), nbytes, node.attr("output"))
    frame.io_addresses[key] = block.addr
    tensor.adopt(block)
    block.release()  # the allocation's own reference: the caller's tensor now holds the only one
    frame.handed[block.addr] = key
    return ()


_DIRECTIONS = {("device", "device"): "d2d", ("device", "host"): "d2h", ("host", "device"): "h2d",
               ("host", "host"): "h2h"}


def _copy(frame, node, td, tensor, nbytes: int, output: str) -> None:
    direction = _DIRECTIONS.get((td.placement, tensor.placement))
    if direction is None:
        raise EnsureOutputError(output, f"no copy from {td.placement} to {tensor.placement} memory",
                                node=node.name, index=node.attr("index"))
    if frame.loaded.multi_stream:
        frame.loaded.join_streams()  # the copy runs on stream 0, after every stream's writes
    if direction == "h2h":  # H2H is synchronous in GE (EnsureTensorAtOutMemory)
        frame.device.memcpy(tensor.addr, td.addr, nbytes, "h2h")
    else:
        frame.device.launch(MemcpyTask(node.name, tensor.addr, td.addr, nbytes, direction))


KERNELS = {
    "AllocModelOutTensor": alloc_model_out_tensor, "SplitTensorForOutputData": split_tensor_for_output_data,
    "CheckOutputTensor": check_output_tensor,
    "EnsureTensorAtOutMemory": ensure_tensor_at_out_memory,
}
