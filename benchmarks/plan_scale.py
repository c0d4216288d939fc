"""Planner scaling: synthetic graphs of 1k, 10k and 100k nodes, each strategy, times and growth exponent.

The graphs look like deep CNNs: a chain whose activation size changes every
few dozen nodes (8 size classes), a residual Add every 4 nodes reading a
tensor from 3-9 nodes back, a view now and then, an atomic ReduceSum and a
workspace here and there. Seeded, so every run plans the same graphs. The
time is ``plan_memory`` end to end (execution order, lifetimes, units,
blocks, offsets, placements, lower bound); the compact strategy runs the GE
planner too (it keeps the better) plus the packer with ``--time-limit``. The
exponent is the least-squares slope of log(time) against log(nodes).

Both strategies run numba-compiled code (level 2's walk, the packer); a process's first call of it
loads numba's compiler state (about half a second, once per process, even from its cache). So a
100-node graph is planned first with each strategy, its time printed apart, and the figures are
what each plan costs after that.

    python benchmarks/plan_scale.py [--sizes 1000 10000 100000]
"""
from __future__ import annotations

import argparse
import math
import random
import time

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import plan_memory

WIDTHS = (64, 96, 128, 192, 256, 384, 512, 768)


def synthetic_graph(nodes: int, seed: int = 0):
    rng = random.Random(seed)
    b = GraphBuilder(f"synthetic{nodes}")
    t = b.input("x", (1, 16, 32, 32))
    recent = [t]
    width = 16
    for i in range(nodes - 2):
        if i % 40 == 0:
            width = rng.choice(WIDTHS)
        shape = (1, width, 16, 16)
        if i % 4 == 3 and len(recent) > 9:
            skip = recent[-rng.randint(3, 9)]
            t = b.op("Add", [t, skip], name=f"n{i}", shape=shape)
        elif i % 29 == 7:
            t = b.op("Reshape", [t], name=f"n{i}", shape=b.desc(t).shape)
        elif i % 97 == 11:
            t = b.op("ReduceSum", [t], name=f"n{i}", shape=shape)
        elif i % 13 == 5:
            t = b.op("Relu", [t], name=f"n{i}", shape=shape, _workspace_bytes=(rng.choice(WIDTHS) * 64,))
        else:
            t = b.op("Relu", [t], name=f"n{i}", shape=shape)
        recent.append(t)
        del recent[:-10]
    b.output(t)
    return b.build(check=False)


def fit_exponent(points) -> float:
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--strategies", nargs="+", default=["ge", "compact"], choices=("ge", "compact"))
    parser.add_argument("--time-limit", type=float, default=1.0,
                        help="seconds the compact strategy's packer may spend improving (default 1)")
    args = parser.parse_args()
    graphs = {n: synthetic_graph(n) for n in args.sizes}
    t0 = time.perf_counter()
    for strategy in args.strategies:
        plan_memory(synthetic_graph(100), PlanOptions(strategy=strategy, time_limit=args.time_limit))
    print(f"warm-up (numba's first call in this process, a 100-node graph per strategy): "
          f"{time.perf_counter() - t0:.2f} s")
    print(f"{'nodes':>8}{'strategy':>10}{'seconds':>10}{'arena MB':>11}{'LB MB':>9}{'ratio':>8}")
    for strategy in args.strategies:
        points = []
        for n, g in graphs.items():
            t0 = time.perf_counter()
            try:
                plan = plan_memory(g, PlanOptions(strategy=strategy, time_limit=args.time_limit))
            except MemoryError as e:  # reported, not hidden: the figure is missing, and why
                print(f"{len(g.nodes):>8}{strategy:>10}  failed after {time.perf_counter() - t0:.1f} s: "
                      f"{type(e).__name__}: {str(e)[:100]}", flush=True)
                continue
            dt = time.perf_counter() - t0
            points.append((len(g.nodes), dt))
            print(f"{len(g.nodes):>8}{strategy:>10}{dt:>10.2f}{plan.arena / 1e6:>11.3f}{plan.lower_bound / 1e6:>9.3f}"
                  f"{plan.arena / plan.lower_bound:>8.4f}", flush=True)
        if len(points) > 1:
            n_log_n = fit_exponent([(n, n * math.log(n)) for n, _ in points])
            print(f"{'':>8}{strategy:>10}  growth exponent {fit_exponent(points):.2f} (n log n over this range: {n_log_n:.2f})")


if __name__ == "__main__":
    main()
