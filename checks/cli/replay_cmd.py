"""``zcspec replay FILE [...]``: re-run counterexamples and re-check kept plans; exit 1 while any still fails
(a counterexample kept as a documented hazard, ``expect: violation``, fails when it stops failing).

A FILE is one of: a zcspec counterexample (checks/counterexample.py), a foreign compiler's finding
(checks/foreign/finding.py), a kept program's ``program.json`` (checks/foreign/programs/PLANNER/NAME/:
its artefact read again and judged against what it must show, a known bug found by its claim, a
clean program clean), or a plan file of any planner (docs/plan-format.md: re-judged by every claim,
checks/plan_regression.py). ``--export-pytest`` writes a standalone regression test for a
counterexample or a plan.
"""
from __future__ import annotations

import json
from pathlib import Path

from zcspec import __version__
from zcspec.checks.counterexample import Counterexample
from zcspec.checks.errors import UsageError
from zcspec.checks.foreign import plan_file
from zcspec.checks.foreign.finding import ForeignFinding, is_finding, replay_finding
from zcspec.checks.foreign.programs import foreign_case, is_kept_program, problems
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


def _replay_kept(path: str) -> bool:
    """Re-read a kept program's artefact and judge it against its ``expect``; True when it is not as kept."""
    case = foreign_case(Path(path))
    reports = [check_plan(p.plan, title=p.title, compact=False) for p in case.imported()]
    wrong = problems(case, [r.report for r in reports])
    shows = "clean" if case.expect == "clean" else f"{case.expect} ({case.issue or 'no issue yet'})"
    print(f"{path}: kept program {case.label}, must show {shows}: " + ("as kept" if not wrong else "NOT AS KEPT"))
    for report in reports:
        print("\n".join("  " + line for line in report.lines()))
    print("".join(f"  {w}\n" for w in wrong), end="")
    return bool(wrong)


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
        if is_kept_program(data):
            if args.export_pytest:
                raise UsageError(f"{path}: --export-pytest takes a zcspec counterexample or a plan, not a kept program")
            failing += _replay_kept(path)
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
