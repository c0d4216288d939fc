"""Which seeded bugs the exhaustive mode catches, and on which graph first: the table of docs/checker.md.

    python benchmarks/exhaustive_faults.py [--max-nodes 2] [--variants NAME ...]

For each fault variant of checks/faults the table lists (the planner's and the compiler's, and a
runtime one with executions), installs it and runs ``zcspec exhaustive``'s check over every graph up
to ``--max-nodes`` nodes (``ge`` strategy, kinds plan and model file; with executions for the
runtime variant), on each SoC profile the variant needs, and prints the first graph in
enumeration order that fails, its node count and every claim broken on it. The real code is run
first on the same graphs and must be clean (else the row would not be the variant's). Exits 1 when
the real code is not clean.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from zcspec.checks.exhaustive import run_exhaustive
from zcspec.checks.faults.registry import active

# (variant, kinds, SoCs): the variants whose rows docs/checker.md shows.
ROWS = (
    ("zc-align-32", ("plan", "model_file"), ("ascend910b",)),
    ("zc-block-merged", ("plan", "model_file"), ("ascend910b",)),
    ("lifetime-half-open", ("plan", "model_file"), ("ascend910b",)),
    ("output-reused-early", ("plan", "model_file"), ("ascend910b",)),
    ("touching-lifetimes-merged", ("plan", "model_file"), ("ascend910b",)),
    ("block-one-unit-short", ("plan", "model_file"), ("ascend910b",)),
    ("atomic-block-reused", ("plan", "model_file"), ("ascend910b", "ascend310p")),
    ("memcpy-addr-async-skipped", ("plan", "model_file"), ("ascend910b", "legacy")),
    ("layout-conflict-skipped", ("plan", "model_file"), ("ascend310p", "legacy")),
    ("view-offset-dropped", ("execution",), ("ascend910b",)),
)


def _first(run) -> str:
    if not run.failures:
        return "not caught"
    index = run.failures[0].index
    claims = sorted({f.invariant or "crash" for f in run.failures if f.index == index})
    nodes = sum(1 for n in run.failures[0].scenario.graph.nodes if n.op_type not in ("Data", "NetOutput"))
    return f"graph {index} ({nodes} compute or view node{'s' if nodes != 1 else ''}): {', '.join(claims)}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-nodes", type=int, default=2, help="largest graph (default 2)")
    parser.add_argument("--variants", nargs="*", default=(), metavar="NAME", help="only these rows")
    args = parser.parse_args(argv)
    print(f"exhaustive mode over every graph up to {args.max_nodes} nodes, ge strategy; "
          f"load average (1 min) {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    baseline: dict = {}
    bad = 0
    print("| fault variant | SoC | kinds | first failing graph |\n|---|---|---|---|")
    for name, kinds, socs in ROWS:
        if args.variants and name not in args.variants:
            continue
        for soc in socs:
            key = (kinds, soc)
            if key not in baseline:
                baseline[key] = run_exhaustive(args.max_nodes, kinds, ("ge",), soc=soc)
                if baseline[key].failures:
                    bad += 1
                    print(f"| (real code) | {soc} | {','.join(kinds)} | NOT CLEAN: {_first(baseline[key])} |")
            start = time.perf_counter()
            with active(name):
                run = run_exhaustive(args.max_nodes, kinds, ("ge",), soc=soc)
            print(f"| `{name}` | {soc} | {','.join(kinds)} | {_first(run)} ({time.perf_counter() - start:.0f} s) |")
    print(f"load average (1 min) after: {os.getloadavg()[0]:.1f}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
