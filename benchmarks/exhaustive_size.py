"""How many graphs the exhaustive mode enumerates up to N nodes, and what checking them costs.

    python benchmarks/exhaustive_size.py [--count-max-nodes 4] [--check-max-nodes 2] [--execution-max-nodes 2]

First, for every N up to ``--count-max-nodes``: the structures (node sequences; deduplicated, and
every node order) and the graphs (structures times output choices; deduplicated, and every order)
``zcspec exhaustive --max-nodes N`` enumerates with the default arguments, each counted without
building a graph (``count_graphs``), with the seconds each count took. Then every graph up to
``--check-max-nodes`` checked as ``zcspec exhaustive`` checks it (kinds plan and model file, both
strategies, one process): graphs, observations, findings, seconds and the rate, and how long the
larger N would take at that rate (an estimate, marked so: the N=3 run is the ``exhaustive-workers``
figure). Then the same with ``--kinds execution`` up to ``--execution-max-nodes``: the cost of one
graph's executions, and the same kind of estimate. The 1-minute load average is printed before and
after (the figures move with it). Exits 1 on a finding.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from zcspec.checks.exhaustive import DEFAULT_OPS, _structures, count_graphs, run_exhaustive

STRATEGIES = ("ge", "compact")
MAX_INPUTS = 2   # all_graphs' default


def _timed(fn, *args, **kwargs):
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - start


def _count_structures(n: int, dedupe: bool) -> int:
    return sum(1 for _ in _structures(n, DEFAULT_OPS, MAX_INPUTS, dedupe))


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _estimates(counts: dict, done: int, rate: float) -> None:
    for n in sorted(k for k in counts if k > done):
        print(f"  N={n}: {counts[n]:,} graphs would take about {_duration(counts[n] / rate)} at that rate "
              f"(estimate, not run)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count-max-nodes", type=int, default=4, help="count the graphs up to this N (default 4)")
    ap.add_argument("--check-max-nodes", type=int, default=2, help="check plan + model file up to this N (default 2)")
    ap.add_argument("--execution-max-nodes", type=int, default=2,
                    help="check executions up to this N (default 2; 0: none)")
    args = ap.parse_args(argv)
    print(f"exhaustive mode over {','.join(DEFAULT_OPS)} (up to {MAX_INPUTS} inputs, 1 extra output); "
          f"load average (1 min) {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    print(f"{'N':>2} {'structures deduped':>19} {'all orders':>11} {'graphs deduped':>15} {'all orders':>11}"
          f"   seconds to count: structures, graphs (deduped)")
    counts = {}
    for n in range(1, args.count_max_nodes + 1):
        structures, s_s = _timed(_count_structures, n, True)
        all_structures = _count_structures(n, False)
        graphs, g_s = _timed(count_graphs, n)
        all_graphs = count_graphs(n, dedupe=False)
        counts[n] = graphs
        print(f"{n:>2} {structures:>19,} {all_structures:>11,} {graphs:>15,} {all_graphs:>11,}   "
              f"{s_s:.2f} s, {g_s:.2f} s", flush=True)
    findings = 0
    for title, kinds, top in (("plan + model file, both strategies", ("plan", "model_file"), args.check_max_nodes),
                              ("executions (--kinds execution)", ("execution",), args.execution_max_nodes)):
        if top < 1:
            continue
        print(f"checked, {title}, one process:")
        rate = None
        for n in range(1, top + 1):
            run = run_exhaustive(n, kinds=kinds, strategies=STRATEGIES)
            findings += len(run.failures)
            rate = run.graphs / run.seconds
            print(f"  N={n}: {run.graphs:,} graphs, {run.tally.cases:,} observations "
                  f"({run.tally.cases / run.graphs:.0f} a graph), {len(run.failures)} findings, {run.seconds:.1f} s: "
                  f"{rate:,.0f} graphs/s, {1000 / rate:.1f} ms a graph", flush=True)
        _estimates(counts, top, rate)
    print(f"load average (1 min) after: {os.getloadavg()[0]:.1f}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
