"""Other compilers' plans, checked: the tables of docs/foreign-planners.md.

First one row per planner: the compiler versions the kept programs were made with, the programs
checked, the known bugs flagged (a kept program whose ``expect`` names the claim the bug breaks,
found by that claim alone), new findings (such a program with no public issue yet), and false
positives (a program kept as clean that breaks a claim). Then one row per plan:

For every program kept under checks/foreign/programs/PLANNER/NAME (or the folder ``--programs``
names, e.g. freshly made ones), reads the plan from the saved artefact, checks it with every claim
that applies and prints one row: the tensors and steps, the claims violated, and per activation
arena its size over the spec's lower bound and the compact strategy's arena for the same buffers.
The last columns time the reading and the checking.

    python benchmarks/foreign_plans.py
    python benchmarks/foreign_plans.py --programs /tmp/fresh   # after xla_programs --out /tmp/fresh
"""
from __future__ import annotations

import argparse
import sys
import time
import json
import re
from collections import defaultdict
from pathlib import Path

from zcspec.checks.foreign.plan_report import plan_report
from zcspec.checks.foreign import xla_dump
from zcspec.checks.foreign.programs import PROGRAMS, foreign_cases, problems
from zcspec.checks.foreign.xla_regressions import PAIRS
from zcspec.checks.plan_diff import diff_plans


def rows(root: Path):
    """One row per plan: a program with conditionals (ExecuTorch) has one per execution path."""
    for case in foreign_cases(root):
        t0 = time.perf_counter()
        plans = case.imported()
        t1 = time.perf_counter()
        reports = [plan_report(p.plan, title=p.program) for p in plans]
        t2 = time.perf_counter()
        wrong = problems(case, [r.report for r in reports])
        for p, r in zip(plans, reports):
            yield f"{case.planner}:{p.program}", case, p.plan, r, wrong, (t1 - t0) / len(plans), (t2 - t1) / len(plans)


# The key of program.json that names the compiler's version, per planner.
VERSION_KEY = {"executorch": "executorch", "iree": "iree_compile", "litert": "litert", "tvm": "tvm", "xla": "jaxlib"}


# How a planner's releases are named in the table (the package whose version program.json records).
RELEASE_NAME = {"executorch": "executorch", "iree": "iree", "litert": "litert", "tvm": "tvm", "xla": "jaxlib"}


def _release(version: str) -> tuple:
    """A version's numbers, for sorting 0.4.36 before 0.10.2 and 3.5.0rc... before 3.13.0rc..."""
    return tuple(int(n) for n in re.findall(r"\d+", version.split("rc")[0]))


def planner_rows(root: Path) -> list[str]:
    """The per-planner table (module doc), one markdown row per planner."""
    versions, programs, bugs, new, false_positives = (defaultdict(set), defaultdict(int), defaultdict(list),
                                                      defaultdict(list), defaultdict(list))
    for case in foreign_cases(root):
        meta = json.loads((case.folder / "program.json").read_text())
        version = str(meta.get(VERSION_KEY.get(case.planner, ""), "?"))
        versions[case.planner].add(version.split("version ")[-1].split(" ")[0])   # iree-compile's banner
        programs[case.planner] += 1
        wrong = problems(case, [plan_report(p.plan, compact=False).report for p in case.imported()])
        if case.expect == "clean":
            false_positives[case.planner] += [case.name] if wrong else []
        elif not wrong:
            (bugs if case.issue else new)[case.planner].append(f"{case.issue or case.name} ({case.expect})")
    for good, bad, issue in PAIRS:    # plan-quality regressions: found by zcspec diff, no claim breaks
        if not all((root / "xla" / f).is_dir() for f in (good, bad)):
            continue
        plans = [xla_dump.read_module(xla_dump.find_modules(root / "xla" / f)[0]) for f in (good, bad)]
        if not diff_plans(*plans).ok:
            bugs["xla"].append(f"{issue} (zcspec diff)")
    rows = []
    for planner in sorted(programs):
        named = ", ".join(f"{RELEASE_NAME.get(planner, planner)} {v}" for v in sorted(versions[planner], key=_release))
        rows.append(f"| {planner} | {named} | {programs[planner]} | "
                    f"{len(bugs[planner])}{': ' + '; '.join(bugs[planner]) if bugs[planner] else ''} | "
                    f"{len(new[planner])}{': ' + '; '.join(new[planner]) if new[planner] else ''} | "
                    f"{len(false_positives[planner])}{': ' + ', '.join(false_positives[planner]) if false_positives[planner] else ''} |")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=Path, default=PROGRAMS, help=f"the programs' folder (default {PROGRAMS})")
    args = parser.parse_args(argv)
    print("| planner | versions | programs | known bugs flagged | new findings | false positives |")
    print("|---|---|---|---|---|---|")
    print("\n".join(planner_rows(args.programs)))
    print()
    print("| program | tensors | steps | expected | claims violated | as expected | arena / lower bound "
          "| compact / lower bound | read s | check s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    bad = 0
    for label, case, plan, report, wrong, read_s, check_s in rows(args.programs):
        arenas = [a for a in report.arenas if a.lower_bound]
        size = sum(a.size for a in arenas)
        lb = sum(a.lower_bound for a in arenas)
        compact = sum(a.compact or 0 for a in arenas)
        ratio = f"{size:,} / {lb:,} = {size / lb:.3f}" if lb else "- (no temp arena)"
        cratio = f"{compact:,} / {lb:,} = {compact / lb:.3f}" if lb else "-"
        violated = ", ".join(report.report.violated()) or "none"
        expected = "clean" if case.expect == "clean" else f"{case.expect} ({case.issue})"
        bad += bool(wrong)
        print(f"| {label} | {len(plan.tensors)} | {len(plan.order)} | {expected} | {violated} | "
              f"{'yes' if not wrong else 'NO: ' + '; '.join(wrong)} | {ratio} | {cratio} | {read_s:.3f} | {check_s:.3f} |")
    print(f"\n{bad} program(s) not as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
