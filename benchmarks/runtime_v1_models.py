"""Runtime v1 on the 9 ONNX light models, zero copy on and off: what one execute call copies and
refreshes, how close the output is to the reference shipped beside each model, and how long it took.

    python benchmarks/runtime_v1_models.py [MODEL ...]

Each model is compiled once (default options), then for zero copy on and off loaded on a fresh
device and executed once on the input all ones (the input its shipped reference output is for).
Per run: the call's device copies (host to device, device to host, device to device, in bytes) and
argument slots refreshed out of those registered for zero copy, the input and output bytes, the
largest difference to the reference relative to the reference's largest magnitude, and the seconds
of load plus execute. The last line gives the total seconds of all runs (compiles apart) and the
1-minute load average before and after. Exits 1 if an output is off the reference by more than the
light-model test's rtol 1e-4 (tests/runtime_v1/test_light_models.py).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

from zcspec.checks.models import load_graph, zoo_path
from zcspec.checks.zoo import LIGHT
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import LoadOptions, load

RTOL = 1e-4


def _reference(name: str) -> np.ndarray:
    return numpy_helper.to_array(onnx.load_tensor(zoo_path(name).replace(".onnx", "_output_0.pb")))


def run(model, zero_copy: bool):
    """(execute counters, registered slots, output) of one load and call; the seconds of both."""
    start = time.perf_counter()
    dev = Device(model.soc)
    lm = load(dev, model, LoadOptions(zero_copy=zero_copy))
    ins = stage_inputs(dev, model, {d.tensor: np.ones(d.shape, np.float32) for d in model.tasks.inputs})
    outs = alloc_outputs(dev, model)
    record = lm.execute(ins, outs)
    seconds = time.perf_counter() - start
    got = read_outputs(dev, model, outs)[model.tasks.outputs[0].tensor]
    registered = lm.registered
    lm.unload()
    free_buffers(dev, ins + outs)
    return record.counters, registered, got, seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=list(LIGHT), help="light models (default: all 9)")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()[0]
    print(f"{'model':14} {'zero copy':9} {'H2D B':>6} {'D2H B':>6} {'D2D B':>9} {'refreshed':>9} {'I/O B':>9} "
          f"{'rel diff':>8} {'s':>6}")
    ok, total = True, 0.0
    for name in args.models:
        model = build_model(load_graph(f"zoo:{name}"))
        ref = _reference(name)
        io_bytes = sum(d.nbytes for d in model.tasks.inputs + model.tasks.outputs)
        for zero_copy in (True, False):
            c, registered, got, seconds = run(model, zero_copy)
            total += seconds
            diff = float(np.max(np.abs(got.reshape(ref.shape).astype(np.float64) - ref)) / np.max(np.abs(ref)))
            ok &= diff <= RTOL
            print(f"{name:14} {'on' if zero_copy else 'off':9} {c.h2d_bytes:6,} {c.d2h_bytes:6,} {c.d2d_bytes:9,} "
                  f"{f'{c.args_refreshed}/{registered}':>9} {io_bytes:9,} {diff:8.1e} {seconds:6.2f}")
    print(f"{2 * len(args.models)} runs, {total:.1f} s (load + execute); load average (1 min) {load_before:.1f} "
          f"before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores; "
          f"{'every output within' if ok else 'OUTPUTS OFF'} rtol {RTOL:g} of the reference")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
