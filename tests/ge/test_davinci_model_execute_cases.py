"""GE's ``tests/ge/st/testcase/test_davinci_model_execute.cc`` (DavinciModelTest), ported: the two tests of
models sharing their session's feature-map memory (the static memory policy).

The cases are in zcspec.checks.cases.ge.davinci_model_execute (the catalogue, which ``zcspec verify`` runs
too): here pytest runs each, a match as a plain test and a deviation as a strict xfail with its recorded
reason.
"""
from __future__ import annotations

import pytest

from tests.helpers.ge_cases import params


@pytest.mark.parametrize("case", params("davinci_model_execute"))
def test_ge_case(case):
    """One case of GE's test file, run as the catalogue declares it."""
    case.run()
