"""LAYOUT-REF-SHARES-INPUT: a planner that stops honouring refs stays safe but is not GE, and fails verify.

The mutation run's ops.py:170 (the ref pair's output index off by one, so no ref output shared its
input) passed every claim: an output with memory of its own overlaps nothing. GE gives a ref output
its input's block (ApplyOutMemory); the claim holds the plan to that wherever the plan's own facts show
the input may be overwritten, and stays silent where zcspec's guard (ge-deviations P9) keeps it apart."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks.scenario import observe
from zcspec.checks.verify import VerifyConfig
from zcspec.checks.verify_cases import zoo_cases
from zcspec.impl.compiler import ops
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.observe import observe_plan
from zcspec.spec.check import check
from zcspec.spec.errors import ObservationConsistencyError
from zcspec.spec.registry import get

CLAIM = "LAYOUT-REF-SHARES-INPUT"


def _zoo_plans(model: str):
    return [obs for _, s in zoo_cases(VerifyConfig(models=(model,), kinds=("plan",))) for obs in observe(s)]


@pytest.mark.parametrize("model", ["builtin:inplace_passthrough", "builtin:inplace_pairs"])
def test_the_zoo_refs_hold_and_exercise_the_claim(model):
    for obs in _zoo_plans(model):
        report = check(obs, invariants=[get(CLAIM)])
        assert report.ok and CLAIM in report.exercised, str(report)


def test_refs_no_longer_honoured_fail_through_the_claim(monkeypatch):
    monkeypatch.setattr(ops, "ref_outputs", lambda node: ())
    for obs in _zoo_plans("builtin:inplace_passthrough"):
        (v, *_) = get(CLAIM).violations(obs)
        assert v.culprit == "tensor 'neg_2:0'" and v.values["input"] == "relu_1:0", v


def _plan(build):
    b = GraphBuilder("refs")
    build(b)
    stages = compile_stages(b.build())
    return observe_plan(stages.graph, stages.plan)


def test_a_ref_on_a_graph_input_is_not_judged():
    """zcspec's guard (P9): a ref never writes the caller's input; GE would, so the claim does not apply."""
    obs = _plan(lambda b: b.output(b.op("Neg", [b.input("x", (4, 4))], _reuse_input=True)))
    assert obs.refs and not get(CLAIM).exercised(obs)


def test_a_ref_on_an_input_read_later_is_not_judged():
    def build(b):
        r = b.op("Relu", [b.input("x", (4, 4))])
        n = b.op("Neg", [r], _reuse_input=True)
        b.output(b.op("Add", [n, r]))   # r is read after the ref: writing it in place would change the sum
    obs = _plan(build)
    assert obs.refs and not get(CLAIM).exercised(obs)
    assert obs.tensor["neg_2:0"].offset != obs.tensor["relu_1:0"].offset


def test_a_plan_file_naming_an_unknown_tensor_in_refs_is_refused():
    obs = _plan(lambda b: b.output(b.op("Neg", [b.op("Relu", [b.input("x", (4, 4))])], _reuse_input=True)))
    assert get(CLAIM).exercised(obs) and check(obs, invariants=[get(CLAIM)]).ok
    with pytest.raises(ObservationConsistencyError, match="refs names tensor 'ghost'"):
        attrs.evolve(obs, refs={"ghost": "relu_1:0"})


# -- LAYOUT-INPLACE-SHARES-INPUT -----------------------------------------------------------------

PAIRS = "LAYOUT-INPLACE-SHARES-INPUT"


def test_the_zoo_in_place_pairs_hold_and_exercise_the_claim():
    for obs in _zoo_plans("builtin:inplace_pairs"):
        report = check(obs, invariants=[get(PAIRS)])
        assert report.ok and PAIRS in report.exercised, str(report)


def test_in_place_pairs_no_longer_kept_fail_through_the_claim(monkeypatch):
    """inplace_pairs' Add names x (a graph input: refused) then neg_4:0 (kept): dropped, the claim reports it."""
    monkeypatch.setattr(ops, "inplace_pairs", lambda node: ())
    for obs in _zoo_plans("builtin:inplace_pairs"):
        (v,) = get(PAIRS).violations(obs)
        assert v.culprit == "tensor 'add_5:0'" and v.values["inputs"] == ["x", "neg_4:0"], v


@pytest.mark.parametrize("why, build", [
    ("sizes differ (a broadcast input)", lambda b: b.output(b.op("Neg", [
        b.op("Mul", [b.op("Relu", [b.input("row", (1, 4))]), b.input("x", (3, 4))], shape=(3, 4),
             _inplace_ability=(0, 0))]))),
    ("a sibling output of the input's producer is read later", lambda b: _split_read_later(b)),
    ("the output is a graph output read by nothing else, but its view is one too", lambda b: b.output(
        *(lambda n: (n, b.op("Reshape", [n], shape=(16,))))(
            b.op("Neg", [b.op("Relu", [b.input("x", (4, 4))])], _inplace_ability=(0, 0))))),
])
def test_pairs_ge_may_refuse_are_not_judged(why, build):
    obs = _plan(build)
    assert obs.inplace and not get(PAIRS).exercised(obs), why


def _split_read_later(b):
    """Neg may overwrite left, but the Split's other output (inner axis: a task) is read after it: GE's
    ProcessInplace wants the node to be the last reader of every output of the input's producer."""
    left, right = b.op("Split", [b.op("Relu", [b.input("x", (4, 4))])],
                       outputs=[((4, 2), "float32"), ((4, 2), "float32")], axis=1, split=(2, 2))
    n = b.op("Neg", [left], _inplace_ability=(0, 0))
    b.output(b.op("Add", [n, b.op("Abs", [right])]))
