"""GE's ``tests/ge/ut/ge/graph/build/block_mem_assigner_unittest.cc`` (UtestBlockMemAssigner), ported.

The cases are in zcspec.checks.cases.ge.block_mem_assigner (the catalogue, which ``zcspec verify`` runs too):
here pytest runs each, a match as a plain test and a deviation as a strict xfail with its recorded reason.
"""
from __future__ import annotations

import pytest

from tests.helpers.ge_cases import params


@pytest.mark.parametrize("case", params("block_mem_assigner"))
def test_ge_case(case):
    """One case of GE's test file, run as the catalogue declares it."""
    case.run()
