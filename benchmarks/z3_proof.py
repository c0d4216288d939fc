"""Figures for the Z3 layout proofs (issue 9): times, pairs encoded, sweep cross-check, broken layouts, gaps.

Run: python benchmarks/z3_proof.py [--compare] [--api-baseline] [--faults]

Prints, per plan: the planner's time, the proof's time end to end (plan dict ->
read -> pairs -> SMT-LIB text -> parsed -> solved), pairs encoded (witness
pairs) against the lifetime-overlapping pairs, the sweep's time, and whether
the sweep agrees. Targets: ResNet-50 < 0.5 s, 10,000 blocks <= 5 s, zero
disagreements, and each deliberately broken layout returns its offending pair.
--compare also proves with every lifetime-overlapping pair encoded (and with
ground pairs folded); --api-baseline builds the 1k formula pair by pair
through z3's Python API, the cost the bulk text avoids. --faults runs, for each proof-only
variant (checks/faults/proof_only.py), zcspec verify without proofs on the real code and under the
variant (it must find nothing new), and the refresh proofs under it (they must refute it).
"""
from __future__ import annotations

import argparse
import sys
import time

from zcspec.checks.faults import proof_only
from zcspec.checks.faults.registry import active
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.checks.zoo import LIGHT, zoo_names
from zcspec.checks.models import load_graph
from zcspec.checks.proofs.layout import read_layout
from zcspec.checks.proofs.optimal import gap
from zcspec.checks.proofs.sweep import conflict_pairs, sweep_check
from zcspec.checks.proofs.synthetic import shift_onto_neighbour, synthetic_plan
from zcspec.checks.proofs.z3_layout import prove_layout
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import plan_memory

TARGETS = {"resnet50": 0.5, "synthetic 10000": 5.0}


def light_model_plans(strategy: str = "ge"):
    """(name, plan dict, planning seconds) for each light model."""
    out = []
    for name in LIGHT:
        graph = load_graph(f"zoo:{name}")
        start = time.perf_counter()
        plan = plan_memory(graph, PlanOptions(strategy=strategy)).to_json()
        out.append((name, plan, time.perf_counter() - start))
    return out


def prove_row(name: str, plan: dict, plan_s: float | None, **options):
    """Prove and sweep one plan, print its row; returns (verdict, proof seconds end to end, result):
    verdict "agree", "DISAGREE" (proved while the sweep finds a violation, or the reverse)
    or "unknown" (Z3 gave up: no verdict, and never a pass)."""
    start = time.perf_counter()
    result = prove_layout(plan, **options)
    proof_s = time.perf_counter() - start
    start = time.perf_counter()
    violations = sweep_check(plan)
    sweep_s = time.perf_counter() - start
    if result.status == "unknown":
        verdict = "unknown"
    else:
        verdict = "agree" if (result.status == "proved") == (not violations) else "DISAGREE"
    lifetime_pairs = len(conflict_pairs(read_layout(plan)))
    target = TARGETS.get(name)
    aim = "" if target is None else (" (target < %.1f s: %s)" % (target, "met" if proof_s < target else "MISSED"))
    planned = "" if plan_s is None else f"{plan_s:6.2f}"
    print(f"{name:18} {planned:>6} {len(plan['tensors']):7} {result.pairs_encoded:8} {lifetime_pairs:9} "
          f"{result.build_s:7.3f} {result.solve_s:7.3f} {proof_s:7.3f} {sweep_s:7.3f}  {result.status:8} "
          f"{verdict}{aim}")
    if result.status == "refuted":
        print(f"{'':18} offending {result.kind} {result.pair} at {dict(result.addresses)}")
    if result.status == "unknown":
        print(f"{'':18} unknown: {result.reason}")
    return verdict, proof_s, result


HEADER = (f"{'plan':18} {'plan s':>6} {'tensors':>7} {'encoded':>8} {'lt pairs':>9} "
          f"{'build s':>7} {'solve s':>7} {'proof s':>7} {'sweep s':>7}  status")


def api_baseline(plan: dict) -> None:
    """Build the lifetime-pair formula one term at a time through z3's API (the slow way)."""
    import z3
    layout = read_layout(plan)
    pairs = conflict_pairs(layout)
    start = time.perf_counter()
    bases = {a.key: z3.Int(f"b_{a.key}") for a in layout.allocations}
    addr = {t.name: bases[t.alloc] + t.rel for t in layout.tensors}
    terms = [z3.And(addr[a.name] < addr[b.name] + b.extent, addr[b.name] < addr[a.name] + a.extent) for a, b in pairs]
    solver = z3.Solver()
    solver.add(z3.Or(terms))
    built = time.perf_counter() - start
    print(f"API baseline: {len(pairs)} pairs built in {built:.2f} s ({built / len(pairs) * 1e6:.0f} us a pair)")


def proofs_section(models, synthetic, compare: bool, counts, missed, failures) -> None:
    modes = [("witness pairs (the default)", {})]
    if compare:
        modes += [("lifetime pairs", {"pairs": "lifetime", "timeout_ms": 20_000}),
                  ("lifetime pairs, ground pairs folded", {"pairs": "lifetime", "fold": True, "timeout_ms": 20_000})]
    for title, options in modes:
        print(f"\n== proofs, {title}\n{HEADER}")
        for name, plan, plan_s in models + synthetic:
            verdict, proof_s, result = prove_row(name, plan, plan_s, **options)
            counts[verdict] += 1
            if not options and (verdict != "agree" or result.status != "proved"):
                failures.append(f"{name}: {result.status}, {verdict}")
            if not options and name in TARGETS and proof_s >= TARGETS[name]:
                missed.append(name)


