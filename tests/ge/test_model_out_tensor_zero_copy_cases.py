"""GE's ``tests/ge/ut/ge/runtime/fast_v2/lowering/model_out_tensor_zero_copy_unittest.cc``
(ModelOutTensorZeroCopyUT), ported.

The cases are in zcspec.checks.cases.ge.model_out_tensor_zero_copy (the catalogue, which ``zcspec verify`` runs too):
here pytest runs each, a match as a plain test and a deviation as a strict xfail with its recorded reason.
"""
from __future__ import annotations

import pytest

from tests.helpers.ge_cases import params


@pytest.mark.parametrize("case", params("model_out_tensor_zero_copy"))
def test_ge_case(case):
    """One case of GE's test file, run as the catalogue declares it."""
    case.run()
