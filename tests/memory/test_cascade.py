"""Cascaded NoPadding concats (GE's graph_mem_assigner.cc ReAssignContinuousMemory): a PhonyConcat whose output is
an input of another PhonyConcat has its pieces laid out in place inside the outer concat's block, one unit; the
conflict pass inserts no copy there (GE's nopadding_continuous_input_and_nopadding_continuous_input.cc copies only
an output feeding several NoPadding concats); both runtimes run it and the oracle agrees."""
from __future__ import annotations

import attrs
import pytest

from tests.helpers.plan_check import check_plan
from zcspec.checks.scenario import Scenario, evaluate
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.memory import units
from zcspec.impl.compiler.memory.errors import PlanError
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.observe import observe_plan
from zcspec.impl.compiler.passes.mem_layout_conflict import mem_layout_conflict
from zcspec.spec.check import check

ROW = 2 * 8 * 4   # a (2, 8) float32 piece: 64 bytes


def _cascade(depth: int = 2, inner_at: int = 1):
    """x -> a, b, c -> h = PhonyConcat(a, b, c); g, i from x; j = PhonyConcat(g, h, i) with h at input
    ``inner_at``; depth 3 wraps j once more: k = PhonyConcat(j, m). The result feeds a Relu."""
    b = GraphBuilder(f"cascade{depth}")
    x = b.input("x", (2, 8))
    pieces = [b.op(op, [x], name=n) for op, n in (("Relu", "a"), ("Abs", "b"), ("Neg", "c"))]
    h = b.op("PhonyConcat", pieces, name="h", shape=(6, 8), axis=0)
    outer = [b.op("Exp", [x], name="g"), b.op("Sigmoid", [x], name="i")]
    outer.insert(inner_at, h)
    top = b.op("PhonyConcat", outer, name="j", shape=(10, 8), axis=0)
    rows = 10
    if depth == 3:
        top = b.op("PhonyConcat", [top, b.op("Tanh", [x], name="m")], name="k", shape=(12, 8), axis=0)
        rows = 12
    b.output(b.op("Relu", [top], name="out", shape=(rows, 8)))
    return b.build()


def _offsets(plan, names):
    base = plan.tensor(names[0]).offset
    return tuple(plan.tensor(t).offset - base for t in names)


@pytest.mark.parametrize("strategy", ["ge", "compact"])
def test_the_inner_concat_sits_in_place_inside_the_outer_block(strategy):
    g = _cascade()
    p = plan_memory(g, PlanOptions(strategy=strategy))
    assert _offsets(p, ("g:0", "a:0", "b:0", "c:0", "h:0", "i:0", "j:0")) == (0, ROW, 2 * ROW, 3 * ROW, ROW, 4 * ROW, 0)
    assert len({p.tensor(t).block for t in ("g:0", "a:0", "b:0", "c:0", "i:0")}) == 1
    assert check_plan(g, p) == []
    report = check(observe_plan(g, p))
    assert "MEM-CONT-INPUT" in report.exercised and report.violations == ()


def test_the_inner_concat_first_and_three_levels_nest_by_the_same_rule():
    g = _cascade(inner_at=0)
    p = plan_memory(g)
    assert _offsets(p, ("a:0", "b:0", "c:0", "g:0", "i:0", "j:0", "h:0")) == (0, ROW, 2 * ROW, 3 * ROW, 4 * ROW, 0, 0)
    g3 = _cascade(depth=3)
    p3 = plan_memory(g3)
    assert _offsets(p3, ("g:0", "a:0", "c:0", "i:0", "m:0", "k:0")) == (0, ROW, 3 * ROW, 4 * ROW, 5 * ROW, 0)
    for graph, plan in ((g, p), (g3, p3)):
        assert check(observe_plan(graph, plan)).violations == ()