def broken_section(models, synthetic, counts, failures) -> None:
    print(f"\n== deliberately broken layouts (one feature-map tensor moved onto a live neighbour)\n{HEADER}")
    broken = [(name, plan) for name, plan, _ in models if name == "resnet50"] + [(n, p) for n, p, _ in synthetic]
    for name, plan in broken:
        bad, pair = shift_onto_neighbour(plan, seed=7)
        print(f"{'':18} moved {pair[0]!r} onto {pair[1]!r}")
        verdict, _, result = prove_row(f"{name} broken", bad, None)
        counts[verdict] += 1
        if result.status != "refuted" or pair[0] not in (result.pair or ()):
            failures.append(f"{name} broken: {result.status}, pair {result.pair} misses the moved {pair[0]!r}")


def gap_section() -> None:
    print("\n== optimal-layout mode: feature-map arena of each strategy against the optimum")
    print(f"{'plan':18} {'strategy':11} {'fm tensors':>10} {'arena':>10} {'optimum':>10} {'status':8} {'ratio':>6} {'s':>6}")
    small = [(f"synthetic 40 #{seed}", "first-fit", synthetic_plan(40, seed=seed, max_life=8)) for seed in range(3)]
    for strategy in ("ge", "compact"):
        small += [(name, strategy, plan) for name, plan, _ in light_model_plans(strategy)]
    for name, strategy, plan in small:
        n_fm = sum(t["region"] == "feature_map" for t in plan["tensors"])
        if n_fm > 50:
            continue
        start = time.perf_counter()
        g = gap(plan, timeout_ms=20_000)
        print(f"{name:18} {strategy:11} {n_fm:10} {g.strategy_arena:10} {g.optimum.arena:10} {g.optimum.status:8} "
              f"{g.ratio:6.3f} {time.perf_counter() - start:6.2f}")


def _seen(result) -> set:
    """What a verify run reported: its findings, crashes and the campaign's counterexample."""
    cx = result.counterexample
    return ({(f.violation.invariant_id, f.case, f.violation.culprit) for f in result.findings}
            | {("crash", case, msg[:80]) for case, msg in result.errors}
            | ({("campaign", cx.invariant, cx.violation["culprit"])} if cx is not None else set()))


def faults_section(failures) -> None:
    """Each proof-only variant: missed by verify without proofs (nothing new against the real code's
    run, whatever that run already reports), refuted by the refresh proofs; the real code proved."""
    print("\n== proof-only variants: verify without proofs, then the refresh proofs")
    config = VerifyConfig(models=zoo_names(), proofs=False)
    proof_config = VerifyConfig(models=zoo_names(), kinds=("model_file",), examples=0, corpus=False)
    start = time.perf_counter()
    baseline, real = _seen(verify(config)), verify(proof_config).proofs
    print(f"real code: {len(baseline)} findings without proofs; refresh proofs "
          f"{sum(p.passed for _, p in real)}/{len(real)} proved ({time.perf_counter() - start:.1f} s)")
    failures += [f"real code: {case} {p.status}" for case, p in real if not p.passed]
    for v in proof_only.VARIANTS:
        with active(v):
            new = _seen(verify(config)) - baseline
            proofs = verify(proof_config).proofs
        refuted = [(case, p) for case, p in proofs if p.status == "refuted"]
        print(f"{v.name}: {len(new)} new findings without proofs; refuted by {len(refuted)}/{len(proofs)} proofs")
        for case, p in refuted[:3]:
            print(f"    {case}: {p.kind} {p.pair}\n      {p.reason}")
        if new or not refuted:
            failures.append(f"{v.name}: {len(new)} new findings without proofs {sorted(new)[:3]}, "
                            f"{len(refuted)} refuting proofs")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", action="store_true", help="also prove with all lifetime pairs (and folded)")
    parser.add_argument("--api-baseline", action="store_true", help="time the pair-by-pair z3 API build on 1k blocks")
    parser.add_argument("--faults", action="store_true",
                        help="also show each proof-only variant missed by verify without proofs and refuted by them")
    args = parser.parse_args(argv)
    counts = {"agree": 0, "DISAGREE": 0, "unknown": 0}
    missed, failures = [], []
    models = light_model_plans()
    synthetic = [(f"synthetic {n}", synthetic_plan(n, seed=n, n_aliases=n // 100), None) for n in (1000, 10000)]
    proofs_section(models, synthetic, args.compare, counts, missed, failures)
    broken_section(models, synthetic, counts, failures)
    gap_section()
    if args.api_baseline:
        api_baseline(synthetic[0][1])
    if args.faults:
        faults_section(failures)
    print(f"\ncross-check against the sweep: {counts['agree']} agree, {counts['DISAGREE']} disagree, "
          f"{counts['unknown']} unknown (Z3 gave up: never a pass)")
    print(f"targets missed: {missed or 'none'}; failures: {failures or 'none'}")
    return 1 if counts["DISAGREE"] or missed or failures else 0


if __name__ == "__main__":
    sys.exit(main())
