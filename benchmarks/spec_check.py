"""How long the spec takes to check plans: the overlap sweep and the whole plan catalogue.

Prints one line per case: tensors, time-overlapping pairs, seconds for
LAYOUT-NO-OVERLAP alone and for every plan invariant (spec.check). Synthetic
plans are rings of slots where each tensor lives ``ring`` steps (so it
overlaps ``ring - 1`` others in time), valid by construction; the zoo case
checks the real GE-strategy plan of ResNet-50.

    python benchmarks/spec_check.py [--quick]
"""
from __future__ import annotations

import sys
import time

from zcspec.checks.models import load_graph
from zcspec.impl.compiler.memory.plan import PlanOptions, plan_memory
from zcspec.impl.compiler.observe import observe_plan
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import run_passes
from zcspec.spec.check import check
from zcspec.spec.examples.build import plan
from zcspec.spec.registry import get


def synthetic(n: int, ring: int):
    return plan([(f"t{i}", "feature_map", 512 * (i % ring), 512, i, i + ring - 1) for i in range(n)])


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def row(label: str, p) -> None:
    found, t_sweep = timed(lambda: get("LAYOUT-NO-OVERLAP").violations(p))
    report, t_all = timed(lambda: check(p))
    assert not found and report.ok, report
    print(f"{label:<28} tensors={len(p.tensors):>7}  no-overlap {t_sweep:6.2f} s  all {len(report.applied)} "
          f"plan invariants {t_all:6.2f} s")


def main() -> None:
    quick = "--quick" in sys.argv
    for n, ring in ((1_000, 16), (10_000, 64)) + (() if quick else ((100_000, 64), (100_000, 512))):
        row(f"synthetic n={n} ring={ring}", synthetic(n, ring))
    graph = run_passes(load_graph("zoo:resnet50"), CompileOptions())
    row("zoo:resnet50 (ge strategy)", observe_plan(graph, plan_memory(graph, PlanOptions())))


if __name__ == "__main__":
    main()
