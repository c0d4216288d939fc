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
from zcspec.impl.compiler import aliases, ops
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.observe import observe_plan
from zcspec.spec.check import check
from zcspec.spec.errors import ObservationConsistencyError
from zcspec.spec.invariants import layout_refs
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


# -- LAYOUT-INPLACE-REFUSED ----------------------------------------------------------------------

REFUSED = "LAYOUT-INPLACE-REFUSED"


@pytest.mark.parametrize("model", ["builtin:inplace_pairs", "builtin:alias_guards"])
def test_the_zoo_refused_pairs_hold_and_exercise_the_claim(model):
    for obs in _zoo_plans(model):
        report = check(obs, invariants=[get(REFUSED)])
        assert report.ok and REFUSED in report.exercised, str(report)


def _keeps_any_pair(monkeypatch, name, value):
    monkeypatch.setattr(aliases, name, value)


@pytest.mark.parametrize("model, planted, culprit, reason", [
    # the planner forgets GE's RemoveSizeNotEqual: Mul's output (192 bytes) over the 32-byte Sigmoid output
    ("builtin:inplace_pairs", ("_same_size", lambda *a: True), "tensor 'mul_7:0'", "RemoveSizeNotEqual"),
    # ... or that a graph input is read-only (RemoveInRwConflicts): Add's first pair names x
    ("builtin:inplace_pairs", ("_fixed_root", lambda graph, root: False), "tensor 'add_5:0'", "RemoveInRwConflicts"),
])
def test_pairs_ge_refuses_kept_fail_through_the_claim(monkeypatch, model, planted, culprit, reason):
    _keeps_any_pair(monkeypatch, *planted)
    found = [v for obs in _zoo_plans(model) for v in get(REFUSED).violations(obs)]
    assert found and all(v.culprit == culprit and reason in v.message for v in found), found


def _over(obs, out, into):
    """``obs`` with ``out`` moved over ``into``'s memory, as a planner that keeps the pair lays it out."""
    i = obs.tensor[into]
    return attrs.evolve(obs, tensors=tuple(attrs.evolve(t, region=i.region, offset=i.offset, alias_of=into)
                                           if t.name == out else t for t in obs.tensors))


def test_a_pair_on_a_continuous_output_node_kept_fails_through_the_claim():
    """alias_guards' fused HcomAllReduce declares an in-place pair GE refuses (RemoveOutRwConflicts); its first
    output (renamed by the conflict pass's copy) laid over its first input."""
    (obs, *_) = _zoo_plans("builtin:alias_guards")
    (v,) = get(REFUSED).violations(_over(obs, "identity_0_NetOutput_MemLayoutConflict_1:src", "neg_3:0"))
    assert "RemoveOutRwConflicts" in v.message and v.values["input"] == "neg_3:0", v


def test_a_pair_whose_producer_has_a_later_reader_kept_fails_through_the_claim(monkeypatch):
    monkeypatch.setattr(aliases, "_producer_done", lambda *a: True)
    obs = _plan(_split_read_later)
    (v,) = get(REFUSED).violations(obs)
    assert v.culprit == "tensor 'neg_3:0'" and "GetSupportInplaceOutput" in v.message, v


def _symbol_conflict(b):
    """Add may run over relu's output, which the HcomAllReduce read as one of its continuous inputs before; the
    Add's output is a graph output: merged, a user output and a continuous input share a symbol."""
    r = b.op("Relu", [b.input("x", (4, 8))])
    h0, h1 = b.op("HcomAllReduce", [r, b.op("Abs", [b.input("q", (4, 8))])],
                  outputs=[((4, 8), "float32")] * 2, reduction="sum")
    b.output(b.op("Add", [r, h0], _inplace_ability=(0, 0)), h1)


def test_a_pair_refused_for_a_symbol_conflict_is_judged():
    obs = _plan(_symbol_conflict)
    report = check(obs, invariants=[get(REFUSED)])
    assert report.ok and REFUSED in report.exercised, str(report)
    ((out, _, why),) = list(layout_refs._refused(obs))
    assert out == "add_4:0" and "RemoveSymbolConflicts" in why["relu_1:0"], why


def test_a_symbol_conflict_the_plan_still_shows_fails_through_the_claim():
    """A planner that keeps the conflicting pair and copies nothing (GE's order: the optimizer ran before)."""
    (v,) = get(REFUSED).violations(_over(_plan(_symbol_conflict), "add_4:0", "relu_1:0"))
    assert v.culprit == "tensor 'add_4:0'" and "continuous input" in v.message and "user output" in v.message, v
