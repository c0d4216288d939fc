"""``zcspec verify [MODEL ...]``: the main job. See checks/verify.py for what runs; ``--html FILE`` also
writes the report page (checks/report_page.py); ``--artefacts DIR`` every artefact of the run, its case
table and how it ended (checks/verify_artefacts.py)."""
from __future__ import annotations

import sys
from collections import Counter

from zcspec.checks.report_page import check_writable, coverage_rows, verify_report, write_report
from zcspec.checks.scenario import KINDS
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.checks.verify_result import MIN_DISTINCT
from zcspec.checks.verify_artefacts import ArtefactWriter, verdict
from zcspec.checks.zoo import zoo_names
from zcspec.spec.registry import all_invariants


def configure(parser) -> None:
    parser.add_argument("models", nargs="*", metavar="MODEL",
                        help="models to check (.onnx, graph .json, zoo:NAME, builtin:NAME); default: the whole zoo")
    parser.add_argument("--examples", type=int, default=1000,
                        help="random scenarios in the campaign (default 1000; 0 skips it)")
    parser.add_argument("--seed", type=int, default=0, help="campaign seed (default 0)")
    parser.add_argument("--strategy", action="append", choices=("ge", "compact"),
                        help="planning strategies to check (default both)")
    parser.add_argument("--soc", default="ascend910b", help="SoC profile for the zoo (default ascend910b)")
    parser.add_argument("--no-proofs", action="store_true", help="skip the Z3 proofs (layouts, v1 refresh, packing optimality)")
    parser.add_argument("--no-execution", action="store_true", help="skip executing the zoo through the runtimes")
    parser.add_argument("--no-onnx-node-tests", action="store_true",
                        help="skip ONNX's backend node tests of the claimed ops (run through both runtimes, "
                             "judged by the spec against ONNX's expected outputs)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--fail-fast", action="store_true",
                        help="stop at the first violation, crash or failed valid call (no shrinking)")
    parser.add_argument("--shape", action="append", default=[], metavar="NAME=DIMS",
                        help="fix a dynamic input of the ONNX models named, e.g. --shape x=1x3x48x192 (repeatable)")
    parser.add_argument("--value", action="append", default=[], metavar="NAME=V[,V...]",
                        help="freeze an ONNX input to a constant, e.g. --value sr=16000 (repeatable)")
    parser.add_argument("--html", metavar="FILE",
                        help="also write the report page to FILE: one self-contained HTML page with the coverage, "
                             "each violation's graph and layout, the proofs, the corpus and the timings "
                             "(the text report still prints)")
    parser.add_argument("--artefacts", metavar="DIR",
                        help="also write every artefact the run builds into DIR (new or empty): per case its plans, "
                             "model files, device traces and outputs as observed, the case table, the invariant table "
                             "and a DIGESTS list, with no timestamp or absolute path, so two runs on the same sources "
                             "write identical files; and verdict.json, how the run failed")


def invariant_table(result, invariants) -> list[str]:
    """One line per invariant: how often it was applied, exercised and violated (``zcspec exhaustive`` too;
    the rows are ``report_page.coverage_rows``, which the report page shows)."""
    lines = [f"{'invariant':<28} {'applied':>8} {'exercised':>9} {'distinct':>8} {'violated':>8}  result"]
    for r in coverage_rows(result.tally, result.findings, invariants):
        lines.append(f"{r.claim:<28} {r.applied:>8} {r.exercised:>9} {r.distinct:>8} {r.violated:>8}  {r.state}")
    return lines


def _notes(result) -> None:
    """Outputs no oracle judged (counted, grouped by reason) and valid calls that failed (each a failure)."""
    print(f"\noracle: {result.tally.judged} outputs judged, {len(result.unjudged)} left unjudged")
    reasons = Counter(n.reason[:160] for n in result.unjudged)
    for reason, count in reasons.most_common(10):
        print(f"  {count:4} x {reason}")
    if len(reasons) > 10:
        print(f"  ... and {len(reasons) - 10} more reasons")
    for n in result.failed_calls[:10]:
        print(f"FAILED CALL on valid buffers, {n.run}: {n.reason}")
    if len(result.failed_calls) > 10:
        print(f"... and {len(result.failed_calls) - 10} more failed calls")


