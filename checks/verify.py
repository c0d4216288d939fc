"""The main job: every applicable invariant over the zoo, ONNX's backend node tests, Z3 proofs (layouts,
v1 refresh, the packer's arena against the optimum on small instances), a bounded random campaign and
the corpus; per-invariant counts of the distinct cases that exercised it.

``verify(config)`` returns a VerifyResult; ``checks/cli/verify.py`` prints it. The random
campaign draws the default scenario mix (checks/strategies/scenarios.py): plans, model files
and executions of random graphs through both runtimes with random bindings, against the oracle.
ONNX's node tests of the claimed ops are held-out models (checks/onnx_node_cases.py): each that
imports runs through both runtimes on its own inputs, judged by every execution claim, its outputs
by ONNX's expected outputs (EXEC-ORACLE); one refused at import as unsupported is counted, not run.
How each imports (refused naming which feature, which inputs frozen) must be what the reviewed record
checks/conformance/imports.json states: a front end that refuses more, or asks for more values, fails.
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
nothing on the device. With the ``ge`` strategy, GE's own unit tests ported as a catalogue
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

import os
import tempfile
import time
from typing import Callable

import attrs
import onnx

from zcspec.checks.acl_refusal_cases import acl_refusal_cases, check_acl_refusal
from zcspec.checks.campaign import CAMPAIGN_PROOFS, check_observations, run_campaign
from zcspec.checks.cases.ge.all import CASES as GE_CASES
from zcspec.checks.cases.ge.judge import judge as judge_ge_case
from zcspec.checks.conformance import import_record
from zcspec.checks.counterexample import Counterexample
from zcspec.checks.dtype_sweep_cases import KNOWN as SWEEP_KNOWN
from zcspec.checks.dtype_sweep_cases import SweepCase, sweep_cases
from zcspec.checks.dtype_sweep_cases import check_refusal as check_sweep_refusal
from zcspec.checks.execution import races
from zcspec.checks.foreign.programs import foreign_cases
from zcspec.checks.foreign.programs import problems as foreign_problems
from zcspec.checks.frontend_cases import check_refusal, frontend_cases
from zcspec.checks.models import load_graph
from zcspec.checks.onnx_node_cases import NodeTests, label, node_test_cases
from zcspec.checks.packing_cases import check_packing_case, packing_cases
from zcspec.checks.proofs import packing as packing_proofs
from zcspec.checks.proofs.cases import case_proofs
from zcspec.checks.replay import corpus_files, replay
from zcspec.checks.scenario import KINDS, Scenario, notes_of, observe
from zcspec.checks.shipped_pytorch_cases import judge as judge_shipped
from zcspec.checks.shipped_pytorch_cases import label as shipped_label
from zcspec.checks.shipped_pytorch_cases import shipped_cases
from zcspec.checks.strategies.scenarios import default_kinds, scenarios
from zcspec.checks.verify_artefacts import ArtefactWriter
from zcspec.checks.verify_cases import case_runs, device_cases, zoo_cases
from zcspec.checks.verify_result import (
    Finding, NodeTestResult, SweepResult, VerifyResult, exception_kind, record_error,
    record_raised, violation_rows,
)
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.platform.errors import BadInput
from zcspec.spec.check import check

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


def _check_case(result: VerifyResult, case: str, scenario: Scenario, *, prove: bool, phase: str = "zoo") -> None:
    try:
        observations = observe(scenario)
    except Exception as e:  # the code under test crashed or refused its own artefact: a finding of its own
        record_raised(result, case, e)
        result.artefacts.case(phase, case, scenario=scenario, error=result.errors[-1][1])
        return
    reports, _failed = check_observations(case, observations, result.tally, races(scenario))   # failed: tally.notes
    for obs, report in zip(observations, reports):
        for v in report.violations:
            result.findings.append(Finding(case, v, violation_rows(obs, v)))
    proofs = []
    if prove:
        try:
            proofs = list(case_proofs(scenario, observations))
        except Exception as e:  # e.g. the loader refuses a file the compiler wrote: the code under test's
            record_raised(result, case, e, "proof: ")
        result.proofs.extend((case, p) for p in proofs)
    result.artefacts.case(phase, case, scenario=scenario, observations=observations, reports=reports,
                          notes=[[n.run, n.reason, n.failed] for n in notes_of(observations)],
                          proofs=[[p.status, p.kind, p.pair] for p in proofs])


def _lap(result: VerifyResult, phase: str, since: float) -> float:
    """Record ``phase`` as having taken the time since ``since``; the time now (the next phase's start)."""
    now = time.perf_counter()
    result.timings.append((phase, now - since))
    return now


def verify(config: VerifyConfig, progress: Callable[[str], None] = lambda s: None) -> VerifyResult:
    result = VerifyResult(artefacts=ArtefactWriter.into(config.artefacts))
    start = lap = time.perf_counter()
    cases = list(zoo_cases(config)) + list(device_cases(config))
    for i, (case, scenario) in enumerate(cases, 1):
        progress(f"[{i}/{len(cases)}] {case}")
        _check_case(result, case, scenario, prove=config.proofs, phase="zoo")
        if config.fail_fast and result.failing():
            return _stop(result, start, case)
    lap = _lap(result, "zoo cases and device probes" + (" (with their proofs)" if config.proofs else ""), lap)
    if "execution" in config.kinds and config.onnx_node_tests:
        progress(f"front-end cases: {len(frontend_cases())} crafted ONNX models")
        _frontend_cases(result, config)
        lap = _lap(result, "front-end cases", lap)
        if config.fail_fast and result.failing():
            return _stop(result, start, "the front-end cases")
    if "execution" in config.kinds and config.acl_refusals:
        refusals = acl_refusal_cases()
        progress(f"ACL refusals: {len(refusals)} bad calls to the ACL entry points")
        _acl_refusals(result, refusals)
        lap = _lap(result, "ACL refusals", lap)
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
        if not _node_tests(result, node_test_cases(config.soc), progress, config.fail_fast):
            return _stop(result, start, "the ONNX node tests")
        lap = _lap(result, "ONNX node tests", lap)
    # With the node tests (as the front-end cases), after them: a front-end bug they catch is named by them
    # first under --fail-fast, and the sweep is built from their cases, collected once per process.
    if "execution" in config.kinds and config.onnx_node_tests and config.shipped_cases:
        shipped = shipped_cases()
        progress(f"shipped pytorch cases: {len(shipped)} models of the onnx package (opset 6) against their outputs")
        if not _shipped_cases(result, shipped, config.soc, config.fail_fast):
            return _stop(result, start, "the shipped pytorch cases")
        lap = _lap(result, "shipped pytorch cases", lap)
    if "execution" in config.kinds and config.onnx_node_tests and config.dtype_sweep:
        swept = sweep_cases()
        progress(f"dtype sweep: {len(swept)} one-node models, each op in each element type ONNX allows")
        if not _dtype_sweep(result, swept, config.soc, progress, config.fail_fast):
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
    result.seconds = time.perf_counter() - start
    return result


def _ge_cases(result: VerifyResult, cases, fail_fast: bool) -> bool:
    """Each of GE's ported unit tests, judged against its record (checks/cases/ge/judge.py): a match that
    no longer matches, or a deviation that no longer deviates as recorded (a stale record included), is an
    error naming GE's test file and TEST_F. Returns False when ``fail_fast`` stopped the phase."""
    failed = 0
    for i, case in enumerate(cases, 1):
        outcome = judge_ge_case(case)
        if not outcome.ok:   # a mismatch or a stale record is the check's finding; an exception is zcspec's
            failed += 1
            e = outcome.error
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
    run naming the case (the packer's answer is wrong, or it crashed)."""
    failed = 0
    for case in cases:
        label_ = f"packing case {case.label}"
        try:
            problems = check_packing_case(case)
        except Exception as e:  # a crash of the packer (check_packing_case expects only its declared refusals)
            record_raised(result, label_, e)
            problems = [result.errors[-1][1]]
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


def _acl_refusals(result: VerifyResult, cases) -> None:
    """Each bad call of checks/acl_refusal_cases.py: refused with the C API's code, changing nothing; a problem
    (or a crash: an exception other than the runtime's error) is an error of the run naming the call."""
    failed = 0
    for case in cases:
        label_ = f"ACL refusal {case.label}"
        try:
            problems = check_acl_refusal(case)
        except Exception as e:  # the facade raised something a C caller would never get back
            record_error(result, label_, f"{type(e).__name__}: {e}", "crash")
            problems = [result.errors[-1][1]]
        else:
            for p in problems:
                record_error(result, label_, p, "check")
        failed += bool(problems)
        result.artefacts.case("acl-refusals", label_, problems=problems)
    result.acl_refusals = (len(cases), failed)


def _frontend_cases(result: VerifyResult, config: VerifyConfig) -> None:
    """Each crafted model of checks/frontend_cases.py: a refusal must be the expected one (an error of the
    run otherwise); a model that must import runs through both runtimes against onnxruntime on its file."""
    with tempfile.TemporaryDirectory(prefix="zcspec-frontend-") as folder:
        for case in frontend_cases():
            label_ = f"front-end case {case.name}"
            path = os.path.join(folder, case.name + (".json" if isinstance(case.model, str) else ".onnx"))
            if isinstance(case.model, str):
                with open(path, "w", encoding="utf-8") as f:
                    f.write(case.model)
            else:
                onnx.save(case.model, path)
            try:
                graph = load_graph(path)   # what `zcspec plan FILE` / `zcspec verify FILE` load it with
            except BadInput as e:
                if why := check_refusal(case, e):
                    record_error(result, label_, why, "check")
                result.artefacts.case("frontend", label_, refused=f"{type(e).__name__}: {e}", problem=why)
                continue
            except Exception as e:  # a crash of the front end
                record_error(result, label_, f"{type(e).__name__}: {e}", "crash")
                result.artefacts.case("frontend", label_, error=result.errors[-1][1])
                continue
            if case.refused:
                record_error(result, label_, f"imports; expected a {case.refused} naming {', '.join(case.culprits)} "
                                       f"({case.why})", "check")
                result.artefacts.case("frontend", label_, problem=result.errors[-1][1])
                continue
            scenario = Scenario("execution", graph, CompileOptions(soc=config.soc), case_runs("execution", graph, path))
            _check_case(result, f"{label_} [execution]", scenario, prove=False, phase="frontend")


def _shipped_cases(result: VerifyResult, cases, soc: str, fail_fast: bool) -> bool:
    """Each shipped pytorch model (checks/shipped_pytorch_cases.py) imported, compiled and run on both
    runtimes, held to its shipped outputs: anything else is an error naming the case. Returns False when
    ``fail_fast`` stopped the phase."""
    failed = 0
    for i, case in enumerate(cases, 1):
        label_ = shipped_label(case.name)
        r, outcome = judge_shipped(case, soc)
        if outcome is not None:
            failed += 1
            record_error(result, label_, outcome.message, outcome.kind)
        result.artefacts.case("shipped-pytorch", label_, status=r.status, stage=r.stage, detail=r.detail,
                              frozen=list(r.frozen))
        if fail_fast and result.failing():
            result.shipped_cases = (i, failed)
            return False
    result.shipped_cases = (len(cases), failed)
    return True


# What a model of the dtype sweep that imports and then fails on the device is.
ACCEPTED_UNCOMPUTABLE = "the front end accepted what the device cannot compute"


def _dtype_sweep(result: VerifyResult, cases, soc: str, progress, fail_fast: bool) -> bool:
    """Each model of checks/dtype_sweep_cases.py: refused at import naming its node and element type, or
    imported and run through both runtimes against onnxruntime on its file, with no call failing, no crash
    and no claim violated. A recorded failure (``KNOWN``) must still fail; one that passes is an error (its
    record is stale). Returns False when ``fail_fast`` stopped the phase."""
    sweep = result.dtype_sweep = SweepResult()
    with tempfile.TemporaryDirectory(prefix="zcspec-dtype-sweep-") as folder:
        for i, case in enumerate(cases, 1):
            if i % 200 == 0:
                progress(f"  dtype sweep model {i}/{len(cases)}")
            own = VerifyResult(artefacts=result.artefacts)   # judged apart: a known failure must not fail the run
            outcome = _sweep_case(own, case, folder, soc)
            why = SWEEP_KNOWN.get(case.key)
            if why is not None:
                if own.failing():
                    sweep.known.append((case.label, why))
                else:
                    now = "is refused naming its node and type" if outcome == "refused" else "passes"
                    record_error(result, case.label, f"recorded as failing ({why}) but {now}: its record in "
                                               "checks/dtype_sweep_cases.py KNOWN is stale", "check")
                    sweep.failed.append(case.label)
            else:
                result.tally.merge(own.tally)
                result.findings.extend(own.findings)
                result.errors.extend(own.errors)
                result.error_kinds.extend(own.error_kinds)
                if own.failing():
                    sweep.failed.append(case.label)
                elif outcome == "refused":
                    sweep.refused.append(case.label)
                elif own.unjudged:
                    sweep.unjudged.append(case.label)
            sweep.run += outcome == "ran"
            if fail_fast and result.failing():
                return False
    return True


def _sweep_case(own: VerifyResult, case: SweepCase, folder: str, soc: str) -> str:
    """Judge one model of the dtype sweep into ``own``; what it did: "refused", or "ran" (also when a
    failure of it is recorded in ``own``), or "did not import"."""
    path = os.path.join(folder, f"{case.node}.onnx")
    onnx.save(case.model, path)
    try:
        graph = load_graph(path)
    except BadInput as e:
        if problem := check_sweep_refusal(case, e):
            record_error(own, case.label, problem, "check")
        own.artefacts.case("dtype-sweep", case.label, refused=f"{type(e).__name__}: {e}", problem=problem)
        return "refused"
    except Exception as e:  # a crash of the front end
        record_error(own, case.label, f"{type(e).__name__}: {e}", "crash")
        own.artefacts.case("dtype-sweep", case.label, error=own.errors[-1][1])
        return "did not import"
    run = {"runtime": "differential", "zero_copy": True, "onnx": path, "values": {}}
    _check_case(own, case.label, Scenario("execution", graph, CompileOptions(soc=soc), {"runs": [run]}),
                prove=False, phase="dtype-sweep")
    # a crash of the run, or a call that failed on valid buffers: the device could not compute what was accepted
    own.errors[:] = [(c, f"{ACCEPTED_UNCOMPUTABLE}: {m}") for c, m in own.errors]
    for note in own.failed_calls:
        record_error(own, case.label, f"{ACCEPTED_UNCOMPUTABLE}: {note.run}: {note.reason}", "check")
    return "ran"


def _node_tests(result: VerifyResult, tests: NodeTests, progress, fail_fast: bool) -> bool:
    """Check every node test case into ``result``; False when a fail-fast run must stop. A case fails
    on any finding, crash or failed valid call, and on any output left unjudged (its oracle is
    ONNX's expected outputs: one missing is an error of the case, recorded as a crash of it)."""
    nodes = result.node_tests = NodeTestResult(refused=list(tests.refused), known=list(tests.known))
    for name, why in tests.broken:   # refused naming no unsupported feature, or the front end crashed
        record_error(result, f"{label(name)} [import]", why, "refusal" if why.split(":")[0] in _refusal_names() else "crash")
        nodes.failed.append(label(name))
    record = import_record.load_record()
    for name, why in import_record.differences(import_record.observed(tests), record, [n for n, _ in tests.frozen]):
        record_error(result, f"{label(name)} [import]", f"{why} ({import_record.RECORD.name})", "check")
        nodes.failed.append(label(name))
    for name, why in (*tests.refused, *tests.broken):
        result.artefacts.case("node-tests", f"{label(name)} [import]", refused=why)
    if fail_fast and result.failing():
        return False
    for i, (case, scenario) in enumerate(tests.cases, 1):
        if i % 100 == 0:
            progress(f"  ONNX node test {i}/{len(tests.cases)}")
        before = (len(result.findings), len(result.errors), len(result.tally.notes))
        _check_case(result, case, scenario, prove=False, phase="node-tests")   # execution cases have no proofs
        nodes.run += 1
        for note in result.tally.notes[before[2]:]:
            if not note.failed:
                record_error(result, case, f"output not judged by the node test's expected outputs: {note.reason}", "check")
        if (len(result.findings), len(result.errors), len(result.tally.notes)) != before:
            nodes.failed.append(case)
        if fail_fast and result.failing():
            return False
    return True


def _refusal_names() -> set[str]:
    """The class names of impl's refusals (BadInput and its subclasses under zcspec.impl): an import error
    of a node test arrives as text ("Name: message"), its class known by name only."""
    found, todo = set(), [BadInput]
    while todo:
        cls = todo.pop()
        found.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    return found


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
