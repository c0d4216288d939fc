"""The random campaign runs each case's Z3 proofs: a refuted proof is a shrunk counterexample named by
the proof's pseudo-claim id, an unknown one is counted and shown but no counterexample, and
``zcspec replay`` re-runs the proof such a counterexample names."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks import campaign, scenario as scenario_mod
from zcspec.checks.campaign import Tally, prove_case, run_campaign
from zcspec.checks.cli.main import main
from zcspec.checks.counterexample import Counterexample
from zcspec.checks.errors import CounterexampleError
from zcspec.checks.faults import registry
from zcspec.checks.faults.strategies import model_file_scenarios
from zcspec.checks.proofs import cases
from zcspec.checks.proofs.cases import LAYOUT_CLAIM, REFRESH_CLAIM
from zcspec.checks.proofs.refresh import RefreshProof
from zcspec.checks.replay import replay
from zcspec.checks.scenario import Scenario
from zcspec.impl.compiler.builder import GraphBuilder

VARIANT = "v1-refresh-base-granule"


def small_graph():
    b = GraphBuilder("cx")
    x = b.input("x", (4, 4))
    y = b.op("Relu", [x], name="a")
    b.output(b.op("Neg", [y], name="b"))
    return b.build()


@pytest.fixture(scope="module")
def found():
    """The proof-only variant, hunted by a plain campaign over model files (every invariant misses it)."""
    with registry.active(VARIANT):
        shrunk = run_campaign(model_file_scenarios(6), max_examples=30, seed=0, found_with=VARIANT)
        raw = run_campaign(model_file_scenarios(6), max_examples=30, seed=0, shrink=False)
        bare = run_campaign(model_file_scenarios(6), max_examples=30, seed=0, proofs=())
    return shrunk, raw, bare


def test_the_campaign_finds_the_refuted_refresh_proof_and_shrinks_it(found):
    shrunk, raw, bare = found
    assert bare.counterexample is None            # no invariant sees the variant: only the proof does
    cx = shrunk.counterexample
    assert cx is not None and cx.invariant == REFRESH_CLAIM and cx.is_proof and cx.found_with == VARIANT
    assert cx.violation["values"]["status"] == "refuted" and cx.violation["values"]["kind"] == "at_offset"
    assert raw.counterexample.invariant == REFRESH_CLAIM
    assert len(cx.scenario.graph.nodes) <= 3 <= len(raw.counterexample.scenario.graph.nodes)
    assert shrunk.tally.proofs[(REFRESH_CLAIM, "refuted")] >= 1


def test_a_proof_counterexample_replays_under_the_variant_and_passes_on_the_real_code(found, tmp_path, capsys):
    cx = found[0].counterexample
    path = tmp_path / "cx.json"
    cx.save(str(path))
    again = Counterexample.load(str(path))
    assert again == cx
    with registry.active(VARIANT):
        faulty = replay(again)
        assert main(["replay", str(path)]) == 1
    assert faulty.still_fails and not faulty.error and "refuted" in faulty.summary()
    real = replay(again)
    assert not real.still_fails and "passes now (proved)" in real.summary()
    assert main(["replay", str(path)]) == 0
    assert "passes now (proved)" in capsys.readouterr().out


def test_a_crash_of_the_proof_on_replay_is_reported_not_hidden(found, monkeypatch):
    def crash(model, **kw):
        raise RuntimeError("loader refused the file")
    monkeypatch.setattr(cases, "prove_refresh", crash)
    result = replay(found[0].counterexample)
    assert result.still_fails and "loader refused the file" in result.error


def test_an_unknown_proof_fails_a_replay(found, monkeypatch):
    monkeypatch.setattr(cases, "prove_refresh", lambda model, **kw: RefreshProof("unknown", reason="timeout"))
    result = replay(found[0].counterexample)
    assert result.still_fails and "unknown" in result.summary()


def test_the_real_code_gives_no_proof_counterexample():
    result = run_campaign(model_file_scenarios(6), max_examples=30, seed=0)
    assert result.counterexample is None
    assert result.tally.proofs[(REFRESH_CLAIM, "proved")] > 0 and not result.tally.unknown


def test_an_unknown_proof_is_counted_and_shown_not_a_counterexample(monkeypatch):
    monkeypatch.setattr(cases, "prove_refresh", lambda model, **kw: RefreshProof("unknown", reason="timeout"))
    result = run_campaign(model_file_scenarios(4), max_examples=15, seed=0)
    assert result.counterexample is None
    n = result.tally.proofs[(REFRESH_CLAIM, "unknown")]
    assert n > 0 and len(result.tally.unknown) == n
    assert {(claim, reason) for _, claim, reason in result.tally.unknown} == {(REFRESH_CLAIM, "timeout")}
    assert f"{n} unknown" in result.tally.proof_summary()


def test_a_refuted_layout_proof_is_named_proof_layout():
    """A plan with the output moved onto the input (the layout proof's overlap claim) gives PROOF-LAYOUT."""
    s = Scenario("plan", small_graph())
    obs = scenario_mod._observe_plan(s)[0]
    x = obs.tensor["x"]
    moved = tuple(attrs.evolve(t, offset=x.offset, first=0) if t.name == "b:0" else t for t in obs.tensors)
    tally = Tally()
    claim, violation = prove_case("k", s, [attrs.evolve(obs, tensors=moved)], tally)
    assert claim == LAYOUT_CLAIM and violation["values"]["status"] == "refuted"
    assert prove_case("k", s, [obs], tally) is None
    assert tally.proofs[(LAYOUT_CLAIM, "proved")] == 1 and tally.proofs[(LAYOUT_CLAIM, "refuted")] == 1


def test_replay_of_a_layout_proof_counterexample_passes_on_the_real_code():
    cx = Counterexample(Scenario("plan", small_graph()), LAYOUT_CLAIM, {"culprit": "overlap", "message": "demo"})
    assert not replay(cx).still_fails


@pytest.mark.parametrize("claim, scenario, match", [
    ("PROOF-NO-SUCH", Scenario("plan", small_graph()), "known proofs"),
    (REFRESH_CLAIM, Scenario("plan", small_graph()), "gets no PROOF-V1-REFRESH proof"),
])
def test_a_proof_claim_the_scenario_does_not_get_is_bad_input(claim, scenario, match):
    with pytest.raises(CounterexampleError, match=match):
        replay(Counterexample(scenario, claim, {"culprit": "", "message": ""}))


def test_the_campaign_proves_plans_and_model_files():
    assert set(campaign.CAMPAIGN_PROOFS) == {LAYOUT_CLAIM, REFRESH_CLAIM}
