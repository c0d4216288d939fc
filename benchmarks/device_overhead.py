"""Per-task overhead of the emulated NPU, and the cost of its heaviest kernels.

    python benchmarks/device_overhead.py [--tasks 10000] [--no-conv] [--models resnet50 vgg19 ...]

Prints:
1. launch + execute time per NoOp kernel task (no slots: pure scheduling, and with
   two argument slots: table read, two range checks, two views), trace on and off;
2. the ResNet-50 Conv layers by shape (the 7x7/2 stem, a 3x3 and a 1x1 layer at
   56x56) through a kernel task, against onnxruntime on one thread;
3. with ``--models``, whole light models through the naive per-tensor executor
   (``zcspec.checks.naive_executor``: load time, then the time of the tasks alone).
"""
from __future__ import annotations

import argparse
import gc
import time

import numpy as np
from onnx import helper

from zcspec.checks.models import zoo_path
from zcspec.checks.naive_executor import run as naive_run
from zcspec.impl.compiler.frontend.onnx_import import load_onnx
from zcspec.impl.device import Device, KernelTask, Slot


def per_task_us(n: int, slots: int, trace: bool) -> tuple[float, float]:
    dev = Device(trace=trace)
    args = dev.malloc(16, tag="args")
    layout = (Slot("in", (16,)), Slot("out", (16,)))[:slots]
    task = KernelTask("noop", "NoOp", args, layout)
    if slots:
        dev.write_args(task, [dev.malloc(64, tag="x"), dev.malloc(64, tag="y")][:slots])
    t0 = time.perf_counter()
    for _ in range(n):
        dev.launch(task)
    t1 = time.perf_counter()
    dev.synchronize()
    t2 = time.perf_counter()
    assert dev.counters.kernel_launches == n
    return (t1 - t0) / n * 1e6, (t2 - t1) / n * 1e6


def ort_conv(x, w, **attrs) -> np.ndarray:
    """One Conv in onnxruntime on one thread, graph optimisations off; the session is built each call."""
    import onnxruntime as ort  # optional (the test extra): only the Conv table needs it

    ort.set_default_logger_severity(4)
    node = helper.make_node("Conv", ["x", "w"], ["y"], **attrs)
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
              for n, a in (("x", x), ("w", w))]
    graph = helper.make_graph([node], "conv", inputs, [helper.make_empty_tensor_value_info("y")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = min(model.ir_version, 9)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(["y"], {"x": x, "w": w})[0]


def conv_ms(x_shape, w_shape, repeat: int = 5, **attrs) -> tuple[float, float]:
    """Best kernel-task time (launch + synchronize, data already on the device) and onnxruntime's."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    ref = ort_conv(x, w, **attrs)
    dev = Device()
    xa, wa, ya = dev.upload(x), dev.upload(w, read_only=True), dev.malloc(ref.nbytes)
    slots = (Slot("in", x.shape), Slot("in", w.shape), Slot("out", ref.shape))
    task = KernelTask("conv", "Conv", dev.malloc(24), slots, tuple(attrs.items()))
    dev.write_args(task, [xa, wa, ya])
    best_dev = best_ort = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        dev.launch(task)
        dev.synchronize()
        best_dev = min(best_dev, time.perf_counter() - t0)
        t0 = time.perf_counter()
        ort_conv(x, w, **attrs)
        best_ort = min(best_ort, time.perf_counter() - t0)
    np.testing.assert_allclose(dev.peek(ya, ref.shape, ref.dtype), ref, rtol=1e-3, atol=1e-3)
    return best_dev * 1e3, best_ort * 1e3


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=10_000)
    p.add_argument("--no-conv", action="store_true")
    p.add_argument("--models", nargs="*", default=[], metavar="ZOO_NAME")
    a = p.parse_args()
    print(f"per-task overhead, {a.tasks} NoOp kernel tasks on one stream (microseconds per task)")
    print(f"  {'slots':>5} {'trace':>5} {'launch':>8} {'execute':>8} {'total':>8}")
    # Collect the import-time heap first: otherwise the first row pays for one full collection
    # of it (about 17 ms over 10,000 launches, 1.7 us per task), which is not launch overhead.
    gc.collect()
    for slots in (0, 2):
        for trace in (True, False):
            launch, run = per_task_us(a.tasks, slots, trace)
            print(f"  {slots:>5} {str(trace):>5} {launch:8.2f} {run:8.2f} {launch + run:8.2f}")
    if not a.no_conv:
        conv_table()
    if a.models:
        model_table(a.models)


def model_table(names) -> None:
    print("light models through the naive executor (seconds): load = weights + args, run = tasks")
    for name in names:
        graph = load_onnx(zoo_path(name))
        feeds = {t: np.ones(graph.desc[t].shape, np.float32) for t in graph.inputs}
        dev = Device()
        t0 = time.perf_counter()
        _, seconds = naive_run(dev, graph, feeds)
        total = time.perf_counter() - t0
        print(f"  {name:<14} load {total - seconds:6.2f}  run {seconds:6.2f}  tasks {dev.counters.tasks_executed}")
        dev.close()


def conv_table() -> None:
    print("ResNet-50 Conv layers (batch 1), best of 5, ms: emulator kernel task vs onnxruntime (1 thread, incl. session build)")
    layers = (
        ("conv1 7x7/2, 3->64, 224x224", (1, 3, 224, 224), (64, 3, 7, 7), dict(strides=[2, 2], pads=[3, 3, 3, 3])),
        ("3x3, 64->64, 56x56", (1, 64, 56, 56), (64, 64, 3, 3), dict(pads=[1, 1, 1, 1])),
        ("1x1, 64->256, 56x56", (1, 64, 56, 56), (256, 64, 1, 1), {}),
        ("3x3/2, 128->128, 56x56", (1, 128, 56, 56), (128, 128, 3, 3), dict(strides=[2, 2], pads=[1, 1, 1, 1])),
    )
    for name, xs, ws, attrs in layers:
        dev_ms, ort_ms = conv_ms(xs, ws, **attrs)
        print(f"  {name:<30} {dev_ms:8.1f} {ort_ms:8.1f}")


if __name__ == "__main__":
    main()
