"""Verify's API-misuse calls: each runtime called wrongly, judged by the API-misuse claims.

On each model of ``MISUSE_MODELS`` (one without dynamic-batch branches, one with), runtime v1 and runtime v2
are called with a buffer too few, a buffer too many, a batch label the model file does not have, and after
the caller's unload; then each runtime's load options are built with every switch out of its domain
(checks/execution/api_misuse.py). Each call is one observation judged by the claims (spec/invariants/
api_calls.py: API-MISUSE-REFUSED, API-MISUSE-CHANGES-NOTHING); a model whose valid call is refused is a
refusal of the run, an exception escaping the caller a crash.
"""
from __future__ import annotations

from zcspec.checks.campaign import check_observations
from zcspec.checks.execution.api_misuse import misuse_observations, option_observations
from zcspec.checks.verify_result import Finding, VerifyResult, record_error
from zcspec.checks.zoo import load as load_graph
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.options import CompileOptions

MISUSE_MODELS = ("builtin:sized_inputs", "builtin:dynamic_batch")


def _judge(result: VerifyResult, label_: str, observations) -> None:
    for obs in observations:
        case = f"{label_}: {obs.name}"
        reports, _ = check_observations(case, [obs], result.tally)
        result.findings.extend(Finding(case, v) for v in reports[0].violations)
        result.artefacts.case("api-misuse", case, observations=[obs], reports=reports)


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
