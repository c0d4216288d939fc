"""``zcspec replay FILE [...]``: re-run counterexamples and re-check kept plans; exit 1 while any still fails
(a counterexample kept as a documented hazard, ``expect: violation``, fails when it stops failing).

A FILE is one of: a zcspec counterexample (checks/counterexample.py), a foreign compiler's finding
(checks/foreign/finding.py), or a plan file of any planner (docs/plan-format.md: re-judged by every
claim, checks/plan_regression.py). ``--export-pytest`` writes a standalone regression test for any
of the first and the last.
"""
from __future__ import annotations

import json

from zcspec import __version__
from zcspec.checks.counterexample import Counterexample
from zcspec.checks.errors import UsageError
from zcspec.checks.foreign import plan_file
from zcspec.checks.foreign.finding import ForeignFinding, is_finding, replay_finding
from zcspec.checks.plan_api import check_plan
from zcspec.checks.plan_regression import export_plan_pytest, is_plan_file
from zcspec.checks.replay import corpus_files, export_pytest, replay


def configure(parser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help="counterexample, finding or plan .json files (default: the built-in corpus)")
    parser.add_argument("--export-pytest", metavar="OUT.py",
                        help="write the (single) counterexample or plan as a standalone pytest file")


def _replay_plan(path: str, export: str | None) -> bool:
    kept = plan_file.read(path)   # a malformed plan is bad input naming the JSON path: exit 2
    report = check_plan(kept.plan, title=kept.title, compact=False)
    state = "passes now (every claim holds)" if report.ok else "still fails"
    print(f"{path}: plan {kept.title!r}: {state}")
    if not report.ok:
        print("\n".join("  " + line for line in report.lines()))
    if export:
        export_plan_pytest(kept, export, __version__)
        print(f"wrote {export}")
    return not report.ok


def run(args) -> int:
    files = args.files or corpus_files()
    if args.export_pytest and len(files) != 1:
        raise UsageError("--export-pytest takes exactly one FILE")
    failing = 0
    for path in files:
        data = _peek(path)
        if is_plan_file(data):
            failing += _replay_plan(path, args.export_pytest)
            continue
        if is_finding(data):     # a foreign compiler's finding (checks/foreign/finding.py)
            if args.export_pytest:
                raise UsageError(f"{path}: --export-pytest takes a zcspec counterexample or a plan, "
                                 "not a foreign finding")
            result = replay_finding(ForeignFinding.load(path))
            print(f"{path}: {result.summary()}")
            failing += result.still_fails
            continue
        cx = Counterexample.load(path)  # a malformed file is a CounterexampleError: bad input, exit code 2
        result = replay(cx)
        print(f"{path}: {result.summary()}")
        failing += not result.as_expected   # a documented hazard (expect: violation) is expected to keep failing
        if args.export_pytest:
            export_pytest(cx, args.export_pytest)
            print(f"wrote {args.export_pytest}")
    if not files:
        print("no counterexamples to replay")
    return 1 if failing else 0


def _peek(path: str):
    """The file's JSON, or None when it is not JSON (Counterexample.load then names what is wrong)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
