"""Plain ``zcspec verify`` catches the bugs nobody seeded (issue 13).

Each bug of ``unseeded_bugs.BUGS`` is installed in turn and the default verify run (the whole zoo,
both strategies, the random campaign, the proofs and the corpus: what ``zcspec verify`` runs) must
fail. The same run on the real code passes (tests/checks: the verify tests), so a failure here
is the bug's, not a flaky claim's.
"""
from __future__ import annotations

import pytest

from tests.helpers.unseeded_bugs import BUGS, installed
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.checks.zoo import zoo_names
from zcspec.spec.registry import ids


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_default_verify_reports_the_bug(bug):
    with installed(bug):
        result = verify(VerifyConfig(models=zoo_names(), fail_fast=True))
    fired = sorted({f.violation.invariant_id for f in result.findings}
                   | ({result.counterexample.invariant} if result.counterexample else set()))
    failed_proofs = [p for _, p in result.proofs if not p.passed]
    assert not result.ok(list(ids())), f"{BUGS[bug][0]}: verify passed"
    assert fired or failed_proofs, f"{BUGS[bug][0]}: verify failed only through {result.errors or 'coverage'}"
