"""GE's ``tests/ge/st/testcase/test_fm_memory_refresh.cc`` (FmMemoryRefreshTest), ported: the tests on a
refreshable feature-map base, caller work and weight memory, zero copy and forced copies of model I/O, and
the I/O checks of an execution.

The cases are in zcspec.checks.cases.ge.fm_memory_refresh (the catalogue, which ``zcspec verify`` runs too):
here pytest runs each, a match as a plain test and a deviation as a strict xfail with its recorded reason.
"""
from __future__ import annotations

import pytest

from tests.helpers.ge_cases import params


@pytest.mark.parametrize("case", params("fm_memory_refresh"))
def test_ge_case(case):
    """One case of GE's test file, run as the catalogue declares it."""
    case.run()
