"""How long the main job takes: one default ``zcspec verify`` (the whole zoo, both strategies, the ONNX
node tests, the campaign, the proofs and the corpus), what it ran, and the machine's load around it.

    python benchmarks/verify_time.py [--examples N] [--seed S]
    python benchmarks/verify_time.py --parts [--examples N] [--seed S]

Prints the composition of the run (zoo models and built-in graphs, cases, proofs, packing cases, node
tests, campaign size), its wall-clock and CPU seconds, the seconds of each of verify's phases
(``VerifyResult.timings``), and the 1-minute load average before and after (other work on the machine
slows the run: quote the figure with the load). Exits 1 when verify fails.

``--parts`` runs no whole verify: it times, each on its own and one after the other, the parts of it
the docs discuss: verify's random campaign (the same scenarios, seed and size) without proofs and
with every proof (the proofs it ran, and the seconds spent in each kind of proof, timed around each
proof; after a short warm-up campaign, so that the first does not pay for the imports alone);
ONNX's node tests (building onnx's cases, importing them, running them); the packing cases; and the
model-file field sweep (every determined field of three built model files changed, one a case). Each
line gives wall and CPU seconds. Exits 1 when a part fails.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import os
import resource
import sys
import time

from zcspec.checks import campaign
from zcspec.checks.campaign import Tally, check_observations, run_campaign
from zcspec.checks.conformance.cases import node_cases
from zcspec.checks.onnx_node_cases import node_test_cases
from zcspec.checks.packing_cases import check_packing_case, packing_cases
from zcspec.checks.proofs.cases import CLAIMS, claims_of
from zcspec.checks.proofs.cases import claimed_proofs as _claimed_proofs
from zcspec.checks.scenario import KINDS, observe
from zcspec.checks.strategies.scenarios import default_kinds, scenarios
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.checks.verify_cases import zoo_cases
from zcspec.checks.zoo import zoo_names
from zcspec.spec.registry import ids


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class _Clock:
    """Wall and CPU seconds since it was made."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), _cpu()

    def read(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, _cpu() - self.cpu

    def text(self) -> str:
        wall, cpu = self.read()
        return f"{wall:.1f} s wall, {cpu:.1f} s CPU"


@contextlib.contextmanager
def _timed_proofs():
    """Claim id -> wall seconds the campaign spent in that claim's proofs (compiling the model for a
    refresh proof included), timed around the campaign's call of ``claimed_proofs``, one claim a call."""
    spent: dict = {}

    def timed(scenario, observations, claims=None):
        out = []
        for claim in claims_of(scenario):
            if claims is None or claim in claims:
                start = time.perf_counter()
                out += _claimed_proofs(scenario, observations, (claim,))
                spent[claim] = spent.get(claim, 0.0) + time.perf_counter() - start
        return out

    campaign.claimed_proofs = timed
    try:
        yield spent
    finally:
        campaign.claimed_proofs = _claimed_proofs


def _check_all(cases) -> tuple[int, int]:
    """Observe and check each (label, Scenario); (cases, cases with a violation or a crash)."""
    tally, bad = Tally(), 0
    for label, scenario in cases:
        try:
            reports, failed = check_observations(label, observe(scenario), tally)
        except Exception:  # a crash of the code under test
            bad += 1
            continue
        bad += bool(failed or any(r.violations for r in reports))
    return len(cases), bad


def parts(examples: int, seed: int, soc: str) -> bool:
    ok = True
    kinds = tuple(k for k in KINDS if k in default_kinds())
    print(f"parts of zcspec verify, each alone (seed {seed}); load average (1 min) {os.getloadavg()[0]:.1f}, "
          f"{os.cpu_count()} cores")
    print(f"random campaign of {examples} scenarios ({', '.join(kinds)}):")
    # Warm-up, not shown: the first campaign would otherwise also pay for the imports and caches the
    # others reuse (z3, the strategies, the compiler's tables), and the differences would mislead.
    run_campaign(scenarios(kinds=kinds), max_examples=min(examples, 20), seed=seed + 1, proofs=CLAIMS)
    for label, proofs in (("no proofs", ()), ("every proof", CLAIMS)):
        clock = _Clock()
        with _timed_proofs() as spent:
            run = run_campaign(scenarios(kinds=kinds), max_examples=examples, seed=seed, proofs=proofs)
        wall, cpu = clock.read()
        found = f"; counterexample {run.counterexample.invariant}" if run.counterexample else ""
        ok &= run.counterexample is None
        print(f"  {label:12} {run.tally.cases} scenarios, {wall:5.1f} s wall, {cpu:5.1f} s CPU; "
              f"proofs: {run.tally.proof_summary()}{found}")
        for claim, seconds in sorted(spent.items()):
            print(f"    {claim} proofs: {seconds:.1f} s wall in all")
    print("ONNX node tests:")
    clock = _Clock()
    built = node_cases()
    print(f"  building onnx's cases of claimed ops: {len(built)} cases, {clock.text()}")
    clock = _Clock()
    tests = node_test_cases(soc)
    print(f"  importing them: {len(tests.cases)} imported, {len(tests.refused)} refused, "
          f"{len(tests.broken)} broken, {clock.text()}")
    clock = _Clock()
    run, bad = _check_all(tests.cases)
    print(f"  running them: {run} run, {bad} failed, {clock.text()}")
    ok &= not bad and not tests.broken
    del built, tests   # hundreds of models and scenarios: held on, they slow the garbage collector after
    gc.collect()
    clock = _Clock()
    cases = packing_cases(seed)
    failed = sum(bool(check_packing_case(c)) for c in cases)
    print(f"packing cases: {len(cases)} run, {failed} failed, {clock.text()}")
    ok &= not failed
    clock = _Clock()
    config = VerifyConfig(models=(), kinds=("model_file",), seed=seed, soc=soc)
    sweep = [(label, s) for label, s in zoo_cases(config) if s.runtime.get("mutation", {}).get("op") == "field"]
    run, bad = _check_all(sweep)
    print(f"model-file field sweep: {run} cases, {bad} failed, {clock.text()} (building the files included)")
    ok &= not bad
    print(f"  load average (1 min) after: {os.getloadavg()[0]:.1f}")
    print(f"  result: {'passed' if ok else 'FAILED'}")
    return ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=VerifyConfig(models=()).examples,
                    help="random campaign scenarios (default: verify's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parts", action="store_true",
                    help="time the campaign (with and without proofs), the node tests, the packing cases and "
                         "the field sweep each on its own instead of one whole verify")
    args = ap.parse_args(argv)
    if args.parts:
        return 0 if parts(args.examples, args.seed, VerifyConfig(models=()).soc) else 1
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
    print("  wall seconds by phase: " + "; ".join(f"{phase} {s:.1f}" for phase, s in result.timings))
    print(f"  result: {'passed' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
