"""PASS-VIEW-NOT-OUTPUT: a Split or Slice made a view has no output the NetOutput reads, even through views.

The mutant this answers: the outer-axis pass's walk from a piece to the graph outputs stopped following views
(impl/compiler/passes/outer_axis_views.py ``_reaches_output``, ``if o not in seen`` flipped to ``if o in seen``), so
a Split whose piece is a model output through one Reshape or more became a view. Nothing else failed: the conflict
optimizer copied the piece into the user's output buffer (GE's user-output x NoPadding-continuous-output rule),
the outputs stayed right, only the tasks (the Split's kernel replaced by a copy) and the plan (the whole input
live until that copy) changed. GE's fusion engine never makes such a Split no-task (split_n_optimizer.cc
``OutputCheck``: a NetOutput consumer refuses it, with the static Reshapes already removed)."""
from __future__ import annotations

import pytest

from zcspec.checks.faults.variant import preload, swap
from zcspec.checks.scenario import Scenario, observe
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.check import check
from zcspec.spec.examples.build import model_file, node
from zcspec.spec.registry import get

CLAIM = "PASS-VIEW-NOT-OUTPUT"
PASS = "zcspec.impl.compiler.passes.outer_axis_views"


def _split_then_views(views: int):
    """x -> Relu -> Split along axis 0 into two (2, 8) pieces; piece 0 -> ``views`` Reshapes -> output,
    piece 1 -> Relu -> output."""
    b = GraphBuilder("piece_through_views")
    y = b.op("Relu", [b.input("x", (4, 8))])
    a, c = b.op("Split", [y], outputs=[((2, 8), "float32"), ((2, 8), "float32")], axis=0, split=(2, 2))
    for i in range(views):
        a = b.op("Reshape", [a], shape=(16,) if i % 2 == 0 else (2, 8))
    b.output(a, b.op("Relu", [c]))
    return b.build()


def _direct_outputs_only(real):
    """The mutant's walk: it never enters a view, so only a piece that is itself a graph output counts."""
    return lambda graph, n: any(t in set(graph.outputs) for t in n.outputs)


def _observed(views: int, kind: str = "model_file", runtime: dict | None = None):
    return observe(Scenario(kind, _split_then_views(views), CompileOptions(), runtime or {}))


@pytest.mark.parametrize("chain, why", [
    ((node("r", "Reshape", "split", view=True), node("out", "NetOutput", "r")), "split -> r -> out"),
    ((node("out", "NetOutput", "split"),), "split -> out"),
    ((node("r", "Reshape", "split", view=True), node("c", "MemcpyAddrAsync", "r"), node("out", "NetOutput", "c")),
     "split -> r -> c -> out"),
    ((node("k", "Relu", "split"), node("out", "NetOutput", "k")), None),           # a task reads the piece
    ((node("p", "PhonyConcat", "x", "split", view=True), node("out", "NetOutput", "p")), None),  # not its input 0
])
def test_a_view_piece_may_not_reach_the_netoutput_through_views_or_copies(chain, why):
    split = node("split", "Split", "x", view=True)
    found = get(CLAIM).violations(model_file(nodes=(node("x", "Data"), split) + chain))
    assert (found == ()) if why is None else (len(found) == 1 and why in found[0].message), found


def test_a_split_with_a_task_is_not_judged():
    mf = model_file(nodes=(node("x", "Data"), node("split", "Split", "x"), node("out", "NetOutput", "split")))
    assert get(CLAIM).violations(mf) == () and not get(CLAIM).exercised(mf)


@pytest.mark.parametrize("views", [1, 2])
def test_the_outer_axis_pass_keeps_the_task_of_a_piece_that_is_an_output_through_views(views):
    (mf,) = _observed(views)
    assert [n.view for n in mf.nodes if n.type == "Split"] == [False]
    assert check(mf).ok, str(check(mf))


@pytest.mark.parametrize("views", [1, 2])
def test_a_walk_that_skips_views_fails_verify_through_this_claim(views):
    preload()
    with swap(PASS, "_reaches_output", _direct_outputs_only):
        (mf,) = _observed(views)
    assert [n.view for n in mf.nodes if n.type == "Split"] == [True]
    report = check(mf)
    assert report.violated() == (CLAIM,), str(report)
    (v,) = get(CLAIM).violations(mf)
    assert v.culprit == "node 'split_2'" and v.values["path"][-1] == "NetOutput"


def test_the_mutant_runs_right_so_only_this_claim_can_tell():
    """Under the mutant both runtimes still give the oracle's outputs and every execution claim holds: the
    conflict optimizer's copy, not the Split's kernel, writes the piece into the user's output buffer."""
    preload()
    with swap(PASS, "_reaches_output", _direct_outputs_only):
        runs = _observed(2, "execution", {"runtime": "differential", "zero_copy": True})
        (mf,) = _observed(2)
    assert runs and all(check(o).ok for o in runs), [str(check(o)) for o in runs]
    kinds = {t.node: t.kind for t in mf.tasks}
    assert "split_2" not in kinds and any(k.startswith("identity_0_NetOutput") for k in kinds)
