"""pytest's view of the GE case catalogue (zcspec.checks.cases.ge): one ``pytest.param`` per case.

A match is a plain test; a deviation is a strict xfail with the record's reason and exception, so it
fails (XPASS) the day zcspec agrees with GE and the record (docs/ge-deviations.md) must change.
"""
from __future__ import annotations

import pytest

from zcspec.checks.cases.ge.all import cases_of


def params(module: str) -> list:
    """The cases of case module ``module``, each with its id (the function, or its parameter set's id)."""
    return [pytest.param(case, id=case.param or case.function,
                         marks=[pytest.mark.xfail(strict=True, raises=case.raises, reason=case.reason)]
                         if case.status == "deviation" else [])
            for case in cases_of(module)]
