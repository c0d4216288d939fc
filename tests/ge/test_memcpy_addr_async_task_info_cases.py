"""GE's ``tests/ge/ut/ge/graph/load/memcpy_addr_async_task_info_unittest.cc`` (UtestMemcpyAddrAsyncTaskInfo), ported.

The cases are in zcspec.checks.cases.ge.memcpy_addr_async_task_info (the catalogue, which ``zcspec verify`` runs too):
here pytest runs each, a match as a plain test and a deviation as a strict xfail with its recorded reason.
"""
from __future__ import annotations

import pytest

from tests.helpers.ge_cases import params


@pytest.mark.parametrize("case", params("memcpy_addr_async_task_info"))
def test_ge_case(case):
    """One case of GE's test file, run as the catalogue declares it."""
    case.run()
