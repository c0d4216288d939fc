"""``zcspec explore --time SECONDS --seed N``: a time-boxed random campaign that writes counterexamples.

It draws the default scenario mix (checks/strategies/scenarios.py: plans, model files, executions
through both runtimes with random bindings); a crash of the code under test is printed and fails
the run, and the next seed goes on.

``--workers N`` runs N campaigns side by side (local processes; ``--cluster ADDRESS``: tasks on a
Dask scheduler), each for the whole ``--time``, on distinct seeds, sharing one Hypothesis example
database (``--database DIR``; default ``OUT/examples`` when there is more than one worker): a
failure found by one is replayed by the others (checks/explore_parallel.py). Counterexamples are
collected in ``--out``, one per claim and shrunk graph."""
from __future__ import annotations

import os
import sys
import time

from zcspec.checks.errors import UsageError
from zcspec.checks.explore_parallel import run_explore
from zcspec.checks.progress import Progress
from zcspec.checks.report_page import check_writable, explore_report, write_report
from zcspec.checks.strategies.scenarios import EXPLORE_MAX_NODES as MAX_NODES


def configure(parser) -> None:
    parser.add_argument("--time", type=float, default=60.0, metavar="SECONDS", help="time budget (default 60)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (each batch takes the next)")
    parser.add_argument("--max-nodes", type=int, default=MAX_NODES, help=f"largest random graph (default {MAX_NODES} nodes)")
    parser.add_argument("--out", default="counterexamples", help="folder for counterexample files (default ./counterexamples)")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="campaigns side by side on N local processes, distinct seeds (default 1)")
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="run the --workers campaigns on an existing Dask scheduler, e.g. tcp://10.0.0.5:8786 "
                             "(pip install 'zcspec[cluster]'; --database must be a folder every worker reaches)")
    parser.add_argument("--database", metavar="DIR",
                        help="Hypothesis example database shared by the workers: failures saved there are "
                             "replayed by every worker (default OUT/examples with more than one worker, none "
                             "with one)")
    parser.add_argument("--html", metavar="FILE",
                        help="also write the run as one self-contained HTML page (coverage per claim, each "
                             "counterexample's graph drawn with its plan rows and layout, proofs)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def run(args) -> int:
    if args.time <= 0 or args.max_nodes < 1 or args.workers < 1:
        raise UsageError("--time must be positive, --max-nodes and --workers at least 1")
    if args.html:
        check_writable(args.html)
    database = args.database or (os.path.join(args.out, "examples") if args.workers > 1 or args.cluster else None)
    progress = Progress("cases", budget=args.time)
    if not args.quiet:
        print(f"exploring for {args.time:g} s on {args.workers} worker{'s' if args.workers > 1 else ''}"
              + (f" at {args.cluster}" if args.cluster else "") + (f", sharing {database}" if database else ""),
              file=sys.stderr)

    def on_progress(cases, violations):
        if not args.quiet:
            progress.update(cases, violations)

    start = time.perf_counter()
    result = run_explore(args.max_nodes, args.time, seed=args.seed, workers=args.workers, cluster=args.cluster,
                         database=database, on_progress=on_progress)
    if not args.quiet:
        progress.finish()
    tally, found, crashes = result.tally, result.counterexamples, result.crashes
    for c in crashes:
        print(f"crash of the code under test (not a spec verdict), {c}")
    seconds = time.perf_counter() - start
    os.makedirs(args.out, exist_ok=True)
    paths = []
    for k, cx in enumerate(found):
        paths.append(path := os.path.join(args.out, f"{cx.invariant.lower()}-{args.seed}-{k}.json"))
        cx.save(path)
        print(f"{path}: {cx.invariant}: {cx.violation['culprit']}: {cx.violation['message']}")
    for case, claim, reason in tally.unknown[:10]:   # Z3 gave up: shown, not a counterexample
        print(f"proof unknown (not a counterexample), {claim} on case {case[:12]}: {reason}")
    if database:
        print("replayed from the shared database: " + ", ".join(f"worker {w.worker} {w.replayed}"
                                                               for w in result.workers))
    print(f"proofs: {tally.proof_summary()}")
    print(f"{tally.cases} cases, {len(found)} counterexamples, {len(crashes)} crashed campaigns")
    if args.html:
        write_report(explore_report(tally, found, crashes, seconds, names=paths), args.html)
        print(f"report written to {args.html}")
    return 1 if found or crashes else 0
