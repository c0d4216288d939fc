"""``zcspec check PLAN.json ...``: judge plans of any planner by every claim that applies to them.

A plan file is what ``zcspec import`` writes or what ``zcspec plan --json`` prints. For each the
command prints the claims applied and exercised, every violation with its culprit, and each
activation arena against the lower bound the spec computes and the arena the compact strategy
finds for the same buffers (checks/foreign/plan_report.py). Exit 1 when a plan breaks a claim,
2 on a file that cannot be read.
"""
from __future__ import annotations

import json

from zcspec.checks.errors import UsageError
from zcspec.checks.foreign import plan_file
from zcspec.checks.foreign.plan_report import plan_report
from zcspec.spec.observables import to_data
from zcspec.spec.picture import render_plan


def add_report_arguments(parser) -> None:
    parser.add_argument("--picture", metavar="FILE.svg", help="draw the layout: steps across, addresses up")
    parser.add_argument("--json", action="store_true", help="print each report as one JSON object per line")
    parser.add_argument("--no-compact", action="store_true",
                        help="skip packing each arena with the compact strategy (faster on large plans)")


def configure(parser) -> None:
    parser.add_argument("plans", nargs="+", metavar="PLAN.json", help="plan files (zcspec import -o, zcspec plan --json)")
    add_report_arguments(parser)


def print_reports(plans, args) -> int:
    if args.picture and len(plans) > 1:
        raise UsageError(f"--picture draws one plan, {len(plans)} given")
    bad = 0
    for p in plans:
        report = plan_report(p.plan, title=p.title, compact=not args.no_compact)
        bad += not report.ok
        if args.json:
            print(json.dumps({"plan": p.title, "source": p.source, "ok": report.ok,
                              "report": to_data(report.report), "arenas": [to_data(a) for a in report.arenas]},
                             sort_keys=True, default=str))
        else:
            print("\n".join(report.lines()))
        if args.picture:
            render_plan(p.plan, args.picture, title=f"{p.title}: {len(p.plan.tensors)} tensors")
            if not args.json:
                print(f"  picture: {args.picture}")
    if len(plans) > 1 and not args.json:
        print(f"{len(plans)} plan(s), {bad} with violations")
    return 1 if bad else 0


def run(args) -> int:
    return print_reports([plan_file.read(path) for path in args.plans], args)
