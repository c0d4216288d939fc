"""How ``zcspec verify`` checks one case: ``check_case(result, case, scenario, prove=..., phase=...)`` observes
the scenario (checks/scenario.py), judges every observation by the spec, proves what the scenario allows
when ``prove`` is set, and records it all into ``result`` (a VerifyResult) under the label ``case``:
findings with the plan rows each violation names, the tally, the proofs, and the case's artefact under
``phase``. A crash of the code under test, or a proof it makes impossible, is an error of the case, not
an exception of the run. checks/verify.py and its ONNX phases (checks/verify_onnx_cases.py) call it."""
from __future__ import annotations

from zcspec.checks.campaign import check_observations
from zcspec.checks.execution import races
from zcspec.checks.proofs.cases import case_proofs
from zcspec.checks.scenario import Scenario, notes_of, observe
from zcspec.checks.verify_result import Finding, VerifyResult, record_raised, violation_rows


def check_case(result: VerifyResult, case: str, scenario: Scenario, *, prove: bool, phase: str = "zoo") -> list:
    """Returns the case's observations ([] when observing it failed)."""
    try:
        observations = observe(scenario)
    except Exception as e:  # the code under test crashed or refused its own artefact: a finding of its own
        record_raised(result, case, e)
        result.artefacts.case(phase, case, scenario=scenario, error=result.errors[-1][1])
        return []
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
    return observations
