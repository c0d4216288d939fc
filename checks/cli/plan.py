"""``zcspec plan MODEL [--strategy ge|compact] [--json] [--picture FILE] [--no-reuse]`` and ``--buffers FILE.csv``.

MODEL goes through the same passes as ``zcspec compile`` (for the chosen
``--soc``), then the memory planner. The default output is a table, one row
per tensor; ``--json`` prints the plan contract (DESIGN.md "Contracts");
``--picture`` renders the layout (``zcspec.spec.picture.render_plan``).
``--buffers FILE.csv`` plans a bare MiniMalloc instance instead
(``zcspec.checks.cli.plan_buffers``); it excludes MODEL.
"""
from __future__ import annotations

import json

from zcspec.checks.cli import plan_buffers
from zcspec.checks.cli.arguments import add_model_arguments
from zcspec.checks.errors import UsageError
from zcspec.checks.models import load_graph
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import run_passes
from zcspec.spec.picture import render_plan


def configure(parser) -> None:
    add_model_arguments(parser, nargs="?")
    parser.add_argument("--strategy", default="ge", choices=("ge", "compact"),
                        help="ge: GE's block assignment (default); compact: same rules, tighter offsets")
    parser.add_argument("--json", action="store_true", help="print the plan as one JSON object (the contract)")
    parser.add_argument("--picture", metavar="FILE.svg|FILE.png", help="draw the layout: steps across, addresses up")
    parser.add_argument("--no-reuse", action="store_true", help="disable memory reuse (ge.exec.disableReuseMemory=1)")
    parser.add_argument("--soc", default="ascend910b", help="SoC profile whose granularities and limits apply")
    parser.add_argument("--buffers", metavar="FILE.csv", help="plan a bare instance (id,lower,upper,size) instead of MODEL")
    plan_buffers.configure_buffers(parser)  # --capacity, --time-limit: the packer helper's flags for --buffers


def plan_model(args):
    """The MemoryPlan of MODEL as ``zcspec compile`` would plan it."""
    graph = load_graph(args.model, args.shape, args.value)
    options = CompileOptions(soc=args.soc, strategy=args.strategy, reuse=not args.no_reuse)
    return plan_memory(run_passes(graph, options), options.plan_options())


def _table(plan) -> str:
    rows = [("tensor", "region", "offset", "size", "aligned", "life", "block", "zc")]
    for t in plan.tensors:
        name = t.name if t.alias_of is None else f"{t.name} -> {t.alias_of}"
        rows.append((name, t.region, f"{t.offset:,}", f"{t.size:,}", f"{t.aligned_size:,}", f"{t.first}..{t.last}",
                     str(t.block), "zc" if t.zero_copy else ""))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i in (0, 1, 5, 7) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in rows]
    fm, lb = plan.regions["feature_map"], plan.lower_bound
    ratio = f"{fm / lb:.4f}x the lower bound" if lb else "no feature map"
    lines.append("")
    lines.append("regions: " + ", ".join(f"{k} {v:,}" for k, v in plan.regions.items()))
    lines.append(f"strategy {plan.strategy}: feature map {fm:,} bytes, lower bound {lb:,} ({ratio}"
                 f"{', optimal' if fm == lb and lb else ''}), no reuse {plan.naive:,}")
    a = plan.attributes
    lines.append(f"memory_size {a.memory_size:,} (zero_copy_memory_size {a.zero_copy_memory_size:,})")
    return "\n".join(lines)


def run(args) -> int:
    if args.buffers and args.model:
        raise UsageError("give either MODEL or --buffers FILE.csv, not both")
    if args.buffers:
        if args.picture or args.no_reuse or args.shape:
            raise UsageError("--picture, --no-reuse and --shape apply to MODEL, not to --buffers")
        return plan_buffers.run(args)
    if not args.model:
        raise UsageError("plan needs MODEL (an .onnx, a graph .json or zoo:NAME) or --buffers FILE.csv")
    plan = plan_model(args)
    contract = plan.to_json()
    if args.picture:
        render_plan(contract, args.picture)
    print(json.dumps(contract, indent=1) if args.json else _table(plan))
    return 0
