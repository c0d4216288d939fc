"""Plan identity: a digest of every plan of a fixed set of graphs, to show a planner change decides the same.

A speed-up of the planner (ge_blocks, ge_level2, units, lifetimes, offsets) must not change one
offset: this records, per case, the SHA-256 of the plan's JSON (``artefact_json.to_json``,
keys sorted) and compares it with a recording made before the change. Cases: every zoo
graph (``checks.zoo``: the light ONNX models and the built-in rule graphs) with the ge
strategy under the default options, reuse off and FIFO reuse, and with the compact
strategy; the synthetic CNN-like graphs of benchmarks/plan_scale.py (1k, 10k, 100k nodes)
with both strategies. The compact strategy runs with ``time_limit=None`` (the packer's
fixed budgets): a wall-clock limit would make its result depend on the machine's load.

    python benchmarks/plan_identity.py --record /tmp/before.json   # before the change
    python benchmarks/plan_identity.py --compare /tmp/before.json  # after: exit 1 on any difference
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

from plan_scale import synthetic_graph

from zcspec.checks import zoo
from zcspec.impl.compiler.artefact_json import to_json
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import plan_memory

ZOO_OPTIONS = {
    "ge": PlanOptions(strategy="ge"),
    "ge-noreuse": PlanOptions(strategy="ge", reuse=False),
    "ge-fifo": PlanOptions(strategy="ge", mem_release_first_reuse_first=True),
    "compact": PlanOptions(strategy="compact", time_limit=None),
}
SYNTHETIC_OPTIONS = {k: ZOO_OPTIONS[k] for k in ("ge", "compact")}
SYNTHETIC_SIZES = (1000, 10000, 100000)


def digest(plan) -> str:
    return hashlib.sha256(json.dumps(to_json(plan), sort_keys=True).encode()).hexdigest()


def cases(sizes):
    """(case name, graph factory, options) in a fixed order."""
    for name in zoo.zoo_names():
        for label, options in ZOO_OPTIONS.items():
            yield f"{name}/{label}", (lambda name=name: zoo.load(name)), options
    for n in sizes:
        for label, options in SYNTHETIC_OPTIONS.items():
            yield f"synthetic{n}/{label}", (lambda n=n: synthetic_graph(n)), options


def run(sizes, only=None) -> dict[str, dict]:
    out, graphs = {}, {}
    for case, make, options in cases(sizes):
        if only and not any(s in case for s in only):
            continue
        key = case.split("/")[0]
        if key not in graphs:
            graphs.clear()   # one graph alive at a time: the 100k one is large
            graphs[key] = make()
        t0 = time.perf_counter()
        plan = plan_memory(graphs[key], options)
        dt = time.perf_counter() - t0
        out[case] = {"digest": digest(plan), "arena": plan.regions["feature_map"]}
        print(f"{case:<45}{dt:>9.2f} s  {out[case]['digest'][:16]}", flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--record", metavar="FILE", help="write the digests to FILE")
    what.add_argument("--compare", metavar="FILE", help="compare with the digests recorded in FILE")
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SYNTHETIC_SIZES),
                        help="synthetic graph sizes (default 1000 10000 100000)")
    parser.add_argument("--only", nargs="*", help="run only the cases whose name contains one of these")
    args = parser.parse_args()
    result = run(args.sizes, args.only)
    if args.record:
        with open(args.record, "w") as f:
            json.dump(result, f, indent=1, sort_keys=True)
        print(f"recorded {len(result)} plans in {args.record}")
        return 0
    with open(args.compare) as f:
        before = json.load(f)
    missing = [c for c in result if c not in before]
    changed = [c for c in result if c in before and before[c]["digest"] != result[c]["digest"]]
    for c in missing:
        print(f"NOT RECORDED {c}")
    for c in changed:
        print(f"CHANGED {c}: arena {before[c]['arena']} -> {result[c]['arena']}")
    print(f"{len(result) - len(changed) - len(missing)} of {len(result)} plans identical")
    return 1 if changed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
