"""A deliberately naive executor of a whole IR graph on the device: a reference that shares no code with the runtimes.

Every tensor gets its own allocation (no planning, no reuse), weights are
uploaded read-only, view ops alias their input, one kernel task per compute node
(atomic ops get a memset task before them). It shows that whole models run
through the emulator, how fast, and that the kernels agree with onnxruntime
end to end, and gives the runtimes a result to equal bitwise; the real runtimes live in
impl/runtime.
"""
from __future__ import annotations

import time

import numpy as np

from zcspec.impl.compiler.ops import OPS
from zcspec.impl.compiler.topology import execution_order
from zcspec.impl.device import Device, KernelTask, MemsetTask, Slot
from zcspec.impl.platform import storage


def load(dev: Device, graph, feeds: dict):
    """Upload weights and inputs, allocate every other tensor, write argument tables; returns (tasks, addr)."""
    desc = graph.desc   # sub-byte tensors lie packed (impl/platform/storage.py)
    addr = {w.name: dev.upload(storage.image(w.data, desc[w.name].shape, desc[w.name].dtype, w.splat), tag=w.name,
                               read_only=True) for w in graph.weights}
    addr.update({t: dev.upload(storage.to_storage(feeds[t], desc[t].dtype), tag=t) for t in graph.inputs})
    tasks = []
    for name in execution_order(graph):
        node = graph.node[name]
        kind = OPS[node.op_type].kind
        if kind in ("data", "netoutput"):
            continue
        if kind == "view":
            addr[node.outputs[0]] = addr[node.inputs[0]]
            continue
        for o in node.outputs:
            addr[o] = dev.malloc(graph.desc[o].nbytes, tag=o)
        slots = [Slot("in", graph.desc[t].shape, graph.desc[t].dtype) for t in node.inputs]
        slots += [Slot("out", graph.desc[t].shape, graph.desc[t].dtype) for t in node.outputs]
        task = KernelTask(name, node.op_type, dev.malloc(8 * len(slots), tag=f"{name} args"), slots, node.attrs)
        dev.write_args(task, [addr[t] for t in node.inputs + node.outputs])
        if OPS[node.op_type].atomic:
            clean = MemsetTask(f"{name}_clean", args=dev.malloc(8 * len(node.outputs)), slots=slots[len(node.inputs):])
            dev.write_args(clean, [addr[t] for t in node.outputs])
            tasks.append(clean)
        tasks.append(task)
    return tasks, addr


def run(dev: Device, graph, feeds: dict) -> tuple[dict, float]:
    """Outputs by name and the seconds the tasks took (launch + synchronize)."""
    tasks, addr = load(dev, graph, feeds)
    t0 = time.perf_counter()
    dev.launch_all(tasks)
    dev.synchronize()
    seconds = time.perf_counter() - t0
    desc = graph.desc
    outs = {t: storage.from_storage(dev.download(addr[t], (desc[t].nbytes,), np.uint8), desc[t].shape, desc[t].dtype)
            for t in graph.outputs}
    return outs, seconds
