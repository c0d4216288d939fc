"""GE's ``tests/ge/st/testcase/fast_runtime_v2/trust_output_tensor_system_test.cc`` (TrustOutputTensorST), ported.

The cases are in zcspec.checks.cases.ge.trust_output_tensor (the catalogue, which ``zcspec verify`` runs too):
here pytest runs each, a match as a plain test and a deviation as a strict xfail with its recorded reason.
"""
from __future__ import annotations

import pytest

from tests.helpers.ge_cases import params


@pytest.mark.parametrize("case", params("trust_output_tensor"))
def test_ge_case(case):
    """One case of GE's test file, run as the catalogue declares it."""
    case.run()
