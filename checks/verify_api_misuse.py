"""Verify's API-misuse calls: each runtime called wrongly, and ACL's entry points given bad arguments, judged
by the API-misuse claims.

On each model of ``MISUSE_MODELS`` (one without dynamic-batch branches, one with), runtime v1 and runtime v2
are called with a buffer too few, a buffer too many, a batch label the model file does not have, and after
the caller's unload; then each runtime's load options are built with every switch out of its domain
(checks/execution/api_misuse.py). Each call is one observation judged by the claims (spec/invariants/
api_calls.py: API-MISUSE-REFUSED, API-MISUSE-CHANGES-NOTHING); a model whose valid call is refused is a
refusal of the run, an exception escaping the caller a crash.

The ACL refusal cases (checks/acl_refusal_cases.py, ``check_acl_refusals``) are judged twice: by their own
expectations (the code each case's source names, nothing changed, the model still runs; a problem is a
failed check of the run) and, through the bad call's transcription, by the same claims.
"""
from __future__ import annotations

from zcspec.checks.acl_refusal_cases import run_acl_refusal
from zcspec.checks.campaign import check_observations
from zcspec.checks.execution.api_misuse import misuse_observations, option_observations
from zcspec.checks.verify_result import Finding, VerifyResult, record_error
from zcspec.checks.zoo import load as load_graph
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.options import CompileOptions

MISUSE_MODELS = ("builtin:sized_inputs", "builtin:dynamic_batch")


def _judge(result: VerifyResult, label_: str, observations, kind: str = "api-misuse", **written) -> None:
    for obs in observations:
        case = f"{label_}: {obs.name}"
        reports, _ = check_observations(case, [obs], result.tally)
        result.findings.extend(Finding(case, v) for v in reports[0].violations)
        result.artefacts.case(kind, case, observations=[obs], reports=reports, **written)


def check_acl_refusals(result: VerifyResult, cases) -> None:
    """Each bad ACL call: its case's problems are failed checks of the run (an exception other than the
    runtime's error, a crash), and its transcription is judged by the claims."""
    failed = 0
    for case in cases:
        label_ = f"ACL refusal {case.label}"
        try:
            run = run_acl_refusal(case)
        except Exception as e:  # the facade raised something a C caller would never get back
            record_error(result, label_, f"{type(e).__name__}: {e}", "crash")
            failed += 1
            result.artefacts.case("acl-refusals", label_, problems=[result.errors[-1][1]])
            continue
        for p in run.problems:
            record_error(result, label_, p, "check")
        failed += bool(run.problems)
        if run.observation is None:
            result.artefacts.case("acl-refusals", label_, problems=run.problems)
        else:
            _judge(result, label_, [run.observation], "acl-refusals", problems=run.problems)
    result.acl_refusals = (len(cases), failed)


def check_api_misuses(result: VerifyResult, soc: str) -> int:
    """Make and judge every misuse call; returns how many calls were judged."""
    judged = 0
    for name in MISUSE_MODELS:
        label_ = f"API misuse {name}"
        try:
            observations = misuse_observations(build_model(load_graph(name), CompileOptions(soc=soc)))
        except RuntimeError as e:   # a valid call refused: the misuses cannot be judged
            record_error(result, label_, str(e), "refusal")
            continue
        except Exception as e:  # a crash of the code under test
            record_error(result, label_, f"{type(e).__name__}: {e}", "crash")
            continue
        _judge(result, label_, observations)
        judged += len(observations)
    for runtime in ("v1", "v2"):
        observations = option_observations(runtime)
        _judge(result, "API misuse options", observations)
        judged += len(observations)
    return judged
