"""Runtime v1 on GE's legacy path with outputs that pass an input through (checks/verify_cases.py
LEGACY_PASSTHROUGH_RUN): the copy-source rule decides where such an output comes from; verify's cases pass on
the real runtime, and a rule that looks at the inputs instead of the outputs fails them through the claims."""
from __future__ import annotations

from zcspec.checks import verify_cases as C
from zcspec.impl.runtime.v1 import zero_copy
from tests.helpers.verify_cases import checked, failed_notes


def _result():
    return checked(C.LEGACY_PASSTHROUGH_MODELS, "legacy_copy_only_addrs")


def test_legacy_pass_through_runs_and_every_claim_holds():
    result = _result()
    assert not result.findings and not result.errors, (result.findings, result.errors)
    assert not failed_notes(result)
    assert result.tally.exercised["V1-COPY-ONLY-ONCE"] >= 1


def test_a_copy_source_rule_that_finds_none_fails(monkeypatch):
    """The mutation run at 4e340f3 flipped ``k[0] != "output"`` in copy_sources, which then looks for sources of
    the inputs: on these models it finds none, as here, and verify passed."""
    monkeypatch.setattr(zero_copy, "copy_sources", lambda model: {})
    found = {f.violation.invariant_id for f in _result().findings}
    assert {"V1-COPY-ONLY-ONCE", "V1-ZERO-COPY-WHEN-ELIGIBLE"} & found, found
