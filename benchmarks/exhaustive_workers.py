"""The exhaustive mode on 1 and 2 worker processes (the speed-up), and a larger run on a local Dask cluster.

    python benchmarks/exhaustive_workers.py [--max-nodes 3] [--cluster-max-nodes 4 --cluster-ops OPS]

First the same run (every graph up to ``--max-nodes``, plan and model file,
both strategies) with ``--workers 1`` and then ``--workers 2``, one after the
other in this run: their wall-clock times, the speed-up, and whether the two
results are identical (graph count, tally, failures). Then, unless
``--no-cluster``, a local Dask cluster of 2 single-threaded worker processes is
started and runs ``--cluster-max-nodes`` over the reduced op set
``--cluster-ops`` (8 shards): graphs, observations, findings and time. The
1-minute load average is printed before and after each run (other work on the
machine changes the figures: quote them with it). Exits 1 if the 1- and
2-worker results differ.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from zcspec.checks.exhaustive_parallel import run_exhaustive_sharded

KINDS, STRATEGIES = ("plan", "model_file"), ("ge", "compact")
CLUSTER_OPS = "Relu,Relu!,Add,ReduceSum,PhonyConcat"


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=os.path.dirname(__file__), check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _timed(label: str, **kwargs):
    load = os.getloadavg()[0]
    start = time.perf_counter()
    run = run_exhaustive_sharded(**kwargs)
    seconds = time.perf_counter() - start
    print(f"  {label}: {run.graphs:,} graphs, {run.tally.cases:,} observations, {len(run.failures)} findings, "
          f"{seconds:.1f} s ({run.graphs / seconds:,.0f} graphs/s); load average (1 min) {load:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after", flush=True)
    return run, seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-nodes", type=int, default=3)
    ap.add_argument("--cluster-max-nodes", type=int, default=4)
    ap.add_argument("--cluster-ops", default=CLUSTER_OPS)
    ap.add_argument("--no-cluster", action="store_true")
    args = ap.parse_args(argv)
    print(f"exhaustive mode at commit {_commit()} ({time.strftime('%a %d %b %Y %H:%M UTC', time.gmtime())}), "
          f"{os.cpu_count()} cores")
    print(f"every graph up to {args.max_nodes} nodes, {'+'.join(KINDS)}, strategies {'+'.join(STRATEGIES)}:")
    one, t1 = _timed("1 worker ", max_nodes=args.max_nodes, kinds=KINDS, strategies=STRATEGIES, workers=1)
    two, t2 = _timed("2 workers", max_nodes=args.max_nodes, kinds=KINDS, strategies=STRATEGIES, workers=2)
    same = (one.graphs, one.tally, one.failures) == (two.graphs, two.tally, two.failures)
    print(f"  speed-up 1 -> 2 workers: {t1 / t2:.2f}x; results identical: {'yes' if same else 'NO'}")
    if not args.no_cluster:
        from distributed import LocalCluster   # the optional 'cluster' extra

        ops = tuple(o for o in args.cluster_ops.split(",") if o)
        print(f"local Dask cluster, 2 workers x 1 thread, 8 shards: every graph up to {args.cluster_max_nodes} "
              f"nodes over {','.join(ops)}:")
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            _timed("cluster  ", max_nodes=args.cluster_max_nodes, kinds=KINDS, strategies=STRATEGIES,
                   cluster=cluster.scheduler_address, shards=8, ops=ops)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
