"""``zcspec plan MODEL``: MODEL through the passes of ``zcspec compile`` (for ``--soc``), then the planner.

The default output is a table, one row per tensor; ``--json`` prints the plan contract
(docs/memory-planning.md); ``--picture`` renders the layout (``zcspec.spec.picture.render_plan``).
``zcspec.checks.cli.plan`` parses the flags and hands MODEL here.
"""
from __future__ import annotations

import json

from zcspec.checks.models import load_graph
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import run_passes
from zcspec.spec.picture import render_plan


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
    plan = plan_model(args)
    contract = plan.to_json()
    if args.picture:
        render_plan(contract, args.picture)
    print(json.dumps(contract, indent=1) if args.json else _table(plan))
    return 0
