"""GE's ``tests/ge/ut/ge/graph/load/davinci_model_unittest.cc`` (UtestDavinciModel), ported: the tests
on zero copy, I/O address refresh, copy-only I/O, caller memory and I/O size checks.

The cases are in zcspec.checks.cases.ge.davinci_model (the catalogue, which ``zcspec verify`` runs too):
here pytest runs each, a match as a plain test and a deviation as a strict xfail with its recorded reason.
"""
from __future__ import annotations

import pytest

from tests.helpers.ge_cases import params


@pytest.mark.parametrize("case", params("davinci_model"))
def test_ge_case(case):
    """One case of GE's test file, run as the catalogue declares it."""
    case.run()
