"""``zcspec conformance [--op NAME ...] [--json | --markdown | --record | --sweep-record | --plan-record] [--cases]``: ONNX's node
tests for the claimed ops.

Runs every ONNX backend node test whose ops are all in the op table (``checks.conformance``)
through the front end, the compiler and both runtimes, two ways: as the file is (every graph
input fed at run time) and with the inputs the import asks for frozen to their test values
(``--value``). Prints a per-op table (cases; pass, refused, fail as the files are; how many of
those refusals are for a shape-, size- or task-deciding run-time operand; pass, refused, fail
frozen) and the totals. ``--cases`` lists every case that did not pass either way, with why.
Exit 1 when any case fails either way; a refusal that names a listed unsupported feature is
not a failure. ``--record`` and ``--sweep-record`` print the records verify holds the front end to
(the node tests' imports; the dtype sweep's refusals, checks/dtype_sweep_cases.py), and ``--plan-record`` the
zoo plans' region sizes (checks/plan_size_record.py), to review and commit.
"""
from __future__ import annotations

import json

from zcspec.checks import plan_size_record
from zcspec.checks.conformance import import_record, node_cases, tally
from zcspec.checks.conformance.report import as_json, markdown_table, text_table
from zcspec.checks.conformance.runner import run_both
from zcspec.checks.dtype_sweep_cases import refused_at_import, render_refusals, sweep_cases
from zcspec.checks.errors import UsageError
from zcspec.checks.onnx_node_cases import node_test_cases
from zcspec.checks.scenario import observe
from zcspec.checks.verify import VerifyConfig
from zcspec.checks.verify_cases import zoo_cases
from zcspec.checks.zoo import zoo_names
from zcspec.impl.compiler import ops


def configure(parser) -> None:
    parser.add_argument("--op", action="append", default=[], metavar="NAME",
                        help="only the cases using op NAME (repeatable); default: every claimed op")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="one JSON object: per-op tallies, totals, every case")
    out.add_argument("--markdown", action="store_true", help="the per-op table in Markdown (docs/frontend.md)")
    out.add_argument("--record", action="store_true",
                     help="print the import record verify holds the front end to (checks/conformance/imports.json): "
                          "per case, the refusal's feature or the inputs frozen; nothing is run")
    out.add_argument("--sweep-record", action="store_true",
                     help="print the dtype sweep's refusal record verify holds the front end to "
                          "(checks/conformance/dtype_refusals.json): the one-node models refused at import; "
                          "nothing is run")
    out.add_argument("--plan-record", action="store_true",
                     help="print the plan-size record verify holds the planner to (checks/conformance/plan_sizes.json): "
                          "the region sizes of the zoo's plans, every strategy verify plans with; plans, runs nothing")
    parser.add_argument("--cases", action="store_true", help="also list every case that did not pass, with why")


def run(args) -> int:
    unknown = [op for op in args.op if op not in ops.OPS]
    if unknown:
        raise UsageError(f"--op {unknown[0]!r} is not in the op table (impl/compiler/ops.py)")
    if (args.record or args.sweep_record or args.plan_record) and args.op:
        flag = "--record" if args.record else "--sweep-record" if args.sweep_record else "--plan-record"
        raise UsageError(f"{flag} covers every claimed op or zoo model: drop --op")
    if args.plan_record:
        print(plan_size_record.render(_zoo_plan_sizes()), end="")
        return 0
    if args.sweep_record:
        print(render_refusals(refused_at_import(sweep_cases())), end="")
        return 0
    if args.record:
        print(import_record.render(import_record.observed(node_test_cases("ascend910b"))), end="")
        return 0
    cases = node_cases(args.op or None)
    if not cases:
        raise UsageError(f"no ONNX node test uses only claimed ops and one of {args.op}")
    results = [run_both(c) for c in cases]
    t = tally(results)
    if args.json:
        print(json.dumps(as_json(t, results), indent=2))
    elif args.markdown:
        print(markdown_table(t, results))
    else:
        print(text_table(t))
        if args.cases:
            for way, pick in (("as the files are", lambda b: b.as_is), ("frozen", lambda b: b.frozen)):
                print(f"\n{way}:")
                for r in map(pick, results):
                    if r.status != "pass":
                        frozen = f" [frozen: {', '.join(r.frozen)}]" if r.frozen else ""
                        print(f"{r.status.upper():8} {r.name} ({r.stage}){frozen}: {r.detail}")
    return 1 if t.total["fail"] or t.total["frozen fail"] else 0


def _zoo_plan_sizes() -> dict[str, dict[str, int]]:
    """The region sizes of every plan case verify builds for the zoo with its defaults (case label -> region ->
    bytes): what the plan-size record should hold for the planner as it is."""
    out = {}
    for label, scenario in zoo_cases(VerifyConfig(zoo_names(), kinds=("plan",), soc=plan_size_record.SOC)):
        plan, *_ = observe(scenario)
        out[label] = dict(plan.regions)
    return out