def _node_test_line(nodes) -> None:
    if nodes is None:
        return
    print(f"\nONNX node tests: {nodes.run} run, {len(nodes.refused)} refused (unsupported), "
          f"{len(nodes.failed)} failed" + (f", {len(nodes.known)} known failures not run" if nodes.known else ""))
    for case in nodes.failed[:10]:
        print(f"  FAILED {case}")
    if len(nodes.failed) > 10:
        print(f"  ... and {len(nodes.failed) - 10} more failed node tests")
    for name, why in nodes.known:
        print(f"  known failure (not run): {name}: {why}")


def _sweep_line(sweep) -> None:
    if sweep is None:
        return
    print(f"dtype sweep (each op alone in each element type ONNX allows): {sweep.run} run "
          f"({len(sweep.unjudged)} with no oracle), {len(sweep.refused)} refused naming node and type, "
          f"{len(sweep.failed)} failed" + (f", {len(sweep.known)} recorded failures still failing" if sweep.known else ""))
    for case in sweep.failed[:10]:
        print(f"  FAILED {case}")
    if len(sweep.failed) > 10:
        print(f"  ... and {len(sweep.failed) - 10} more failed sweep models")
    by_why: dict = {}
    for case, why in sweep.known:
        by_why.setdefault(why, []).append(case.removeprefix("dtype sweep "))
    for why, cases in by_why.items():
        print(f"  recorded failures ({', '.join(cases)}): {why}")


def _report(result, invariants) -> None:
    print("\n".join(invariant_table(result, invariants)))
    _node_test_line(result.node_tests)
    run, failed = result.shipped_cases
    if run:
        print(f"shipped pytorch cases (onnx's pytorch-operator/-converted models, opset 6): {run} run, {failed} failed")
    _sweep_line(result.dtype_sweep)
    proved = sum(p.passed for _, p in result.proofs)
    print(f"\nZ3 proofs (layouts, v1 refresh, packing optimality): {proved}/{len(result.proofs)} proved")
    for case, p in result.proofs:
        if not p.passed:
            print(f"  {case}: {p.status} {p.kind or ''} {p.pair or ''} {p.reason}")
    run, failed = result.packing_cases
    if run:
        print(f"packing cases (capacities, time limits, search, refusals, CSV files): {run} run, {failed} failed")
    run, failed = result.acl_refusals
    if run:
        print(f"ACL refusals (bad calls to the ACL entry points): {run} run, {failed} failed")
    run, failed = result.ge_cases
    if run:
        print(f"GE's unit-test cases (checks/cases/ge, ge strategy): {run} run, {failed} failed")
    if result.foreign:
        bugs = [(label, expect) for label, expect, wrong in result.foreign if expect != "clean" and not wrong]
        clean = sum(1 for _, expect, wrong in result.foreign if expect == "clean" and not wrong)
        print(f"other compilers' plans: {len(result.foreign)} programs, {clean} clean as expected, "
              f"{len(bugs)} known bug(s) found" + "".join(f"; {label} breaks {expect}" for label, expect in bugs))
    print(f"random campaign's proofs (unknown: shown, not a failure): {result.tally.proof_summary()}")
    for case, claim, reason in result.tally.unknown[:10]:
        print(f"  {claim} unknown on case {case[:12]}: {reason}")
    for r in result.corpus:
        print(f"corpus: {'ok' if r.as_expected else 'REGRESSED'}: {r.summary()}")
    for (case, err), kind in zip(result.errors, result.error_kinds):
        print(f"{ERROR_LABELS[kind]} in {case}: {err}")
    _notes(result)
    for f in result.findings[:20]:
        print(f"\nVIOLATION {f.violation.invariant_id} in {f.case}\n  {f.violation.culprit}: {f.violation.message}")
        if f.violation.values:
            print(f"  values: {f.violation.values}")
        for row in f.rows[:6]:
            print(f"  plan row: {row}")
    if len(result.findings) > 20:
        print(f"\n... and {len(result.findings) - 20} more violations")
    cx = result.counterexample
    if cx is not None:
        print(f"\nRandom campaign found a violation of {cx.invariant} (shrunk to {len(cx.scenario.graph.nodes)} nodes):"
              f"\n  {cx.violation['culprit']}: {cx.violation['message']}")
        path = "zcspec-counterexample.json"
        cx.save(path)
        print(f"  saved to {path}; replay with: zcspec replay {path}")


