"""Fixtures of the GE tests that are not catalogue cases (tests/ge/test_level2_continuous.py, ...).

The graph builder and GE's reuse checks live in the package (zcspec.checks.cases.ge.graph), where the
catalogue of GE's ported unit tests uses them; these fixtures hand them to plain tests.
"""
from __future__ import annotations

import pytest

from zcspec.checks.cases.ge.graph import GeGraph
from zcspec.checks.cases.ge.graph import disjoint as _disjoint
from zcspec.checks.cases.ge.graph import reuses as _reuses


@pytest.fixture
def ge_graph():
    """``ge_graph(name)`` -> an empty :class:`GeGraph`."""
    return GeGraph


@pytest.fixture
def reuses():
    """GE's ``CheckReuse`` (zcspec.checks.cases.ge.graph.reuses)."""
    return _reuses


@pytest.fixture
def disjoint():
    """GE's ``CheckNotReuse`` (zcspec.checks.cases.ge.graph.disjoint)."""
    return _disjoint
