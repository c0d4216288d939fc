"""Runtime v2 on the light zoo: timings, allocator behaviour, agreement with runtime v1 and onnxruntime.

    python benchmarks/runtime_v2.py [MODEL ...]

Per model: compile seconds, v2 load seconds (lowering, passes, weights), first and second
execute seconds, execution-graph size, the caching allocator's device mallocs on the first
and second execution (the second should make none), peak bytes in use vs the static plan's
feature-map region, whether the outputs are bitwise equal to runtime v1's (zero copy on),
and the largest difference to onnxruntime (random normal input, seed 0).
"""
from __future__ import annotations

import sys
import time

import numpy as np
import onnxruntime as ort

from zcspec.checks.zoo import LIGHT
from zcspec.checks.models import load_graph, zoo_path
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import LoadOptions, load
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.runner import to_tensor


def _v1(model, arrays):
    dev = Device(model.soc, trace=False)
    ins, outs = stage_inputs(dev, model, arrays), alloc_outputs(dev, model)
    lm = load(dev, model, LoadOptions(zero_copy=True))
    lm.execute(ins, outs)
    res = read_outputs(dev, model, outs)
    lm.unload()
    free_buffers(dev, ins + outs)
    return res


class _Peak:
    def __init__(self, allocator):
        self.allocator, self.now, self.peak = allocator, 0, 0

    def __call__(self, what, block):
        self.now += block.size if what == "alloc" else -block.size
        self.peak = max(self.peak, self.now)


def measure(name: str) -> dict:
    t0 = time.perf_counter()
    graph = load_graph(f"zoo:{name}")
    model = build_model(graph)
    t1 = time.perf_counter()
    rng = np.random.default_rng(0)
    arrays = {io.tensor: rng.standard_normal(io.shape).astype(np.float32) for io in model.tasks.inputs}
    dev = Device(model.soc, trace=False)
    ins, outs = stage_inputs(dev, model, arrays), alloc_outputs(dev, model)
    t2 = time.perf_counter()
    exe = StreamExecutor(model, dev)
    t3 = time.perf_counter()
    peak = _Peak(exe.allocator)
    recorded = exe.allocator.listener
    exe.allocator.listener = lambda what, block: (peak(what, block), recorded(what, block))
    tensors_in, tensors_out = [to_tensor(b) for b in ins], [to_tensor(b) for b in outs]
    m0 = exe.allocator.device_mallocs
    exe.execute(tensors_in, tensors_out)
    t4 = time.perf_counter()
    m1 = exe.allocator.device_mallocs
    exe.execute(tensors_in, tensors_out)
    t5 = time.perf_counter()
    m2 = exe.allocator.device_mallocs
    v2 = read_outputs(dev, model, outs)
    exe.unload()
    free_buffers(dev, ins + outs)
    v1 = _v1(model, arrays)
    ref = ort.InferenceSession(zoo_path(name), providers=["CPUExecutionProvider"]).run(list(graph.outputs), arrays)
    diff = max(float(np.max(np.abs(v2[t] - r))) for t, r in zip(graph.outputs, ref))
    return {"model": name, "compile_s": t1 - t0, "load_s": t3 - t2, "exec1_s": t4 - t3, "exec2_s": t5 - t4,
            "nodes": len(exe.graph.nodes), "mallocs1": m1 - m0, "mallocs2": m2 - m1, "peak_in_use": peak.peak,
            "plan_fm": model.regions["feature_map"] + model.regions.get("zero_copy", 0),
            "v1_bitwise": all(v1[t].tobytes() == v2[t].tobytes() for t in v1), "ort_max_abs_diff": diff}


def main(names) -> None:
    cols = ("model", "compile_s", "load_s", "exec1_s", "exec2_s", "nodes", "mallocs1", "mallocs2", "peak_in_use",
            "plan_fm", "v1_bitwise", "ort_max_abs_diff")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for name in names:
        r = measure(name)
        cells = [f"{r[c]:.2f}" if c.endswith("_s") else f"{r[c]:.2e}" if c == "ort_max_abs_diff"
                 else f"{r[c]:,}" if isinstance(r[c], int) and not isinstance(r[c], bool) else str(r[c]) for c in cols]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or LIGHT)
