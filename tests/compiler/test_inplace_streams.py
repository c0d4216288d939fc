"""An in-place output may overwrite its input only when every earlier reader is known to have run,
and never a piece of a no-padding concat (the concat's output is those bytes too).

Found by verify's random campaign (EXEC-NO-RACE): Relu R1 on stream 1, R6 on stream 0 reads R1's
output, Identity I7 views it and Relu R8 on stream 1 writes its output in place over it. R8 is
the symbol's last reader in the execution order, but nothing orders R6 (stream 0) before R8
(stream 1): R8 could overwrite the bytes R6 is still reading. The alias analysis now gives R8
its own memory there, and keeps the in-place output where the reader is on R8's stream.

The view I7 is on R1's stream here. On stream 0 (the builder's default), after R6, the edge R1 -> I7
lands on it from another stream, so it holds stream 0 there (``stream_order.takes_place``, GE's receive
event in front of it) and R8, reading it, waits for R6 (``TaskDef.after``): the in-place output is safe.
"""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.checks.execution.differential import observe_differential
from zcspec.impl.compiler.aliases import aliases
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.spec.check import check


def _graph(reader_stream: int, view_stream: int = 1):
    b = GraphBuilder("inplace_after_a_reader_on_another_stream")
    x = b.input("x", (2, 8))
    r1 = b.op("Relu", [x], name="R1", stream=1)
    r6 = b.op("Neg", [r1], name="R6", stream=reader_stream)
    i7 = b.op("Identity", [r1], name="I7", stream=view_stream)
    r8 = b.op("Relu", [i7], name="R8", stream=1, _reuse_input=True)
    b.output(r6, r8)
    return b.build()


def test_no_in_place_over_a_tensor_another_stream_may_still_read():
    g = _graph(reader_stream=0)
    assert aliases(g).root["R8:0"] == "R8:0"


def test_in_place_stays_when_the_reader_runs_on_the_same_stream():
    g = _graph(reader_stream=1)
    roots = aliases(g).root
    assert roots["R8:0"] == roots["R1:0"]


def test_a_view_holding_the_readers_stream_after_it_orders_the_reader_first():
    g = _graph(reader_stream=0, view_stream=0)
    roots = aliases(g).root
    assert roots["R8:0"] == roots["R1:0"]
    model = build_model(g)
    r6, r8 = (next(t for t in model.tasks.tasks if t.node == n) for n in ("R6", "R8"))
    assert r6.index in r8.after


@pytest.mark.parametrize("view_stream", [0, 1])
def test_the_graph_runs_race_free_and_right_on_both_runtimes(view_stream):
    g = _graph(reader_stream=0, view_stream=view_stream)
    obs = observe_differential(g, build_model(g), {"runtime": "differential", "seed": 0})
    assert obs and not [v for o in obs for v in check(o).violations]


def _concat_piece_graph():
    b = GraphBuilder("inplace_over_a_concat_piece")
    x = b.input("x", (2, 8))
    piece = b.op("Relu", [x], name="P")
    k = b.op("PhonyConcat", [b.op("Neg", [x], name="Q"), piece], name="K", shape=(4, 8), axis=0)
    n = b.op("Neg", [b.op("Identity", [piece], name="I")], name="N", _reuse_input=True)
    b.output(k, n)
    return b.build()


def test_no_in_place_over_a_piece_of_a_nopadding_concat():
    """Found by plain explore (EXEC-ORACLE 0.25 on the concat's output): the piece is part of the concat's
    output, which outlives the piece's own last reader."""
    g = _concat_piece_graph()
    assert aliases(g).root["N:0"] == "N:0"
    obs = observe_differential(g, build_model(g), {"runtime": "differential", "seed": 0})
    assert obs and not [v for o in obs for v in check(o).violations]
