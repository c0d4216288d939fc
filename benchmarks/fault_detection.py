"""Fault-detection benchmark (issue 9): every deliberately wrong variant of impl hunted by the
checker from a clean start.

    python benchmarks/fault_detection.py [--plain] [--only NAME ...] [--seed N] [--budget S] [--save DIR]

Prints one row per variant (the invariant that caught it, seconds to detection, the shrunk
counterexample's node count, its file with --save), then the median and max time. Exits 1 if
any variant is missed or a target is not met: median <= 10 s, each <= 120 s, <= 6 nodes
(checks/faults/report.py). A missed variant with a documented known gap is shown, not counted.

``--plain`` hunts every variant with exactly plain ``zcspec explore``'s campaign from a clean
start (the default scenario mix, no per-variant search space: checks/faults/hunt.py
``hunt_plain``); the target is then detection within the budget (120 s) for every variant.
"""
from __future__ import annotations

import argparse
import sys

from zcspec.checks.faults.hunt import BUDGET
from zcspec.checks.faults.registry import get, variants
from zcspec.checks.faults.report import hunt_all


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", metavar="NAME", help="hunt only this variant (repeatable)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget", type=float, default=BUDGET, help="seconds per variant (default 120)")
    ap.add_argument("--save", metavar="DIR", help="write each counterexample as DIR/<variant>.json")
    ap.add_argument("--plain", action="store_true",
                    help="hunt with plain `zcspec explore`'s default campaign, not each variant's own search space")
    args = ap.parse_args(argv)
    chosen = [get(n) for n in args.only] if args.only else list(variants())
    return 0 if hunt_all(chosen, seed=args.seed, budget=args.budget, save=args.save, plain=args.plain).ok else 1


if __name__ == "__main__":
    sys.exit(main())
