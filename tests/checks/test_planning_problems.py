"""planning_problems(): draw with zcspec, plan with a toy planner, check with zcspec.

A correct first-fit planner passes every claim on every drawn problem; the same planner with a
planted bug (touching lifetimes treated as disjoint) is caught, and Hypothesis shrinks the problem
that shows it to at most three tensors.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import find, given, settings
from hypothesis.errors import InvalidArgument

import zcspec
from zcspec.checks.errors import PlanFormatError
from zcspec.checks.strategies.planning_problems import PlanningProblem, ProblemTensor, planning_problems
from zcspec.spec.check import check
from zcspec.spec.observables import plan_from_contract

ALIGN = 16


def toy_planner(problem: PlanningProblem, *, touching_is_disjoint: bool = False):
    """First fit over the family lifetimes [producer, last consumer] (graph inputs from step 0, graph
    outputs to the last step); a view or in-place result takes its root's offset. With
    ``touching_is_disjoint`` it compares the inclusive lifetimes as if half-open: a tensor's bytes go
    to the next tensor produced at its last use step (the planted bug)."""
    end = len(problem.steps) - 1
    life, root, span = {}, {}, {}
    for t in problem.tensors:  # a target comes before the tensors sharing its bytes
        first = 0 if t.graph_input else t.producer
        life[t.name] = (first, end if t.graph_output else max(t.consumers, default=first))
        root[t.name] = root[t.shares] if t.shares else t.name
        lo, hi = span.get(root[t.name], life[t.name])
        span[root[t.name]] = (min(lo, life[t.name][0]), max(hi, life[t.name][1]))
    placed, offsets = [], {}  # placed: (offset, end, first, last)
    for r, (first, last) in span.items():
        size = problem.tensor[r].size
        if touching_is_disjoint:
            busy = sorted(p[:2] for p in placed if p[2] < last and first < p[3])
        else:
            busy = sorted(p[:2] for p in placed if p[2] <= last and first <= p[3])
        offset = 0
        for lo, hi in busy:
            if offset + size <= lo:
                break
            offset = max(offset, -(-hi // ALIGN) * ALIGN)
        placed.append((offset, offset + size, first, last))
        offsets[r] = offset
    return {t.name: offsets[root[t.name]] for t in problem.tensors}, life


def judge(problem: PlanningProblem, **planner):
    offsets, lifetimes = toy_planner(problem, **planner)
    return check(plan_from_contract(problem.plan_json(offsets, lifetimes=lifetimes, alignment=ALIGN)))


# -- arguments --------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, culprit", [
    ({"min_steps": 0}, "min_steps=0"),
    ({"min_steps": 3, "max_steps": 2}, "max_steps=2"),
    ({"min_steps": 4, "max_tensors": 3}, "max_tensors=3"),
    ({"max_size": 0}, "max_size=0"),
    ({"streams": 0}, "streams=0"),
    ({"max_steps": 2.5}, "max_steps=2.5"),
    ({"max_size": True}, "max_size=True"),
    ({"aliases": 1}, "aliases=1"),
])
def test_bad_arguments_are_refused_at_once(kwargs, culprit):
    with pytest.raises(InvalidArgument, match=culprit.replace(".", r"\.")):
        planning_problems(**kwargs)


# -- the problems -----------------------------------------------------------------------------------

def assert_well_formed(p: PlanningProblem, *, max_steps=8, max_tensors=10, max_size=4096, streams=1):
    n = len(p.steps)
    assert 1 <= n <= max_steps and len(p.tensors) <= max_tensors and len(set(p.steps)) == n
    assert len(p.tensor) == len(p.tensors)
    seen: dict[str, int] = {}
    for i, t in enumerate(p.tensors):
        assert 1 <= t.size <= max_size and t.graph_input == (t.producer is None)
        assert t.producer is None or 0 <= t.producer < n
        start = -1 if t.producer is None else t.producer
        assert list(t.consumers) == sorted(set(t.consumers)) and all(start < s < n for s in t.consumers)
        assert t.alias_of is None or t.in_place_of is None
        if t.shares:
            target = p.tensor[t.shares]
            assert t.shares in seen and target.size == t.size and t.producer in target.consumers
        if t.in_place_of:
            assert_overwritable(p, t, seen)
        seen[t.name] = i
    assert len(p.streams) in (0, n) and all(0 <= s < streams for s in p.streams)
    assert_steps_ordered(p)


def assert_overwritable(p: PlanningProblem, t: ProblemTensor, seen: dict[str, int]):
    """The old bytes of an in-place target's family are neither the caller's nor read after the step."""
    def root(name):
        while p.tensor[name].shares:
            name = p.tensor[name].shares
        return name
    old = [m for m in p.tensors if m.name in seen and root(m.name) == root(t.in_place_of)]
    assert not any(m.graph_input or m.graph_output for m in old)
    assert all(s <= t.producer for m in old for s in m.consumers)


def assert_steps_ordered(p: PlanningProblem):
    """On several streams each step waits for the one before it: same stream, data or control edge."""
    assert all(before < after for before, after in p.control)
    for k in range(1, len(p.streams)):
        fed = any(k in t.consumers and t.producer == k - 1 for t in p.tensors)
        assert p.streams[k] == p.streams[k - 1] or fed or (k - 1, k) in p.control


@settings(max_examples=60)
@given(planning_problems(streams=3))
def test_drawn_problems_are_well_formed_plain_json(problem):
    assert_well_formed(problem, streams=3)
    data = problem.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert [t["name"] for t in data["tensors"]] == [t.name for t in problem.tensors]


@settings(max_examples=30)
@given(planning_problems(min_steps=2, max_steps=3, max_tensors=4, max_size=8, aliases=False, in_place=False))
def test_bounds_and_switches_are_kept(problem):
    assert_well_formed(problem, max_steps=3, max_tensors=4, max_size=8)
    assert 2 <= len(problem.steps) and not any(t.shares for t in problem.tensors)


# -- plan_json --------------------------------------------------------------------------------------

def test_plan_json_keeps_the_problems_facts_and_the_planners_claims():
    x = ProblemTensor("x0", 8, None, (0,), graph_input=True)
    t0 = ProblemTensor("t0", 8, 0, (1,), in_place_of="x0")
    t1 = ProblemTensor("t1", 8, 1, graph_output=True, alias_of="t0")
    p = PlanningProblem(("op0", "view1"), (x, t0, t1), streams=(0, 1), control=())
    plan = p.plan_json({"x0": 0, "t0": 0, "t1": 0}, lifetimes={"x0": (0, 0), "t0": (0, 1), "t1": (1, 1)})
    assert (plan["format"], plan["version"], plan["regions"]) == ("zcspec-plan", 1, {"activations": 8})
    assert plan["writes"] == {"t0": [0], "t1": [1]} and plan["consumers"] == {"x0": [0], "t0": [1]}
    assert [t["alias_of"] for t in plan["tensors"]] == [None, "x0", "t0"]
    assert plan["in_place"] == [{"step": 0, "tensor": "t0", "writes": [{"lo": 0, "hi": 8}],
                                 "reads": [{"lo": 0, "hi": 8, "to": 0}]}]
    assert plan["streams"] == {"op0": 0, "view1": 1}
    assert check(plan_from_contract(plan)).ok


@pytest.mark.parametrize("offsets, lifetimes, match", [
    ({"a": 0}, None, "offsets has no entry for tensor 'b'"),
    ({"a": 0, "b": 0, "c": 0}, None, "offsets names tensor 'c'"),
    ({"a": 0, "b": 1.5}, None, r"offsets\['b'\]=1.5 is not an integer"),
    ({"a": 0, "b": 0}, {"a": (0, 0)}, "lifetimes has no entry for tensor 'b'"),
    ({"a": 0, "b": 0}, {"a": (0, 0), "b": 1}, r"lifetimes\['b'\]=1 is not a \(first, last\) pair"),
])
def test_plan_json_refuses_an_answer_that_misses_a_tensor(offsets, lifetimes, match):
    p = PlanningProblem(("op0",), (ProblemTensor("a", 4, 0), ProblemTensor("b", 4, 0)))
    with pytest.raises(PlanFormatError, match=match):
        p.plan_json(offsets, lifetimes=lifetimes)


# -- planners ---------------------------------------------------------------------------------------

@settings(max_examples=50)
@given(planning_problems())
def test_a_correct_planner_passes_every_claim(problem):
    report = judge(problem)
    assert report.ok, report


@settings(max_examples=25)
@given(planning_problems(streams=2))
def test_a_correct_planner_passes_every_claim_on_two_streams(problem):
    offsets, lifetimes = toy_planner(problem)  # as a tutorial has it: through the public entry point
    zcspec.assert_plan_ok(problem.plan_json(offsets, lifetimes=lifetimes, alignment=ALIGN))


def test_touching_lifetimes_treated_as_disjoint_is_caught_and_shrinks_small():
    problem = find(planning_problems(), lambda p: not judge(p, touching_is_disjoint=True).ok,
                   settings=settings(database=None, max_examples=200))
    [v] = [v for v in judge(problem, touching_is_disjoint=True).violations if v.invariant_id == "LAYOUT-NO-OVERLAP"]
    assert len(problem.tensors) <= 3, problem
    a, b = v.values["tensors"]
    life = problem.lifetimes()
    assert {a, b} <= set(problem.tensor), v
    assert life[a][1] == life[b][0] or life[b][1] == life[a][0], (problem, v)  # they only touch
    assert judge(problem).ok
