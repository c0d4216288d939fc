"""Runtime v1 refresh cost on a 10,000-task model: host time per execute call with fresh user
buffers every time vs the same buffers again, and slots refreshed vs total slots.

    python benchmarks/refresh_cost.py [--tasks 10000] [--every 10] [--runs 20]

The model is a chain of small Relu kernels; every ``--every``-th step adds the model
input again, so the input is referenced by many tasks (many registered slots).
Fresh buffers are allocated before the timed calls (that is the user's work); only
the execute call is timed, in CPU time, each fresh-buffer call followed by a call
with the same buffers again. Target: fresh / same <= 1.10.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import alloc_outputs, stage_inputs
from zcspec.impl.runtime.v1 import load


def chain(tasks: int, every: int):
    b = GraphBuilder(f"chain{tasks}")
    x = b.input("x", (4, 8))
    h = x
    for i in range(tasks):
        h = b.op("Add", [h, x], name=f"add{i}") if i % every == 0 else b.op("Relu", [h], name=f"relu{i}")
    b.output(h)
    return b.build()


def timed(lm, pairs) -> list[float]:
    """CPU seconds of each execute call (process time: the machine may be shared, wall time is noisy)."""
    out = []
    for ins, outs in pairs:
        t0 = time.process_time()
        lm.execute(ins, outs)
        out.append(time.process_time() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    t0 = time.perf_counter()
    model = build_model(chain(a.tasks, a.every))
    compile_s = time.perf_counter() - t0
    dev = Device(trace=False)
    lm = load(dev, model)
    x = {"x": np.ones((4, 8), np.float32)}
    fresh = [(stage_inputs(dev, model, x), alloc_outputs(dev, model)) for _ in range(a.runs)]
    timed(lm, fresh[:1])   # warm up (and bind the first set)
    same_t, fresh_t = [], []
    for k in range(a.runs):    # alternate call by call, so drift of the machine hits both alike
        fresh_t += timed(lm, [fresh[(k + 1) % a.runs]])
        same_t += timed(lm, [fresh[(k + 1) % a.runs]])
    t_same, t_fresh = statistics.median(same_t), statistics.median(fresh_t)
    rec_fresh = lm.execute(*fresh[1])
    rec_same = lm.execute(*fresh[1])
    total_slots = sum(len(t.slots) for t in model.tasks.tasks)
    print(f"model: {len(model.tasks.tasks)} tasks, {total_slots} argument slots, compile {compile_s:.1f} s")
    print(f"registered zero-copy slots: {lm.registered}")
    print(f"host time per execute, same buffers:  {t_same * 1e3:8.2f} ms (CPU, median of {a.runs})")
    print(f"host time per execute, fresh buffers: {t_fresh * 1e3:8.2f} ms")
    print(f"ratio fresh / same: {t_fresh / t_same:.3f} (target <= 1.10)")
    print(f"slots refreshed per execute: fresh {rec_fresh.counters.args_refreshed} / {total_slots}, "
          f"same {rec_same.counters.args_refreshed} / {total_slots}")


if __name__ == "__main__":
    main()
