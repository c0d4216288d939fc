"""How long the main job takes: one default ``zcspec verify`` (the whole zoo, both strategies, the ONNX
node tests, the campaign, the proofs and the corpus), what it ran, and the machine's load around it.

    python benchmarks/verify_time.py [--examples N] [--seed S]

Prints the composition of the run (zoo models and built-in graphs, cases, proofs, packing cases, node
tests, campaign size), its wall-clock and CPU seconds, and the 1-minute load average before and after
(other work on the machine slows the run: quote the figure with the load). Exits 1 when verify fails.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time

from zcspec.checks.verify import VerifyConfig, verify
from zcspec.checks.zoo import zoo_names
from zcspec.spec.registry import ids


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=VerifyConfig(models=()).examples,
                    help="random campaign scenarios (default: verify's)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    models = zoo_names()
    load_before = os.getloadavg()[0]
    cpu0, t0 = _cpu(), time.perf_counter()
    result = verify(VerifyConfig(models=models, examples=args.examples, seed=args.seed),
                    lambda s: print(s, file=sys.stderr, flush=True))
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    load_after = os.getloadavg()[0]
    ok = result.ok(list(ids()))
    light = sum(m.startswith("zoo:") for m in models)
    nodes = result.node_tests
    proved = sum(p.passed for _, p in result.proofs)
    print(f"zcspec verify (seed {args.seed}, campaign of {args.examples} scenarios): "
          f"{light} light models and {len(models) - light} built-in graphs, both strategies")
    print(f"  {result.tally.cases} cases; {len(result.proofs)} proofs ({proved} proved); "
          f"packing cases {result.packing_cases[0]} run, {result.packing_cases[1]} failed; "
          f"ONNX node tests {nodes.run if nodes else 0} run, {len(nodes.refused) if nodes else 0} refused at import")
    print(f"  {wall:.1f} s wall, {cpu:.1f} s CPU; load average (1 min) {load_before:.1f} before, "
          f"{load_after:.1f} after, on {os.cpu_count()} cores")
    print(f"  result: {'passed' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