def test_a_concat_output_feeding_two_concats_is_still_refused_by_the_planner_and_copied_by_the_pass():
    b = GraphBuilder("twice")
    x = b.input("x", (2, 8))
    h = b.op("PhonyConcat", [b.op("Relu", [x], name="a"), b.op("Abs", [x], name="b")], name="h", shape=(4, 8),
             axis=0)
    j1 = b.op("PhonyConcat", [b.op("Exp", [x], name="g"), h], name="j1", shape=(6, 8), axis=0)
    j2 = b.op("PhonyConcat", [h, b.op("Neg", [x], name="n")], name="j2", shape=(6, 8), axis=0)
    b.output(b.op("Relu", [j1], name="o1", shape=(6, 8)), b.op("Relu", [j2], name="o2", shape=(6, 8)))
    g = b.build()
    with pytest.raises(PlanError, match=r"two continuous-input blocks") as e:
        plan_memory(g)
    assert e.value.node == "j2"
    fixed = mem_layout_conflict(g)
    copies = [n for n in fixed.nodes if n.attr("_inserted_by") == "mem_layout_conflict"]
    assert [c.name for c in copies] == ["identity_0_j2_MemLayoutConflict_0"]   # the first reader keeps the cascade
    assert check_plan(fixed, plan_memory(fixed)) == []


def test_a_padding_group_does_not_nest():
    b = GraphBuilder("hccl")
    x = b.input("x", (2, 8))
    h = b.op("PhonyConcat", [b.op("Relu", [x], name="a"), b.op("Abs", [x], name="b")], name="h", shape=(4, 8),
             axis=0)
    r = b.op("HcomAllReduce", [b.op("Exp", [x], name="g"), h], name="ar", outputs=[((2, 8), "float32"),
                                                                                   ((4, 8), "float32")])
    b.output(*r)
    g = b.build()
    with pytest.raises(PlanError, match=r"'a:0'.*two continuous-input blocks \(nodes 'h' and 'ar'\)"):
        plan_memory(g)
    fixed = mem_layout_conflict(g)   # an HCCL input is no cascade: the pass copies h's output before it
    feed = fixed.producer[fixed.node["ar"].inputs[1]]
    assert fixed.node[feed].attr("_inserted_by") == "mem_layout_conflict"
    assert check_plan(fixed, plan_memory(fixed)) == []


def test_the_conflict_pass_inserts_no_copy_for_a_cascade():
    g = _cascade()
    assert mem_layout_conflict(g) is g


def _inner_after_outer(real):
    """A planted planner bug: the nested concat's pieces go after the outer group's, not in h's place."""
    def group_unit(facts, name, roots, options, inner):
        u = real(facts, name, roots, options, inner)
        own = {facts.lt.root[t] for t in facts.graph.node[name].inputs}
        outer = [(r, off) for r, off in u.roots if r in own]
        nested = [r for r, _ in u.roots if r not in own]
        if not nested:
            return u
        end = u.size
        moved = tuple(outer) + tuple((r, end + k * ROW) for k, r in enumerate(nested))
        return attrs.evolve(u, roots=moved, size=end + len(nested) * ROW)
    return group_unit


def test_a_planted_layout_bug_fails_a_claim(monkeypatch):
    g = _cascade()
    monkeypatch.setattr(units, "_group_unit", _inner_after_outer(units._group_unit))
    report = check(observe_plan(g, plan_memory(g)))
    assert any(v.invariant_id == "MEM-CONT-INPUT" for v in report.violations), report.violations


RUNS = {"v1": {"runtime": "v1", "calls": 2}, "v2": {"runtime": "v2"}}


def _executed(runtime: str):
    return evaluate(Scenario("execution", _cascade(), runtime={"runs": [RUNS[runtime]]}))


@pytest.mark.parametrize("runtime", sorted(RUNS))
def test_both_runtimes_run_the_cascade_in_place_and_the_oracle_agrees(runtime):
    """PhonyConcat runs no task: the outer concat's output is right only if every piece, the inner concat's
    too, was written in place by its producer."""
    reports = _executed(runtime)
    assert any("EXEC-ORACLE" in r.exercised for r in reports)
    assert [str(v) for r in reports for v in r.violations] == []


@pytest.mark.parametrize("runtime", sorted(RUNS))
def test_the_oracle_refuses_the_planted_layout_bug_at_run_time(monkeypatch, runtime):
    monkeypatch.setattr(units, "_group_unit", _inner_after_outer(units._group_unit))
    assert "EXEC-ORACLE" in {v.invariant_id for r in _executed(runtime) for v in r.violations}
