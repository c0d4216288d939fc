"""The ``ge_graph`` fixture of the GE tests that are not catalogue cases (tests/ge/test_level2_continuous.py...).

The graph builder lives in the package (zcspec.checks.cases.ge.graph), where the catalogue of GE's
ported unit tests uses it; the fixture hands it to plain tests.
"""
from __future__ import annotations

import pytest

from zcspec.checks.cases.ge.graph import GeGraph


@pytest.fixture
def ge_graph():
    """``ge_graph(name)`` -> an empty :class:`GeGraph`."""
    return GeGraph
