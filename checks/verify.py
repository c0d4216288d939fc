"""The main job: every applicable invariant over the zoo, ONNX's backend node tests, Z3 proofs (layouts,
v1 refresh, the packer's arena against the optimum on small instances), a bounded random campaign and
the corpus; per-invariant counts of the distinct cases that exercised it.

``verify(config)`` returns a VerifyResult (checks/verify_result.py); ``checks/cli/verify.py`` prints it.
The phases on ONNX models (front-end cases, node tests, shipped pytorch cases, dtype sweep) live in
checks/verify_onnx_cases.py, and each case observed from a scenario is checked by checks/verify_one_case.py;
verify() here runs every phase in turn. The random campaign draws the default scenario mix
(checks/strategies/scenarios.py): plans, model files and executions of random graphs through both
runtimes with random bindings, against the oracle.
ONNX's node tests of the claimed ops are held-out models (checks/onnx_node_cases.py): each that
imports runs through both runtimes on its own inputs, judged by every execution claim, its outputs
by ONNX's expected outputs (EXEC-ORACLE); one refused at import as unsupported is counted, not run.
How each imports (refused naming which feature, which inputs frozen) must be what the reviewed record
checks/conformance/imports.json states: a front end that refuses more, or asks for more values, fails.
Each zoo plan's region sizes must be those checks/conformance/plan_sizes.json records
(checks/plan_size_record.py): a planner whose plans stay safe but change size fails, naming the case.
Crafted models (checks/frontend_cases.py: unsorted nodes, an If its initializers decide, a cycle, a
missing tensor, an unknown op, an opset-6 training-mode BatchNormalization) must import and match
onnxruntime, or be refused with the expected error naming the culprit. The pytorch models shipped in the
onnx package (checks/shipped_pytorch_cases.py: opset 6, ``broadcast=1`` attributes, Constant nodes) of
claimed ops must import, compile and give their shipped outputs on both runtimes. The dtype sweep
(checks/dtype_sweep_cases.py) puts each op of the op table, alone in a model, in each element type ONNX
allows it: refused at import naming the node and the type, or run through both runtimes against
onnxruntime on its file; one that imports and then fails on the device is an error (the front end
accepted what the device cannot compute). With the proofs, the packing
cases (checks/packing_cases.py) run the packer's capacity, time-limit, search, refusal and CSV-file
paths, judged by the checker's own facts (the optimum by construction or Z3's, greedy by size). With
executions, bad calls to the ACL entry points (checks/acl_refusal_cases.py: null pointers, zero sizes,
unknown model ids, bad config values, wrong datasets) must be refused with the C API's code and change
nothing on the device, and so must calls that misuse either runtime's API (checks/verify_api_misuse.py: a
buffer too few or too many, an unknown batch, a call after the unload, an option out of its domain), judged
by the API-misuse claims. With the ``ge`` strategy, GE's own unit tests ported as a catalogue
(checks/cases/ge) run as they are recorded: a case that matched GE must still match, and a recorded
deviation must still deviate as recorded (one that now matches is reported: its record is stale).

The run fails on any violation, any proof that is not "proved" (unknown is never a pass), any
corpus entry that regressed, any call on valid buffers that failed, and any invariant exercised
by fewer than ``MIN_DISTINCT`` distinct cases (a claim put to the test once, or by one case
counted again and again, is not a verified claim; distinct: ``campaign.observation_key``).
Outputs that no oracle judged are counted and listed with the reason (``VerifyResult.notes``).
With ``fail_fast`` the run stops at the first violation, crash or failed valid call.
``VerifyResult.timings`` has the seconds of each phase that ran to its end (zoo cases, front-end cases,
ACL refusals, packing proofs and cases, GE's unit-test cases, node tests, shipped pytorch cases, dtype
sweep, campaign, corpus).
"""
from __future__ import annotations

import time
from typing import Callable

import attrs

