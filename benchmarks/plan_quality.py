"""Plan quality on the 9 ONNX light models: naive, lower bound, GE strategy, compact strategy.

Each model goes through the front end and the compiler passes as ``zcspec
plan`` does (default SoC profile), then both strategies plan it. Figures are
feature-map bytes (MB = 10^6 B); ratios are to the lower bound (the max over
steps of the live block-rounded sizes). "optimal (= lower bound)" marks an
arena equal to the bound, which certifies it optimal.

    python benchmarks/plan_quality.py [--planners]

``--planners`` prints instead, per model, the feature map of each of GE's two planners alone
(binary-block and max-block; GE: hybrid_mem_assigner.cc ``HybridMemAssigner::Assign``: the GE strategy keeps
the smaller, ties to binary)
and which one the strategy kept, as the GE strategy computes them (before atomic outputs and
zero-copy memory are placed after the feature map).
"""
from __future__ import annotations

import argparse
import time

from zcspec.checks.zoo import LIGHT
from zcspec.checks.models import load_graph
from zcspec.impl.compiler.memory.lifetimes import lifetimes
from zcspec.impl.compiler.memory.offsets import _feature_map
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.memory.units import build_units
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


def planners(name: str) -> tuple[int, int, int, int]:
    """(binary-block feature map, max-block feature map, the GE plan's feature map, its lower bound)."""
    graph = run_passes(load_graph(f"zoo:{name}"), CompileOptions())
    options = CompileOptions(strategy="ge").plan_options()
    units = build_units(graph, lifetimes(graph), options)
    # The half of ge_layout that runs one planner (offsets.py): its score is the feature-map end.
    binary, max_block = (_feature_map(units.units, units.steps, options, mb)[3] for mb in (False, True))
    plan = plan_memory(graph, options)
    return binary, max_block, plan.regions["feature_map"], plan.lower_bound


def main_planners() -> None:
    print(f"{'model':<14}{'binary MB':>11}{'max-block MB':>14}{'GE fm MB':>10}{'LB MB':>9}  kept")
    for name in LIGHT:
        binary, max_block, fm, lb = planners(name)
        kept = "binary" if binary <= max_block else "max-block"
        if fm != min(binary, max_block):
            kept += f"  (the plan's feature map {_mb(fm)} MB differs)"
        print(f"{name:<14}{_mb(binary):>11}{_mb(max_block):>14}{_mb(fm):>10}{_mb(lb):>9}  {kept}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--planners", action="store_true", help="each of GE's two planners alone, per model")
    if ap.parse_args(argv).planners:
        main_planners()
        return
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
