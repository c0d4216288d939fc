"""Every invariant's documented examples: the satisfying one is clean and exercises it, the violating one is
reported naming the culprit. These are the examples docs/SPEC.md shows."""
from __future__ import annotations

import pytest

from zcspec.spec.check import check
from zcspec.spec.examples import all_examples
from zcspec.spec.registry import all_invariants, get

EXAMPLES = all_examples()


def test_every_invariant_has_examples():
    assert [i.id for i in all_invariants() if i.id not in EXAMPLES] == []
    assert sorted(EXAMPLES) == sorted(i.id for i in all_invariants())


@pytest.mark.parametrize("invariant_id", sorted(EXAMPLES))
def test_satisfying_example_is_clean_and_exercises_its_invariant(invariant_id):
    report = check(EXAMPLES[invariant_id].satisfies)
    assert report.ok, str(report)  # clean against the whole catalogue, not just its own claim
    assert invariant_id in report.exercised


@pytest.mark.parametrize("invariant_id", sorted(EXAMPLES))
def test_violating_example_is_reported_naming_the_culprit(invariant_id):
    ex = EXAMPLES[invariant_id]
    found = get(invariant_id).violations(ex.violates)
    assert found, f"{invariant_id}: the violating example ({ex.why}) was not reported"
    assert any(ex.culprit in v.culprit for v in found), [str(v) for v in found]
    assert invariant_id in check(ex.violates).violated()
