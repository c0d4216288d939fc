"""Which blocks level 2 refuses interval reuse for being read on another stream (GE's ``diff_stream_life_time_``).

GE's ``CanIntervalLifeReuse`` (block_mem_assigner.cc) refuses a block whose last member has
``diff_stream_life_time_``; ``SetReleaseBlockLifeEnd`` sets it only when every release of that member came from
one stream other than the block's and its life there has no end (``kMaxLifeTime``). A member also read on its
own stream, or known to be done before a later node of its own stream, keeps interval reuse
(``unit_facts.Facts.read_elsewhere_only``, ``Unit.remote``, ``ge_level2._remote``).
"""
from __future__ import annotations

import pytest

from zcspec.checks.cases.ge.mem_assigner_continuous import graph_continuous_input_memory_reuse_multi_ref_diff_stream
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.memory import units
from zcspec.impl.compiler.memory.lifetimes import lifetimes
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.observe import observe_plan
from zcspec.spec.check import check

N = 100


def _graph(readers: str):
    """a (stream 0) read as ``readers`` says: "own+other" by b (stream 0) and c (stream 1); "other" by c
    alone; "other+back" by c, whose output d reads on stream 0 (so d is known to run after c). e, on stream 0
    after a, knows nothing of stream 1."""
    b = GraphBuilder(f"read_{readers}")
    x = b.input("x", (1, N))
    a = b.op("Relu", [x], name="a")
    outs = [b.op("Neg", [a], name="c", stream=1)]
    if readers == "own+other":
        outs.append(b.op("Abs", [a], name="b"))
    if readers == "other+back":
        outs = [b.op("Exp", [outs[0]], name="d")]
    outs.append(b.op("Sigmoid", [x], name="e"))
    b.output(*outs)
    return b.build()


@pytest.mark.parametrize("readers, remote", [("own+other", False), ("other", True), ("other+back", False)])
def test_only_a_block_read_on_one_other_stream_with_no_way_back_is_remote(readers, remote):
    g = _graph(readers)
    built = units.build_units(g, lifetimes(g), PlanOptions())
    (a,) = [u for u in built.units if u.id == "a:0"]
    assert a.remote is remote
    report = check(observe_plan(g, plan_memory(g)))
    assert report.violations == (), [str(v) for v in report.violations]


def test_one_stream_is_never_remote():
    b = GraphBuilder("one_stream")
    x = b.input("x", (1, N))
    b.output(b.op("Neg", [b.op("Relu", [x], name="a")], name="c"))
    g = b.build()
    assert not any(u.remote for u in units.build_units(g, lifetimes(g), PlanOptions()).units)


def test_a_block_read_on_its_own_stream_too_keeps_interval_reuse():
    """GE's graph_continuous_input_memory_reuse_multi_ref_diff_stream: a:0's separate-clean block is read by c
    (its stream) and g (the other): i:0 nests in it by interval reuse and the plan is GE's 20480."""
    graph_continuous_input_memory_reuse_multi_ref_diff_stream()
