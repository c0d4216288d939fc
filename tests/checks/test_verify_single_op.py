"""GE's single-op executor (impl/runtime/v2/single_op.py) in verify: its runs are judged by what GE's single-op
entry promises the caller (always zero copy, trusted output shapes unless refreshed), not by the options the
executor reports, so an executor that drops one of them fails verify."""
from __future__ import annotations

import pytest

from zcspec.checks import verify_cases as C
from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import v2 as run_v2
from zcspec.impl.runtime.v2 import single_op
from zcspec.impl.runtime.v2.options import LoweringOptions
from tests.helpers.verify_cases import checked, failed_notes


def _result():
    return checked(C.SINGLE_OP_EXECUTOR_MODELS, "single-op executor")


def _violated(result) -> set[str]:
    return {f.violation.invariant_id for f in result.findings}


def test_every_single_op_executor_case_runs_and_passes():
    result = _result()
    assert not result.findings and not result.errors, (result.findings, result.errors)
    assert not failed_notes(result)
    for claim in ("V2-AZC-REJECT", "V2-AZC-NO-ALLOC", "V2-OUT-IS-USER", "V2-TRUST-SHAPE", "CALL-INVALID-REFUSED"):
        assert result.tally.exercised[claim] > 0, claim


def _forcing(monkeypatch, **over):
    monkeypatch.setattr(single_op, "LoweringOptions", lambda **kw: LoweringOptions(**{**kw, **over}))


def test_an_executor_that_does_not_force_always_zero_copy_fails():
    """It falls back to its own memory for a short output instead of refusing the call."""
    with pytest.MonkeyPatch.context() as mp:
        _forcing(mp, always_zero_copy=False)
        assert "V2-AZC-REJECT" in _violated(_result())


def test_an_executor_that_does_not_trust_the_output_shapes_fails():
    with pytest.MonkeyPatch.context() as mp:
        _forcing(mp, trust_shape_on_out_tensor=False)
        assert "V2-TRUST-SHAPE" in _violated(_result())


@pytest.mark.parametrize("runtime, key", [
    ({"runtime": "v2", "api": "single_op", "always_zero_copy": True}, "always_zero_copy"),
    ({"runtime": "v2", "api": "single_op", "threads": 2}, "threads"),
    ({"runtime": "v2", "api": "single_op", "refresh_output_ori_shape": 1}, "refresh_output_ori_shape"),
    ({"runtime": "v2", "refresh_output_ori_shape": True}, "refresh_output_ori_shape"),
    ({"runtime": "v2", "api": "acl"}, "api"),
])
def test_a_single_op_run_that_sets_what_the_executor_fixes_is_refused(runtime, key):
    with pytest.raises(ScenarioError) as e:
        run_v2.options_of(runtime)
    assert e.value.key == key
