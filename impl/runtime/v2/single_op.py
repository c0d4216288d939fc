"""The single-op executor: one operator as a model, run with GE's single-op options (op_executor.cpp
``OpExecutor::PrepareRt2Execute``).

Every model it loads gets ``always_zero_copy`` and ``always_external_allocator`` forced on,
and ``trust_shape_on_out_tensor`` unless the caller asks to refresh output shapes
(ACL_OP_EXECUTE_REFRESH_OUTPUT_ORI_SHAPE). Each execution passes the executor's external
allocator (ACL's per-stream resource manager allocator). Consequence, as in GE: output
buffers must be allocated by the caller, large enough and on the device, or the call fails
with PARAM_INVALID / E13031 before anything runs.

    ex = SingleOpExecutor(dev)
    model = single_op_model("Relu", [((2, 3), "float32")], [((2, 3), "float32")])
    ex.execute(model, [Tensor(x, 24)], [Tensor(y, 24)])
"""
from __future__ import annotations

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.runtime.v2.allocators import ExternalAllocator
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.options import LoweringOptions


def single_op_model(op_type: str, inputs, outputs, *, soc: str = "ascend910b", **attrs):
    """A compiled one-node model: ``inputs``/``outputs`` are (shape, dtype) pairs, ``attrs`` the op's."""
    b = GraphBuilder(f"single_op_{op_type}")
    names = [b.input(f"x{i}", shape, dtype) for i, (shape, dtype) in enumerate(inputs)]
    outs = b.op(op_type, names, name=op_type.lower(), outputs=[(tuple(s), d) for s, d in outputs], **attrs)
    b.output(*outs)
    return build_model(b.build(), CompileOptions(soc=soc))


class SingleOpExecutor:
    """Loads each model on its first execution (GE: the first RT2 execution of the op) and reuses it."""

    def __init__(self, device, *, allocator=None, refresh_output_ori_shape: bool = False):
        self.device = device
        self.allocator = allocator if allocator is not None else ExternalAllocator.on_device(device, name="acl op")
        self.options = LoweringOptions(trust_shape_on_out_tensor=not refresh_output_ori_shape,
                                     always_zero_copy=True, always_external_allocator=True)
        self._loaded: dict[int, StreamExecutor] = {}

    def executor(self, model) -> StreamExecutor:
        exe = self._loaded.get(id(model))
        if exe is None or exe.model is not model:
            exe = self._loaded[id(model)] = StreamExecutor(model, self.device, self.options)
        return exe

    def execute(self, model, inputs, outputs) -> list:
        return self.executor(model).execute(inputs, outputs, allocators={"device": self.allocator})

    def close(self) -> None:
        for exe in self._loaded.values():
            exe.unload()
        self._loaded.clear()
