"""The planted faults of tests/helpers/witness_faults.py fail ``verify`` through the claim that reads the
device's witness (issue 35), on the zoo cases that put each to the test (slow: one verify run per fault)."""
from __future__ import annotations

import pytest

from tests.helpers import witness_faults as planted
from zcspec.checks.verify import VerifyConfig, verify

MODELS = ("builtin:collectives", "builtin:atomic_clean", "builtin:inplace_passthrough", "builtin:constants")
FAULTS = {
    "V1-REUSE-ZC-MEMORY": planted._io_region_allocated_but_reported_unbacked,
    "EXEC-READ-WRITTEN": planted._atomic_clean_dropped,
    "V1-SLOT-REFRESH": planted._table_stomped_after_launch,
    "EXEC-COUNTERS-TRUE": planted._kernel_launches_counted_twice,
    "V2-TRUST-SHAPE": planted._ensure_kept,
}


def _fired(fault) -> set[str]:
    config = VerifyConfig(models=MODELS, examples=0, proofs=False, corpus=False, onnx_node_tests=False,
                          acl_refusals=False)
    with fault():
        result = verify(config)
    return {f.violation.invariant_id for f in result.findings}


@pytest.mark.slow
def test_the_zoo_cases_hold_without_a_fault():
    import contextlib
    assert _fired(contextlib.nullcontext) == set()


@pytest.mark.slow
@pytest.mark.parametrize("claim", sorted(FAULTS))
def test_verify_reports_the_planted_fault_through_its_claim(claim):
    assert claim in _fired(FAULTS[claim])
