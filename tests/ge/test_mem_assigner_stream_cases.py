"""GE's ``tests/ge/ut/ge/graph/build/mem_assigner_unittest.cc`` (UtestMemoryAssignerTest), ported: several streams.

The cases are in zcspec.checks.cases.ge.mem_assigner_stream (the catalogue, which ``zcspec verify`` runs too):
here pytest runs each, a match as a plain test and a deviation as a strict xfail with its recorded reason.
"""
from __future__ import annotations

import pytest

from tests.helpers.ge_cases import params


@pytest.mark.parametrize("case", params("mem_assigner_stream"))
def test_ge_case(case):
    """One case of GE's test file, run as the catalogue declares it."""
    case.run()
