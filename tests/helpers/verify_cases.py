"""verify's fixed cases of some zoo models, checked as verify checks them (no proofs)."""
from __future__ import annotations

from zcspec.checks.verify import VerifyConfig, VerifyResult
from zcspec.checks.verify_cases import zoo_cases
from zcspec.checks.verify_one_case import check_case


def checked(models, marker: str, kinds=("execution",)) -> VerifyResult:
    """verify's cases of ``models`` (of ``kinds``; None: verify's default kinds) whose label contains ``marker``,
    checked into one result."""
    result = VerifyResult()
    config = VerifyConfig(models=tuple(models), proofs=False)
    if kinds is not None:
        config = VerifyConfig(models=tuple(models), kinds=tuple(kinds), proofs=False)
    for case, scenario in zoo_cases(config):
        if marker in case:
            check_case(result, case, scenario, prove=False)
    return result


def failed_notes(result: VerifyResult) -> list:
    """The notes of valid calls that failed."""
    return [n for n in result.tally.notes if n.failed]
