"""``zcspec exhaustive --max-nodes N``: check every graph up to N nodes over a small op set.

See checks/exhaustive.py for what is enumerated. Prints progress (stderr), the
per-invariant table, and the smallest failing graph of each violated
invariant, written as a counterexample file to ``--save DIR`` (default
./counterexamples, as zcspec explore; each kind of crash as a scenario file).
Exit 1 on any violation or crash.

``--workers N`` checks the graphs on N local processes, ``--cluster ADDRESS`` on
an existing Dask scheduler (checks/exhaustive_parallel.py: sharded by graph,
exactly the single-process result). Progress (graphs done, rate, time left,
findings) is one live line on a terminal, plain lines otherwise or under CI.
"""
from __future__ import annotations

import json
import os
import sys
import time
import types

from zcspec.checks.cli.verify import invariant_table
from zcspec.checks.errors import UsageError
from zcspec.checks.exhaustive import DEFAULT_OPS
from zcspec.checks.exhaustive_parallel import run_exhaustive_sharded
from zcspec.checks.progress import Progress
from zcspec.checks.report_page import check_writable, exhaustive_report, write_report
from zcspec.checks.report_page import smallest_failures as _smallest   # the one a report draws, too
from zcspec.checks.scenario import KINDS
from zcspec.spec.registry import all_invariants


def configure(parser) -> None:
    parser.add_argument("--max-nodes", type=int, default=3, help="largest graph, in compute/view nodes (default 3)")
    parser.add_argument("--kinds", default="plan,model_file",
                        help="artefacts to check, comma-separated from plan,model_file,execution "
                             "(default plan,model_file; execution runs every graph through both runtimes)")
    parser.add_argument("--strategy", action="append", choices=("ge", "compact"),
                        help="planning strategies (default both)")
    parser.add_argument("--ops", default=",".join(DEFAULT_OPS),
                        help=f"op forms to enumerate, comma-separated (default {','.join(DEFAULT_OPS)}; "
                             "Relu! is Relu in place)")
    parser.add_argument("--max-inputs", type=int, default=2, help="graph inputs, 1..N (default 2)")
    parser.add_argument("--max-extra-outputs", type=int, default=1,
                        help="outputs besides the unread tensors, chosen among the read ones (default 1)")
    parser.add_argument("--no-dedupe", action="store_true",
                        help="keep every node order of a structure (the execution order follows it)")
    parser.add_argument("--soc", default="ascend910b", help="SoC profile (default ascend910b)")
    parser.add_argument("--save", metavar="DIR", default="counterexamples",
                        help="folder for a counterexample file per violated invariant (default ./counterexamples, "
                             "as zcspec explore)")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="local worker processes (default 1; the result is the same for every N)")
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="run the shards on an existing Dask scheduler, e.g. tcp://10.0.0.5:8786 "
                             "(pip install 'zcspec[cluster]'; every worker needs zcspec installed)")
    parser.add_argument("--shards", type=int, metavar="K",
                        help="pieces the enumeration is cut into (default: --workers locally, 8 on a cluster)")
    parser.add_argument("--html", metavar="FILE",
                        help="also write the run as one self-contained HTML page (coverage per claim, each "
                             "violated claim's smallest failing graph drawn with its plan rows and layout)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def _parse(args):
    kinds = tuple(k for k in args.kinds.split(",") if k)
    ops = tuple(o for o in args.ops.split(",") if o)
    if not kinds or set(kinds) - set(KINDS):
        raise UsageError(f"--kinds {args.kinds!r}: unknown kinds {sorted(set(kinds) - set(KINDS))}; "
                         f"known: {','.join(KINDS)}")
    if not ops or set(ops) - set(DEFAULT_OPS):
        raise UsageError(f"--ops {args.ops!r}: unknown op forms {sorted(set(ops) - set(DEFAULT_OPS))}; "
                         f"known: {','.join(DEFAULT_OPS)}")
    if args.max_nodes < 1 or args.max_inputs < 1 or args.max_extra_outputs < 0:
        raise UsageError("--max-nodes and --max-inputs must be at least 1, --max-extra-outputs at least 0")
    if args.workers < 1 or (args.shards is not None and args.shards < 1):
        raise UsageError(f"--workers and --shards must be at least 1 (got --workers {args.workers}, "
                         f"--shards {args.shards})")
    return kinds, ops


def _describe(graph) -> str:
    """One line per node: ``name = Op(inputs)``."""
    return "; ".join(f"{n.name} = {n.op_type}({', '.join(n.inputs)})" for n in graph.nodes if n.op_type != "Data")


def _report_failures(failures, save: str | None) -> None:
    if save:
        os.makedirs(save, exist_ok=True)
    for key, f in sorted(_smallest(failures).items()):
        s = f.scenario
        what = f"VIOLATION {f.invariant}" if f.invariant else "CRASH"
        print(f"\n{what} ({sum(1 for g in failures if (g.invariant or g.message.split(':')[0]) == key)} cases); "
              f"smallest: {s.kind}, strategy {s.compile.strategy}\n  graph: {_describe(s.graph)}"
              f"\n  {f.culprit}: {f.message}")
        if not save:
            continue
        path = os.path.join(save, f"exhaustive-{key.lower()}.json")
        cx = f.counterexample()
        with open(path, "w", encoding="utf-8") as out:
            out.write(cx.to_json() if cx else json.dumps({"crash": f.message, "scenario": s.to_dict()}, indent=1))
        print(f"  saved to {path}" + (f"; replay with: zcspec replay {path}" if cx else ""))


def run(args) -> int:
    kinds, ops = _parse(args)
    if args.html:
        check_writable(args.html)   # before the run, not after an hour of it
    strategies = tuple(args.strategy or ("ge", "compact"))
    progress = Progress("graphs")

    def on_progress(done, findings, total):
        if total is not None and progress.total is None:
            progress.set_total(total)
        if not args.quiet:
            progress.update(done, findings)

    shards = args.shards or (8 if args.cluster else args.workers)
    where = f"the Dask cluster at {args.cluster}" if args.cluster else \
        f"{args.workers} worker process{'es' if args.workers > 1 else ''}"
    if not args.quiet:
        print(f"checking every graph up to {args.max_nodes} nodes on {where} ({shards} shards)", file=sys.stderr)
    start = time.perf_counter()
    result = run_exhaustive_sharded(args.max_nodes, kinds, strategies, workers=args.workers, cluster=args.cluster,
                                    shards=shards, soc=args.soc, on_progress=on_progress, ops=ops,
                                    max_inputs=args.max_inputs, max_extra_outputs=args.max_extra_outputs,
                                    dedupe=not args.no_dedupe)
    seconds = time.perf_counter() - start
    if not args.quiet:
        progress.finish()
    tally, failures = result.tally, list(result.failures)
    scopes = set(kinds) | ({"load"} if "execution" in kinds else set())
    invariants = [i for i in all_invariants() if i.applies_to in scopes]
    print("\n".join(invariant_table(types.SimpleNamespace(findings=[], tally=tally), invariants)))
    _report_failures(failures, args.save)
    crashes = sum(1 for f in failures if f.invariant is None)
    print(f"\n{result.graphs} graphs, {tally.cases} observations checked in {seconds:.1f} s: "
          + (f"FAILED ({len(failures) - crashes} violations, {crashes} crashes)" if failures else
             "every invariant held"))
    if args.html:
        write_report(exhaustive_report(tally, failures, invariants, result.graphs, seconds), args.html)
        print(f"report written to {args.html}")
    return 1 if failures else 0
