"""What runtime v1 copies per execute on GE's execute path and on GE's legacy path, for the models of
GE's own zero-copy cases.

    python benchmarks/v1_io_copies.py

Models, rebuilt from GE's system tests (``tests/ge/st/testcase/test_fm_memory_refresh.cc``):

- ``NetoutputNotSupportZeroCopy`` (``no_task_args_associate_user_model_io``): Add(const, const) twice into a
  PhonyConcat whose output is the graph output (int32 4x2x2x2, in the feature map); a Data (int32 2x2x2x2)
  no task reads. GE passes an 8x8x8x8 int32 input tensor and a 1x4x2x124 int32 output tensor;
- ``BuildInputDirectlyConnectedToOutputGraph`` (``zero_copy_ok_when_input_directly_connected_to_output``):
  data1 (int32 1x2x3x4) -> NetOutput, raw-sized tensors.

Each model is compiled once (default options) and, per path, loaded on a fresh device
(``LoadOptions()``: GE's ``NnExecute``; ``LoadOptions(legacy_copy_only_addrs=True)``: GE's
``copy_only_addrs_`` rules) and executed twice with fresh device buffers. Per run: the device copies of
the second call, each as ``source -> destination: bytes`` (user input, user output, or model memory),
and their total. The last line gives the 1-minute load average before and after, and the cores.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.device.trace import Copy
from zcspec.impl.runtime.user_buffers import UserBuffer
from zcspec.impl.runtime.v1 import LoadOptions, load

PATHS = (("NnExecute", LoadOptions()), ("legacy", LoadOptions(legacy_copy_only_addrs=True)))


def netoutput_not_support_zero_copy():
    b = GraphBuilder("netoutput_not_zero_copy")
    b.input("data_1", (2, 2, 2, 2), "int32")
    consts = [b.weight(f"const_{i}", np.zeros((2, 2, 2, 2), np.int32)) for i in (1, 2)]
    adds = [b.op("Add", [c, c], name=f"add_{i}") for i, c in enumerate(consts, 1)]
    b.output(b.op("PhonyConcat", adds, name="pc1", shape=(4, 2, 2, 2), axis=0))
    return build_model(b.build()), {"data_1": 8 * 8 * 8 * 8 * 4, "pc1:0": 1 * 4 * 2 * 124 * 4}


def input_directly_connected_to_output():
    b = GraphBuilder("data_netoutput")
    b.output(b.input("data1", (1, 2, 3, 4), "int32"))
    return build_model(b.build()), {}


CASES = (("NetoutputNotSupportZeroCopy", netoutput_not_support_zero_copy),
         ("BuildInputDirectlyConnectedToOutputGraph", input_directly_connected_to_output))


def _buffers(dev, model, sizes: dict):
    """One device buffer per input (zeros) and output, of GE's tensor size or the raw size."""
    def buf(io):
        size = sizes.get(io.tensor, io.nbytes)
        addr = dev.upload(np.zeros(size, np.uint8)) if io.role == "input" else dev.malloc(size)
        return UserBuffer(io.tensor, addr, size)
    return [buf(io) for io in model.tasks.inputs], [buf(io) for io in model.tasks.outputs]


def _name(address: int, ins, outs) -> str:
    for what, bufs in (("input", ins), ("output", outs)):
        for b in bufs:
            if b.addr <= address < b.addr + b.size:
                return f"user {what} {b.name}"
    return "model memory"


def copies(model, sizes: dict, options: LoadOptions) -> list[tuple[str, str, int]]:
    """The copies of the second of two calls with fresh buffers: (source, destination, bytes)."""
    dev = Device(model.soc)
    lm = load(dev, model, options)
    for _ in range(2):
        ins, outs = _buffers(dev, model, sizes)
        mark = dev.trace.mark()
        if not lm.execute(ins, outs).ok:
            raise SystemExit(f"{model.name}: the execute call failed")
    return [(_name(c.src, ins, outs), _name(c.dst, ins, outs), c.nbytes) for c in dev.trace.of_type(Copy, mark)]


def main() -> int:
    before = os.getloadavg()[0]
    print(f"{'model':42} {'path':9} {'copies':>6} {'bytes':>6}  each copy")
    for name, build in CASES:
        model, sizes = build()
        for path, options in PATHS:
            moved = copies(model, sizes, options)
            each = "; ".join(f"{s} -> {d}: {n}" for s, d, n in moved) or "none"
            print(f"{name:42} {path:9} {len(moved):6} {sum(n for *_, n in moved):6}  {each}")
    print(f"load average (1 min) {before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
