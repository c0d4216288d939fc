"""PASS-LAYOUT-CONFLICT is two-sided: the conflict copies sit exactly where GE's checker table puts them.

The spec rebuilds the graph the optimizer saw from the model file (spec/invariants/_conflicts.py) and types its
anchors from its own tables; a copy the compiler adds where no pair conflicts, or leaves out where one does,
is a violation. Planted here: the compiler's IsSameOrPartialSame always false (copies before ``ar2``'s inputs,
whose sources are the fused ``ar``'s outputs in order), and its table without the graph output x continuous
output row (no copy between a fused collective and the NetOutput).
"""
from __future__ import annotations

import importlib
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zcspec.checks.strategies.graphs import graphs
from zcspec.checks.strategies.scenarios import GROUP_FAMILIES
from zcspec.checks.zoo import load
from zcspec.impl.compiler import anchor_types
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.errors import CompilerError
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.observe import observe_model_file
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.check import check
from zcspec.spec.errors import ObservationConsistencyError
from zcspec.spec.examples.build import model_file
from zcspec.spec.invariants._conflicts import same_or_partial_same
from zcspec.spec.observables.model_file import NodeInfo

# The pass's module (the package exports a function of the same name).
conflict_pass = importlib.import_module("zcspec.impl.compiler.passes.mem_layout_conflict")
CLAIM = "PASS-LAYOUT-CONFLICT"
SOCS = ("ascend910b", "ascend310p", "legacy", "nozc")


def _report(graph, soc="ascend910b"):
    options = CompileOptions(soc=soc)
    stages = compile_stages(graph, options)
    return check(observe_model_file(encode(stages.model), stages.graph, options))


def _violations(report):
    return [v for v in report.violations if v.invariant_id == CLAIM]


@pytest.mark.parametrize("name", ["builtin:continuous_out_in", "builtin:fused_collective", "builtin:fused_broadcast"])
@pytest.mark.parametrize("soc", SOCS)
def test_the_zoos_conflict_copies_are_where_the_table_puts_them(name, soc):
    report = _report(load(name), soc)
    assert CLAIM in report.exercised and _violations(report) == []


def test_a_copy_where_no_pair_conflicts_is_caught(monkeypatch):
    monkeypatch.setattr(anchor_types, "same_or_partial_same", lambda outs, peers: False)
    found = _violations(_report(load("builtin:continuous_out_in")))
    assert {v.values["reason"] for v in found} == {"extra copy"}
    assert sorted(v.message.split("(read by ")[1].split(")")[0] for v in found) == ["ar2 input 0", "ar2 input 1"]


def test_a_missing_copy_is_caught(monkeypatch):
    rules = tuple(r for r in anchor_types.RULES if r != (anchor_types.USER_OUT, anchor_types.CONT_OUT,
                                                         anchor_types.USER_OUT))
    monkeypatch.setattr(conflict_pass, "RULES", rules)
    found = _violations(_report(load("builtin:fused_collective")))
    assert [v.culprit for v in found] == ["node 'NetOutput' input 1", "node 'NetOutput' input 2"]
    assert all(v.values["reason"] == "missing copy" and "continuous output" in v.message for v in found)


def _second_round():
    """A fused collective's outputs feed one continuous input each of two collectives: GE copies before the
    first's... no, before the second's input 0 (both reach continuous inputs), and then the second's inputs are
    no longer the fused outputs in order, so its input 1 is copied too (GE solves one symbol after another on
    the graph as the earlier ones left it)."""
    b = GraphBuilder("second_round")
    x = b.input("x", (4,))
    a, c = b.op("Relu", [x]), b.op("Neg", [x])
    f0, f1 = b.op("HcomAllReduce", [a, c], outputs=[((4,), "float32")] * 2, reduction="sum", continuous_output=True)
    first = b.op("HcomAllReduce", [b.op("Abs", [x]), f0], outputs=[((4,), "float32")] * 2, reduction="sum")
    second = b.op("HcomAllReduce", [f0, f1], outputs=[((4,), "float32")] * 2, reduction="sum")
    b.output(*first, *second)
    return b.build()


def _inplace_after_copy():
    """A view of a graph input written in place, the input also read by a collective: the copy after the Data
    makes the in-place write legal (it is over the copy now), which joins the graph output to the collective's
    input: a copy before the NetOutput answers that."""
    b = GraphBuilder("inplace_after_copy")
    x, y = b.input("x", (4,)), b.input("y", (4,))
    both = b.op("HcomAllReduce", [x, b.op("HcomBroadcast", [x], reduction="sum")],
                outputs=[((4,), "float32")] * 2, reduction="sum")
    b.output(y, *both, b.op("Relu", [b.op("Identity", [x])], _reuse_input=True))
    return b.build()


@pytest.mark.parametrize("build", [_second_round, _inplace_after_copy])
def test_copies_that_earlier_copies_made_necessary_are_wanted(build):
    report = _report(build())
    assert CLAIM in report.exercised and _violations(report) == []


@settings(max_examples=60, deadline=None)
@given(st.one_of(graphs(max_nodes=10), graphs(max_nodes=10, families=GROUP_FAMILIES)), st.sampled_from(SOCS))
def test_random_graphs_get_their_copies_where_the_table_puts_them(graph, soc):
    try:
        report = _report(graph, soc)
    except CompilerError:
        return
    assert _violations(report) == []


def test_node_tensors_must_be_consistent():
    with pytest.raises(ObservationConsistencyError, match="written by both"):
        model_file(nodes=(NodeInfo("a", "Data", out_tensors=("t",)), NodeInfo("b", "Data", out_tensors=("t",))))
    with pytest.raises(ObservationConsistencyError, match="no node writes"):
        model_file(nodes=(NodeInfo("a", "Data", out_tensors=("t",)), NodeInfo("b", "Relu", ("a",), in_tensors=("u",))))


def test_the_spec_reads_is_same_or_partial_same_as_the_compiler_does():
    """Two transcriptions of GE's IsSameOrPartialSame (the spec's own and the compiler's), equal on every pair
    of short lists, a tensor read twice among the sources included."""
    pairs = [(list(outs), list(peers)) for lo in range(4) for outs in itertools.permutations("abcd", lo)
             for lp in range(5) for peers in itertools.product("abcd", repeat=lp)]
    assert [same_or_partial_same(o, p) for o, p in pairs] == [anchor_types.same_or_partial_same(o, p) for o, p in pairs]
    assert same_or_partial_same(["a", "b"], ["a", "b", "c"]) and not same_or_partial_same(["a", "b"], ["b", "a"])