from zcspec.checks.acl_refusal_cases import acl_refusal_cases
from zcspec.checks.verify_api_misuse import MISUSE_MODELS, check_acl_refusals, check_api_misuses
from zcspec.checks.campaign import CAMPAIGN_PROOFS, run_campaign
from zcspec.checks.cases.ge.all import CASES as GE_CASES
from zcspec.checks.cases.ge.graph import PlanCheckFailed
from zcspec.checks.cases.ge.judge import judge as judge_ge_case
from zcspec.checks.counterexample import Counterexample
from zcspec.checks.dtype_sweep_cases import sweep_cases
from zcspec.checks.foreign.programs import foreign_cases
from zcspec.checks.foreign.programs import problems as foreign_problems
from zcspec.checks.frontend_cases import frontend_cases
from zcspec.checks.onnx_node_cases import node_test_cases
from zcspec.checks import plan_size_record
from zcspec.checks.packing_cases import packing_cases, run_packing_case
from zcspec.checks.proofs import packing as packing_proofs
from zcspec.checks.replay import corpus_files, replay
from zcspec.checks.scenario import KINDS, notes_of
from zcspec.checks.shipped_pytorch_cases import shipped_cases
from zcspec.checks.strategies.scenarios import default_kinds, scenarios
from zcspec.checks.verify_artefacts import ArtefactWriter
from zcspec.checks.verify_cases import device_cases, zoo_cases
from zcspec.checks.verify_one_case import check_case
from zcspec.checks.verify_onnx_cases import (
    check_dtype_sweep, check_frontend_cases, check_model_files, check_node_tests, check_shipped_cases,
)
from zcspec.checks.verify_result import (
    Finding, VerifyResult, exception_kind, record_error, record_raised, violation_rows,
)
from zcspec.spec.check import check
from zcspec.spec.observables.plan import PlanObservation


@attrs.frozen
class VerifyConfig:
    models: tuple[str, ...]
    strategies: tuple[str, ...] = ("ge", "compact")
    soc: str = "ascend910b"
    kinds: tuple[str, ...] = KINDS
    examples: int = 1000
    seed: int = 0
    proofs: bool = True
    corpus: bool = True
    fail_fast: bool = False        # stop at the first violation, crash or failed valid call
    shapes: tuple[str, ...] = ()   # --shape texts for the ONNX models named
    values: tuple[str, ...] = ()   # --value texts for the ONNX models named
    onnx_node_tests: bool = True   # ONNX's backend node tests of the claimed ops (with the execution kind)
    acl_refusals: bool = True      # bad calls to the ACL entry points (with the execution kind)
    ge_cases: bool = True          # GE's ported unit tests, checks/cases/ge (with the ge strategy)
    shipped_cases: bool = True     # onnx's shipped pytorch models, checks/shipped_pytorch_cases.py (with the node tests)
    dtype_sweep: bool = True       # each op in each element type, checks/dtype_sweep_cases.py (with the node tests)
    artefacts: str | None = None   # a folder: write every artefact of the run (checks/verify_artefacts.py)


def _lap(result: VerifyResult, phase: str, since: float) -> float:
    """Record ``phase`` as having taken the time since ``since``; the time now (the next phase's start)."""
    now = time.perf_counter()
    result.timings.append((phase, now - since))
    return now