# How verify's errors (checks/verify_result.py ERROR_KINDS) are printed: a crash of the code under test, impl
# refusing an artefact it built itself, a check of verify's own (a GE case, a front-end case, a record).
ERROR_LABELS = {"crash": "CRASH", "refusal": "REFUSED", "check": "FAILED CHECK"}


def _list_unreached(result, ids, unreached) -> None:
    """Name the claims the models the user named left below the floor: never reached, then thin."""
    missing = result.unexercised(ids)
    if missing:
        print(f"\nnot exercised by these models (no case reached them): {', '.join(missing)}")
    if few := [i for i in unreached if i not in missing]:
        print(f"\nexercised by fewer than {MIN_DISTINCT} distinct cases of these models: {', '.join(few)}")


def _verdict(result, ok: bool, thin, unreached, ids) -> str:
    """The closing line's verdict. "all invariants held" only when every claim was also exercised by
    >= MIN_DISTINCT distinct cases: a claim no case reached held vacuously, which is no evidence."""
    if not ok:
        kinds = Counter(result.error_kinds)
        return (f"FAILED ({sum(result.tally.violated.values())} violated checks, {kinds['crash']} crashes, "
                f"{kinds['refusal']} refusals of its own artefacts, {kinds['check']} failed checks, "
                f"{len(result.failed_calls)} failed valid calls, {len(thin)} invariants below the floor of "
                f"{MIN_DISTINCT} distinct cases)")
    if unreached:
        never = len(result.unexercised(ids))
        return (f"no violation; {len(unreached)} of {len(ids)} claims not exercised by these models "
                f"({never} never reached, {len(unreached) - never} by fewer than {MIN_DISTINCT} distinct cases; "
                f"listed above)")
    return f"all invariants held and were exercised (each by >= {MIN_DISTINCT} distinct cases)"


def run(args) -> int:
    kinds = tuple(k for k in KINDS if not (args.no_execution and k == "execution"))
    config = VerifyConfig(models=tuple(args.models) or zoo_names(), strategies=tuple(args.strategy or ("ge", "compact")),
                          soc=args.soc, kinds=kinds, examples=args.examples, seed=args.seed, proofs=not args.no_proofs,
                          shapes=tuple(args.shape), values=tuple(args.value), fail_fast=args.fail_fast,
                          onnx_node_tests=not args.no_onnx_node_tests, artefacts=args.artefacts)
    if args.html:
        check_writable(args.html)   # before the run, not after ten minutes of it
    if args.artefacts:
        ArtefactWriter.into(args.artefacts)   # refused now if not new or empty; verify writes into it
    progress = (lambda s: None) if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    result = verify(config, progress)
    invariants = all_invariants()
    _report(result, invariants)
    ids = [i.id for i in invariants]
    thin = result.below_floor(ids)
    # The whole zoo and the campaign must exercise every invariant in MIN_DISTINCT distinct cases (no
    # claim may pass vacuously). Models the user names reach only the rules they contain: what they
    # leave below the floor is listed, not a failure, but the verdict says so instead of "all held".
    chosen = bool(args.models)
    ok = result.ok([i for i in ids if i not in thin] if chosen else ids)
    unreached = thin if chosen and ok else []
    if unreached:
        _list_unreached(result, ids, unreached)
    if result.stopped:
        print(f"\n{result.stopped}")
    summary = f"{result.tally.cases} cases in {result.seconds:.1f} s: " + _verdict(result, ok, thin, unreached, ids)
    print(f"\n{summary}")
    if args.artefacts:
        result.artefacts.finish(invariant_table(result, invariants), verdict(result, ids, ok=ok, thin=thin))
        print(f"artefacts written to {args.artefacts}")
    if args.html:
        write_report(verify_report(result, invariants, config=config, ok=ok, summary=summary), args.html)
        print(f"report written to {args.html}")
    return 0 if ok else 1
