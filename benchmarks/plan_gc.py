"""Why ``plan_memory`` pauses Python's cyclic garbage collector: the planner with and without the pause.

``plan_memory`` wraps the planning in ``plan._no_cyclic_gc`` (collector off, restored on every path,
exceptions included). Planning a large graph allocates about a million small objects that all stay
alive until it returns, and the collector would rescan them again and again. This script plans the
same synthetic graphs (benchmarks/plan_scale.py's) both ways, pair by pair, and prints each time and
the ratio, so the pause stays only while it pays.

    python benchmarks/plan_gc.py [--sizes 10000 100000] [--pairs 3] [--strategy ge]
"""
from __future__ import annotations

import argparse
import gc
import statistics
import time

from plan_scale import synthetic_graph

from zcspec.impl.compiler.memory import plan as plan_module
from zcspec.impl.compiler.memory.options import PlanOptions


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--pairs", type=int, default=3, help="runs of each variant, alternated (default 3)")
    parser.add_argument("--strategy", default="ge", choices=("ge", "compact"))
    args = parser.parse_args()
    options = PlanOptions(strategy=args.strategy, time_limit=1.0)
    print(f"{'nodes':>8}{'paused s':>10}{'running s':>11}{'ratio':>8}   (median of {args.pairs} pairs, {args.strategy})")
    for n in args.sizes:
        graph = synthetic_graph(n)
        paused, running = [], []
        for _ in range(args.pairs):
            paused.append(_timed(lambda: plan_module.plan_memory(graph, options)))
            assert gc.isenabled(), "plan_memory must restore the collector"
            running.append(_timed(lambda: plan_module._plan(graph, options, None)))
        p, r = statistics.median(paused), statistics.median(running)
        print(f"{len(graph.nodes):>8}{p:>10.2f}{r:>11.2f}{r / p:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