def verify(config: VerifyConfig, progress: Callable[[str], None] = lambda s: None) -> VerifyResult:
    result = VerifyResult(artefacts=ArtefactWriter.into(config.artefacts))
    start = lap = time.perf_counter()
    cases = list(zoo_cases(config)) + list(device_cases(config))
    planned: dict[str, dict[str, int]] = {}   # the zoo plans' regions, for the plan-size record (judged last)
    for i, (case, scenario) in enumerate(cases, 1):
        progress(f"[{i}/{len(cases)}] {case}")
        observed = check_case(result, case, scenario, prove=config.proofs, phase="zoo")
        planned.update((case, o.regions) for o in observed[:1] if isinstance(o, PlanObservation))
        if config.fail_fast and result.failing():
            return _stop(result, start, case)
    lap = _lap(result, "zoo cases and device probes" + (" (with their proofs)" if config.proofs else ""), lap)
    if "execution" in config.kinds and config.onnx_node_tests:
        progress(f"front-end cases: {len(frontend_cases())} crafted ONNX models, and the ONNX files checked")
        check_model_files(result, config.models, config.shapes, config.values)
        check_frontend_cases(result, config.soc)
        lap = _lap(result, "front-end cases", lap)
        if config.fail_fast and result.failing():
            return _stop(result, start, "the front-end cases")
    if "execution" in config.kinds and config.acl_refusals:
        refusals = acl_refusal_cases()
        progress(f"ACL refusals: {len(refusals)} bad calls to the ACL entry points")
        check_acl_refusals(result, refusals)
        progress(f"API misuses: runtimes v1 and v2 called wrongly on {len(MISUSE_MODELS)} models, bad load options")
        check_api_misuses(result, config.soc)
        lap = _lap(result, "ACL refusals and API misuses", lap)
        if config.fail_fast and result.failing():
            return _stop(result, start, "the ACL refusals")
    if config.proofs and "plan" in config.kinds:
        progress(f"packing optimality: {PACKINGS} instances of at most {packing_proofs.MAX_BUFFERS} buffers")
        for buffers in packing_proofs.instances(PACKINGS, config.seed):
            proof = packing_proofs.prove_packing(buffers)
            result.proofs.append((packing_proofs.label(buffers), proof))
            result.artefacts.case("packing-proofs", packing_proofs.label(buffers), proof=[proof.status, proof.kind])
        lap = _lap(result, "packing optimality proofs", lap)
        cases = packing_cases(config.seed)
        progress(f"packing cases: {len(cases)} (capacities, time limits, search, refusals, CSV files)")
        _packing_cases(result, cases)
        lap = _lap(result, "packing cases", lap)
        if config.fail_fast and result.failing():
            return _stop(result, start, "the packing cases")
    if "plan" in config.kinds:
        cases = foreign_cases()
        progress(f"other compilers' plans: {len(cases)} programs (checks/foreign/programs)")
        _foreign_cases(result, cases)
        lap = _lap(result, "other compilers' plans", lap)
        if config.fail_fast and result.failing():
            return _stop(result, start, "the other compilers' plans")
    if config.ge_cases and "ge" in config.strategies:
        progress(f"GE's unit-test cases: {len(GE_CASES)} ported cases (checks/cases/ge)")
        if not _ge_cases(result, GE_CASES, config.fail_fast):
            return _stop(result, start, "GE's unit-test cases")
        lap = _lap(result, "GE's unit-test cases", lap)
    if config.onnx_node_tests and "execution" in config.kinds:
        progress("ONNX node tests: importing the cases of claimed ops")
        if not check_node_tests(result, node_test_cases(config.soc), progress, config.fail_fast):
            return _stop(result, start, "the ONNX node tests")
        lap = _lap(result, "ONNX node tests", lap)
    # With the node tests (as the front-end cases), after them: a front-end bug they catch is named by them
    # first under --fail-fast, and the sweep is built from their cases, collected once per process.
    if "execution" in config.kinds and config.onnx_node_tests and config.shipped_cases:
        shipped = shipped_cases()
        progress(f"shipped pytorch cases: {len(shipped)} models of the onnx package (opset 6) against their outputs")
        if not check_shipped_cases(result, shipped, config.soc, config.fail_fast):
            return _stop(result, start, "the shipped pytorch cases")
        lap = _lap(result, "shipped pytorch cases", lap)
    if "execution" in config.kinds and config.onnx_node_tests and config.dtype_sweep:
        swept = sweep_cases()
        progress(f"dtype sweep: {len(swept)} one-node models, each op in each element type ONNX allows")
        if not check_dtype_sweep(result, swept, config.soc, progress, config.fail_fast):
            return _stop(result, start, "the dtype sweep")
        lap = _lap(result, "dtype sweep", lap)
    kinds = tuple(k for k in config.kinds if k in default_kinds())
    if config.examples and kinds:
        progress(f"random campaign: {config.examples} scenarios ({', '.join(kinds)}), seed {config.seed}")
        campaign = run_campaign(scenarios(kinds=kinds), max_examples=config.examples, seed=config.seed,
                                shrink=not config.fail_fast, proofs=CAMPAIGN_PROOFS if config.proofs else (),
                                on_case=lambda n: progress(f"  campaign case {n}") if n % 50 == 0 else None,
                                on_observed=_campaign_case(result.artefacts))
        result.tally.merge(campaign.tally)
        result.counterexample = campaign.counterexample
        lap = _lap(result, "random campaign", lap)
        if config.fail_fast and result.failing():
            return _stop(result, start, "the random campaign")
    if config.corpus:
        for path in corpus_files():
            progress(f"corpus {path}")
            replayed = replay(Counterexample.load(path))
            result.corpus.append(replayed)
            result.artefacts.case("corpus", str(path), summary=replayed.summary(), error=replayed.error,
                                  still_fails=replayed.still_fails)
            if config.fail_fast and not result.corpus[-1].as_expected:
                return _stop(result, start, f"corpus {path}")
        lap = _lap(result, "corpus", lap)
    if _plan_sizes_apply(config):
        # Last: a size that changed is the record's to name only where no claim, proof or case did first.
        # A look-up per zoo plan, so no phase of its own in the timings.
        _plan_sizes(result, planned)
    result.seconds = time.perf_counter() - start
    return result


def _plan_sizes(result: VerifyResult, planned: dict[str, dict[str, int]]) -> None:
    """Each zoo plan's regions against checks/conformance/plan_sizes.json: a difference is a failed check
    naming the case (checks/plan_size_record.py)."""
    record = plan_size_record.load_record()
    for case, regions in planned.items():
        why = plan_size_record.differences(case, regions, record)
        if why:
            record_error(result, f"plan-size record {case}", why, "check")


