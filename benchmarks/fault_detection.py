"""Fault-detection benchmark (issue 9): every deliberately wrong variant of impl hunted by the
checker from a clean start.

    python benchmarks/fault_detection.py [--plain] [--only NAME ...] [--seed N] [--budget S] [--save DIR]
    python benchmarks/fault_detection.py --real-code [--seed N] [--budget S]

Prints one row per variant (the invariant that caught it, seconds to detection, the shrunk
counterexample's node count, its file with --save), then the median and max time. Exits 1 if
any variant is missed or a target is not met: median <= 10 s, each <= 120 s, <= 6 nodes
(checks/faults/report.py). A missed variant with a documented known gap is shown, not counted.

``--plain`` hunts every variant with exactly plain ``zcspec explore``'s campaign from a clean
start (the default scenario mix, no per-variant search space: checks/faults/hunt.py
``hunt_plain``); the target is then detection within the budget (120 s) for every variant.

``--real-code`` installs no variant: it runs plain ``zcspec explore --time BUDGET --seed N`` on the
real code, in-process and from a clean start (one worker, no example database), and prints the
cases it ran, the proofs, every counterexample and crashed campaign, and its seconds. Exits 1 on
any counterexample or crash (the real code must pass).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from zcspec.checks.faults.hunt import BUDGET
from zcspec.checks.faults.registry import get, variants
from zcspec.checks.faults.report import hunt_all
from zcspec.checks.strategies.scenarios import EXPLORE_MAX_NODES


def explore_real_code(seed: int, budget: float) -> int:
    """Plain explore on the real code for ``budget`` seconds from ``seed``; 0 when it finds nothing."""
    from zcspec.checks.explore_parallel import run_explore

    load = os.getloadavg()[0]
    start = time.perf_counter()
    result = run_explore(EXPLORE_MAX_NODES, budget, seed=seed, workers=1)
    seconds = time.perf_counter() - start
    print(f"zcspec explore --time {budget:g} --seed {seed} on the real code (up to {EXPLORE_MAX_NODES} nodes, "
          f"one worker, clean start)")
    for cx in result.counterexamples:
        print(f"  counterexample: {cx.invariant}: {cx.violation['culprit']}: {cx.violation['message'][:160]}")
    for c in result.crashes:
        print(f"  crashed campaign: {c}")
    print(f"  proofs: {result.tally.proof_summary()}")
    print(f"  {result.tally.cases:,} cases, {len(result.counterexamples)} counterexamples, "
          f"{len(result.crashes)} crashed campaigns; {seconds:.1f} s; load average (1 min) {load:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores")
    return 1 if result.counterexamples or result.crashes else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", metavar="NAME", help="hunt only this variant (repeatable)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget", type=float, default=BUDGET, help="seconds per variant (default 120)")
    ap.add_argument("--save", metavar="DIR", help="write each counterexample as DIR/<variant>.json")
    ap.add_argument("--plain", action="store_true",
                    help="hunt with plain `zcspec explore`'s default campaign, not each variant's own search space")
    ap.add_argument("--real-code", action="store_true",
                    help="no variant: plain `zcspec explore` on the real code for the budget (it must find nothing)")
    args = ap.parse_args(argv)
    if args.real_code:
        return explore_real_code(args.seed, args.budget)
    chosen = [get(n) for n in args.only] if args.only else list(variants())
    return 0 if hunt_all(chosen, seed=args.seed, budget=args.budget, save=args.save, plain=args.plain).ok else 1


if __name__ == "__main__":
    sys.exit(main())
