"""``run(model, device, inputs, outputs, *, zero_copy)``: load, execute once, unload.

``inputs``/``outputs`` are :class:`zcspec.impl.runtime.user_buffers.UserBuffer` lists in the model's
I/O order. ``zero_copy=True`` lowers with ModelOutTensorZeroCopy (outputs computed straight
into the buffers); ``zero_copy=False`` skips it, so every output is computed in runtime memory
and EnsureTensorAtOutMemory copies it into the buffer. Raises a RuntimeV2Error on bad input
(one that is also a ``BadInput``: exit code 2 on the command line).
"""
from __future__ import annotations

from zcspec.impl.runtime.v2.errors import OutputBufferError
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.tensors import Tensor


def to_tensor(buffer) -> Tensor:
    return Tensor(addr=buffer.addr, size=buffer.size, placement=buffer.placement, name=buffer.name)


def run(model, device, inputs: list, outputs: list, *, zero_copy: bool) -> None:
    """Execute ``model`` once with the caller's buffers; the model is unloaded even when the call fails.

    The default mode may put an output whose buffer cannot hold it in runtime memory (a
    fallback); this function has only the caller's buffers to deliver into, so it then
    releases that memory and raises OutputBufferError naming the output.
    """
    run_counted(model, device, inputs, outputs, zero_copy=zero_copy)


def run_counted(model, device, inputs: list, outputs: list, *, zero_copy: bool):
    """``run``, returning the device counters of the execute call alone (load and unload excluded)."""
    exe = StreamExecutor(model, device, LoweringOptions(zero_copy=zero_copy))
    try:
        before = device.counters
        result = exe.execute([to_tensor(b) for b in inputs], [to_tensor(b) for b in outputs])
        counters = device.counters - before
        for b, t, io in zip(outputs, result, model.tasks.outputs):
            if t.addr != b.addr:
                t.release()
                raise OutputBufferError(b.name, f"buffer at {b.addr:#x} of {b.size} bytes cannot hold the output "
                                        f"({io.nbytes} bytes); runtime v2 computed it in its own memory instead "
                                        f"(default-mode fallback). Pass a device buffer of at least {io.nbytes} bytes",
                                        required=io.nbytes, given=b.size)
        return counters
    finally:
        exe.unload()