def _plan_sizes_apply(config: VerifyConfig) -> bool:
    """The plan-size record holds the zoo's plans as the zoo gives them on the SoC it was recorded on."""
    return config.soc == plan_size_record.SOC and not config.shapes and not config.values


def _ge_cases(result: VerifyResult, cases, fail_fast: bool) -> bool:
    """Each of GE's ported unit tests, judged against its record (checks/cases/ge/judge.py): a match that
    no longer matches, or a deviation that no longer deviates as recorded (a stale record included), is an
    error naming GE's test file and TEST_F; where zcspec's plan of the case's graph breaks a claim, each
    violation is a finding of that claim on the case instead (the claim caught it, as on any other case).
    Returns False when ``fail_fast`` stopped the phase."""
    failed = 0
    for i, case in enumerate(cases, 1):
        outcome = judge_ge_case(case)
        if not outcome.ok:   # a mismatch or a stale record is the check's finding; an exception is zcspec's
            failed += 1
            e = outcome.error
            if outcome.verdict == "mismatch" and isinstance(e, PlanCheckFailed) and e.violations:
                result.findings.extend(Finding(case.label, v) for v in e.violations)
            else:
                kind = "check" if e is None or isinstance(e, AssertionError) else exception_kind(e)
                record_error(result, case.label, outcome.message, kind)
        result.artefacts.case("ge-cases", case.label, verdict=outcome.verdict, message=outcome.message)
        if fail_fast and result.failing():
            result.ge_cases = (i, failed)
            return False
    result.ge_cases = (len(cases), failed)
    return True


def _packing_cases(result: VerifyResult, cases) -> None:
    """Each case of checks/packing_cases.py, judged by the checker's own facts: a problem is an error of the
    run naming the case (the packer's answer is wrong: a failed check; or it raised where the case expected an
    answer: its refusal of a valid input, or a crash)."""
    failed = 0
    for case in cases:
        label_ = f"packing case {case.label}"
        problems, raised = run_packing_case(case)
        if raised is not None:
            record_raised(result, label_, raised, prefix=f"{case.label}: ")
        else:
            for p in problems:
                record_error(result, label_, p, "check")
        failed += bool(problems)
        result.artefacts.case("packing-cases", label_, problems=problems)
    result.packing_cases = (len(cases), failed)


def _foreign_cases(result: VerifyResult, cases) -> None:
    """Each kept program of another compiler: its plan read from the saved artefact and checked. A clean
    program's violation is a finding; a known bug that is no longer found (or found by another claim)
    is an error of the run naming the program; a reader's crash too."""
    for case in cases:
        try:
            plans = case.imported()
        except Exception as e:  # the reader failed on a file it was made for
            record_raised(result, f"foreign {case.label}", e)
            result.artefacts.case("foreign", case.label, error=result.errors[-1][1])
            continue
        reports = [check(p.plan) for p in plans]
        wrong = foreign_problems(case, reports)
        # A known bug found is what the case is for: tallied as exercised, not as a claim violated.
        expected = (case.expect, *case.also)
        result.tally.add([attrs.evolve(r, violations=tuple(v for v in r.violations if v.invariant_id not in expected))
                          for r in reports], [f"foreign:{case.label}:{p.program}" for p in plans])
        result.foreign.append((case.label, case.expect, wrong))
        if case.expect == "clean":
            result.findings.extend(Finding(f"foreign {p.title}", v, violation_rows(p.plan, v))
                                   for p, r in zip(plans, reports) for v in r.violations)
        else:
            for w in wrong:
                record_error(result, f"foreign {case.label}", w, "check")
        result.artefacts.case("foreign", case.label, observations=[p.plan for p in plans], reports=reports,
                              titles=[p.title for p in plans], problems=list(wrong))


def _campaign_case(artefacts: ArtefactWriter):
    """The campaign's ``on_observed`` hook writing each case it checks (None when nothing is written)."""
    if not artefacts.enabled:
        return None
    return lambda key, scenario, observations, reports: artefacts.case(
        "campaign", key, scenario=scenario, observations=observations, reports=reports,
        notes=[[n.run, n.reason, n.failed] for n in notes_of(observations)])


def _stop(result: VerifyResult, start: float, where: str) -> VerifyResult:
    result.stopped = f"stopped at the first failure (--fail-fast), in {where}"
    result.seconds = time.perf_counter() - start
    return result


# Packing instances whose packer result Z3 holds to the optimum (checks/proofs/packing.py): plan claims
# judge a layout's safety, these its size.
PACKINGS = 200
