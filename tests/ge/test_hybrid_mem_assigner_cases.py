"""GE's ``tests/ge/ut/ge/graph/build/hybrid_mem_assigner_unittest.cc`` (UtestHybridMemAssigner), ported.

The cases are in zcspec.checks.cases.ge.hybrid_mem_assigner (the catalogue, which ``zcspec verify`` runs too):
here pytest runs each, a match as a plain test and a deviation as a strict xfail with its recorded reason.
"""
from __future__ import annotations

import pytest

from tests.helpers.ge_cases import params


@pytest.mark.parametrize("case", params("hybrid_mem_assigner"))
def test_ge_case(case):
    """One case of GE's test file, run as the catalogue declares it."""
    case.run()


def test_ProcessInplace_keeps_a_graph_output_out_of_a_continuous_input_symbol(ge_graph):
    """``mem_inplace.cc`` ``RemoveSymbolConflicts`` asks the conflict checker about the merged symbol (no GE
    case isolates this pair): b:0 is an input of a two-input HcomAllReduce (continuous input) and a (in-place
    ability (0, 0), b:0's last reader) writes a graph output. Merging them would put the user's output
    buffer into the collective's continuous block (user output x continuous input, the NetOutput not reading
    the collective's own output), so a keeps its own memory and no conflict copy is needed."""
    g = ge_graph("output_into_continuous_input")
    g.node("x", op="Data", outs=(1024,)).node("b", op="Neg", outs=(1024,)).node("c", op="Abs", outs=(1024,))
    g.node("ar", op="HcomAllReduce", outs=(1024, 1024)).node("a", op="Relu", outs=(1024,), _inplace_ability=(0, 0))
    g.node("out", op="NetOutput", outs=())
    g.edge("x", 0, "b", 0).edge("x", 0, "c", 0).edge("b", 0, "a", 0).edge("b", 0, "ar", 0).edge("c", 0, "ar", 1)
    g.edge("a", 0, "out", 0).edge("ar", 0, "out", 1).edge("ar", 1, "out", 2)
    assert g.order().index("ar") < g.order().index("a")
    plan = g.plan()
    assert plan.tensor("a:0").alias_of is None and plan.tensor("a:0").zero_copy
