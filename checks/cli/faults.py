"""``zcspec faults``: the fault catalogue (issue 9).

    zcspec faults                      list the variants
    zcspec faults NAME ... | --all     hunt them (table as in benchmarks/fault_detection.py)
    zcspec faults --replay FILE        replay a counterexample with its variant (found_with) and without

Exit codes: 0 ok; 1 a variant missed, a target not met, or a replay that does not fail under its
variant and pass on the real code; 2 an unknown variant or a bad counterexample file.
"""
from __future__ import annotations

from zcspec.checks.counterexample import Counterexample
from zcspec.checks.errors import UsageError
from zcspec.checks.faults.hunt import BUDGET
from zcspec.checks.faults.registry import get, variants
from zcspec.checks.faults.report import hunt_all, replay_against_variant


def configure(parser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME", help="variants to hunt")
    parser.add_argument("--all", action="store_true", help="hunt every variant")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=float, default=BUDGET, help="seconds per variant (default 120)")
    parser.add_argument("--save", metavar="DIR", help="write each counterexample as DIR/<variant>.json")
    parser.add_argument("--replay", metavar="FILE", help="a counterexample found on a variant")


def run(args) -> int:
    # An unknown variant (UnknownVariant) or a bad counterexample file (CounterexampleError) is
    # bad input: main maps it to exit code 2.
    if args.replay:
        return _replay(args.replay)
    if not args.names and not args.all:
        for v in variants():
            gap = "  [known gap]" if v.known_gap else ""
            print(f"{v.name:38} {v.area:11} {v.bug}{gap}")
        return 0
    chosen = list(variants()) if args.all else [get(n) for n in args.names]
    return 0 if hunt_all(chosen, seed=args.seed, budget=args.budget, save=args.save).ok else 1


def _replay(path: str) -> int:
    cx = Counterexample.load(path)
    if not cx.found_with:
        raise UsageError(f"{path}: found_with is empty: the counterexample was not found on a fault variant")
    faulty, real = replay_against_variant(cx)
    print(f"with {cx.found_with}: {faulty.summary()}")
    print(f"real code: {real.summary()}")
    return 0 if faulty.still_fails and not real.still_fails else 1
