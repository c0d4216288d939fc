"""Other compilers' plans, checked: the table of docs/foreign-planners.md.

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
from pathlib import Path

from zcspec.checks.foreign.plan_report import plan_report
from zcspec.checks.foreign.programs import PROGRAMS, foreign_cases, problems


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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=Path, default=PROGRAMS, help=f"the programs' folder (default {PROGRAMS})")
    args = parser.parse_args(argv)
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
