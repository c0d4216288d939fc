"""Plan quality on the 9 ONNX light models: naive, lower bound, GE strategy, compact strategy.

Each model goes through the front end and the compiler passes as ``zcspec
plan`` does (default SoC profile), then both strategies plan it. Figures are
feature-map bytes (MB = 10^6 B); ratios are to the lower bound (the max over
steps of the live block-rounded sizes). "optimal (= lower bound)" marks an
arena equal to the bound, which certifies it optimal.

    python benchmarks/plan_quality.py
"""
from __future__ import annotations

import time

from zcspec.checks.zoo import LIGHT
from zcspec.checks.models import load_graph
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import run_passes


def _mb(x: int) -> str:
    return f"{x / 1e6:.3f}"


def measure(name: str) -> dict:
    options = CompileOptions()
    graph = run_passes(load_graph(f"zoo:{name}"), options)
    row = {"model": name, "nodes": len(graph.nodes)}
    for strategy in ("ge", "compact"):
        t0 = time.perf_counter()
        plan = plan_memory(graph, CompileOptions(strategy=strategy).plan_options())
        row[f"{strategy}_s"] = time.perf_counter() - t0
        row[strategy] = plan.arena
        row["lb"], row["naive"] = plan.lower_bound, plan.naive
    return row


def main() -> None:
    header = f"{'model':<14}{'nodes':>6}{'naive MB':>10}{'LB MB':>9}{'GE MB':>9}{'GE/LB':>8}{'compact MB':>12}{'c/LB':>8}  note"
    print(header)
    print("-" * len(header))
    for name in LIGHT:
        r = measure(name)
        note = "optimal (= lower bound)" if r["compact"] == r["lb"] else f"{(r['compact'] / r['lb'] - 1) * 100:.2f}% above LB"
        if r["compact"] > r["ge"]:
            note += "  WORSE THAN GE"
        print(f"{r['model']:<14}{r['nodes']:>6}{_mb(r['naive']):>10}{_mb(r['lb']):>9}{_mb(r['ge']):>9}"
              f"{r['ge'] / r['lb']:>8.4f}{_mb(r['compact']):>12}{r['compact'] / r['lb']:>8.4f}  {note}"
              f"  (ge {r['ge_s']:.2f} s, compact {r['compact_s']:.2f} s)")


if __name__ == "__main__":
    main()
