"""``zcspec check PLAN.json ...``: judge plans of any planner by every claim that applies to them.

A plan file is the ``zcspec-plan`` format (docs/plan-format.md): what ``zcspec import -o`` writes,
what ``zcspec plan --json`` prints, or what your own planner exports. For each the command prints
the claims applied and exercised and those the plan gives no facts for (not judged), every
violation with its culprit, and each activation arena against the lower bound the spec computes and
the arena the compact strategy finds for the same buffers (checks/foreign/plan_report.py).
Exit 1 when a plan breaks a claim or an arena exceeds ``--max-ratio``, 2 on a file that is not a
plan (the message names the file and the JSON path). ``--junit FILE`` writes one test case per
claim and plan for CI systems (checks/junit_report.py).
"""
from __future__ import annotations

import argparse
import json

from zcspec.checks.cli.arguments import number_at_least
from zcspec.checks.errors import UsageError
from zcspec.checks.foreign import plan_file
from zcspec.checks.junit_report import write_junit
from zcspec.checks.plan_api import check_plan
from zcspec.spec.picture import render_plan


def _claims(text: str) -> tuple[str, ...]:
    claims = tuple(c.strip() for c in text.split(",") if c.strip())
    if not claims:
        raise argparse.ArgumentTypeError(f"{text!r}: give claim ids separated by commas, e.g. LAYOUT-NO-OVERLAP")
    return claims


def add_report_arguments(parser) -> None:
    parser.add_argument("--picture", metavar="FILE.svg", help="draw the layout: steps across, addresses up")
    parser.add_argument("--json", action="store_true", help="print each report as one JSON object per line")
    parser.add_argument("--no-compact", action="store_true",
                        help="skip packing each arena with the compact strategy (faster on large plans)")
    parser.add_argument("--max-ratio", metavar="R", type=number_at_least(1, "1.25 (an arena over its lower bound)"),
                        help="fail (exit 1) when an activation arena exceeds R x its lower bound, e.g. 1.25")
    parser.add_argument("--junit", metavar="FILE.xml",
                        help="also write a JUnit XML report: one test case per claim and plan (and per arena "
                             "with --max-ratio); a claim not judged is a skipped case")
    parser.add_argument("--claims", metavar="ID,ID", type=_claims,
                        help="judge only these claims (default: every claim that applies)")
    parser.add_argument("--soc", metavar="NAME",
                        help="judge the plans as made for this SoC (spec/capabilities.py), whatever they name")


def configure(parser) -> None:
    parser.add_argument("plans", nargs="+", metavar="PLAN.json",
                        help="plan files (docs/plan-format.md: zcspec import -o, zcspec plan --json, your planner)")
    add_report_arguments(parser)


def print_reports(plans, args) -> int:
    """Judge each ImportedPlan of ``plans`` and print its report; 1 when one is not ok."""
    if args.picture and len(plans) > 1:
        raise UsageError(f"--picture draws one plan, {len(plans)} given")
    reports = []
    for p in plans:
        report = check_plan(p.plan, claims=args.claims, soc=args.soc, max_ratio=args.max_ratio,
                            compact=not args.no_compact, title=p.title)
        reports.append(report)
        if args.json:
            print(json.dumps({**report.to_dict(), "source": p.source}, sort_keys=True))
        else:
            print(str(report))
        if args.picture:
            render_plan(p.plan, args.picture, title=f"{p.title}: {len(p.plan.tensors)} tensors")
            if not args.json:
                print(f"  picture: {args.picture}")
    bad = sum(not r.ok for r in reports)
    if len(plans) > 1 and not args.json:
        print(f"{len(plans)} plan(s), {bad} not ok")
    if args.junit:
        write_junit(reports, args.junit)
        if not args.json:
            print(f"JUnit report written to {args.junit}")
    return 1 if bad else 0


def run(args) -> int:
    return print_reports([plan_file.read(path) for path in args.plans], args)
