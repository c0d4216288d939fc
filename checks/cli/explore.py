"""``zcspec explore --time SECONDS --seed N``: a time-boxed random campaign that writes counterexamples.

It draws the default scenario mix (checks/strategies/scenarios.py: plans, model files, executions
through both runtimes with random bindings); a crash of the code under test is printed and fails
the run, and the next seed goes on."""
from __future__ import annotations

import os
import sys

from zcspec.checks.campaign import explore
from zcspec.checks.errors import UsageError
from zcspec.checks.strategies.scenarios import EXPLORE_MAX_NODES as MAX_NODES
from zcspec.checks.strategies.scenarios import scenarios


def configure(parser) -> None:
    parser.add_argument("--time", type=float, default=60.0, metavar="SECONDS", help="time budget (default 60)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (each batch takes the next)")
    parser.add_argument("--max-nodes", type=int, default=MAX_NODES, help=f"largest random graph (default {MAX_NODES} nodes)")
    parser.add_argument("--out", default="counterexamples", help="folder for counterexample files (default ./counterexamples)")


def run(args) -> int:
    if args.time <= 0 or args.max_nodes < 1:
        raise UsageError("--time must be positive and --max-nodes at least 1")
    def progress(tally, elapsed):
        print(f"{elapsed:6.1f} s: {tally.cases} cases, {sum(tally.violated.values())} violations", file=sys.stderr)

    crashes: list = []
    tally, found = explore(scenarios(max_nodes=args.max_nodes), seconds=args.time, seed=args.seed, on_batch=progress,
                           crashes=crashes)
    for c in crashes:
        print(f"crash of the code under test (not a spec verdict), {c}")
    os.makedirs(args.out, exist_ok=True)
    for k, cx in enumerate(found):
        path = os.path.join(args.out, f"{cx.invariant.lower()}-{args.seed}-{k}.json")
        cx.save(path)
        print(f"{path}: {cx.invariant}: {cx.violation['culprit']}: {cx.violation['message']}")
    for case, claim, reason in tally.unknown[:10]:   # Z3 gave up: shown, not a counterexample
        print(f"proof unknown (not a counterexample), {claim} on case {case[:12]}: {reason}")
    print(f"proofs: {tally.proof_summary()}")
    print(f"{tally.cases} cases, {len(found)} counterexamples, {len(crashes)} crashed campaigns")
    return 1 if found or crashes else 0
