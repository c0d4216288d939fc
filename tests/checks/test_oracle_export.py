"""What makes the oracle unavailable, and what does not (checks/oracle.py ``oracle_outputs``).

Only the reference evaluator's own gaps (an op or attribute form it lacks) and the graphs the export
declines (state, a Merge with no branch chosen) leave a run's outputs unjudged. A graph the export
cannot write (a weight whose bytes do not hold its tensor) is broken, and is an error of the run: a
mutant that read a splat weight's one element as two made every graph with a splat weight "no oracle",
and verify passed with 43 more outputs unjudged (impl/compiler/ir.py:119 in a mutation run).
"""
from __future__ import annotations

import attrs
import numpy as np
import pytest

from zcspec.checks.errors import OracleUnavailable
from zcspec.checks.oracle import oracle_outputs
from zcspec.impl.compiler.builder import GraphBuilder


def _graph():
    b = GraphBuilder("g")
    x = b.input("x", (2,))
    w = b.weight("w", np.array([1.5, -2.0], np.float32))
    b.output(*b.op("Add", [x, w], name="add", outputs=[((2,), "float32")]))
    return b.build()


def test_the_oracle_evaluates_a_whole_graph():
    got = oracle_outputs(_graph(), {"x": np.array([1.0, 1.0], np.float32)})
    np.testing.assert_array_equal(next(iter(got.values())), [2.5, -1.0])


def test_a_weight_too_short_for_its_tensor_is_an_error_not_no_oracle():
    graph = _graph()
    short = attrs.evolve(graph.weights[0], data=graph.weights[0].data[:4])
    broken = attrs.evolve(graph, weights=(short,))
    with pytest.raises(ValueError, match="4 bytes cannot hold") as raised:
        oracle_outputs(broken, {"x": np.array([1.0, 1.0], np.float32)})
    assert not isinstance(raised.value, OracleUnavailable)


def test_an_op_the_evaluator_lacks_is_no_oracle(monkeypatch):
    import zcspec.checks.oracle as oracle

    class Lacking:
        def __init__(self, model):
            raise NotImplementedError("no kernel for Add")

    monkeypatch.setattr(oracle, "ReferenceEvaluator", Lacking)
    with pytest.raises(OracleUnavailable, match="cannot evaluate graph 'g': NotImplementedError"):
        oracle_outputs(_graph(), {"x": np.array([1.0, 1.0], np.float32)})
