"""The XLA campaign's programs and findings; the campaign itself runs only with the xla extra (jax)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings

from zcspec.checks.cli.main import main
from zcspec.checks.foreign.finding import ForeignFinding, replay_finding
from zcspec.checks.foreign.jax_programs import JaxProgram, jax_programs

FINDING = Path(__file__).parent / "findings" / "xla-49176-shift-rows.json"
ET_FINDING = Path(__file__).parent / "findings" / "executorch-21490-two-conds.json"
ET_MAP_FINDING = Path(__file__).parent / "findings" / "executorch-cond-then-map.json"


@settings(max_examples=60, deadline=None)
@given(jax_programs())
def test_every_drawn_program_renders_to_python_and_round_trips(program):
    compile(program.source(), "<jax program>", "exec")
    assert JaxProgram.from_data(json.loads(json.dumps(program.to_data()))) == program


def test_the_kept_campaign_finding_replays_without_jax():
    finding = ForeignFinding.load(str(FINDING))
    assert finding.kind == "confirmed" and finding.claims == ("LAYOUT-IN-PLACE-READS",)
    assert finding.max_abs_diff > 0.1      # the compiled result was wrong: the oracle agrees
    result = replay_finding(finding)
    assert result.still_fails and "in place" in result.violations[0]
    assert main(["replay", str(FINDING)]) == 1


def test_a_finding_whose_artefact_is_fixed_passes(tmp_path):
    data = json.loads(FINDING.read_text())
    hlo_suffix = ".txt"
    # Make the fusion's slice read the rows it writes (element by element): the claim then holds.
    data["artefact"][hlo_suffix] = data["artefact"][hlo_suffix].replace("slice={[0:2]", "slice={[1:3]")
    path = tmp_path / "fixed.json"
    path.write_text(json.dumps(data))
    assert not replay_finding(ForeignFinding.load(str(path))).still_fails
    assert main(["replay", str(path)]) == 0


def test_malformed_findings_are_bad_input(tmp_path, capsys):
    data = json.loads(FINDING.read_text())
    del data["artefact"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    assert main(["replay", str(path)]) == 2
    assert "bad.json" in capsys.readouterr().err


@pytest.mark.slow
def test_the_campaign_finds_xla_49176_from_a_clean_start(tmp_path):
    pytest.importorskip("jax")
    from zcspec.checks.foreign.xla_campaign import campaign, write_finding
    result = campaign(examples=300, seed=0, budget=300)
    assert result.finding is not None and result.finding.kind == "confirmed"
    assert result.finding.claims == ("LAYOUT-IN-PLACE-READS",)
    assert len(result.finding.program.steps) == 1           # shrunk to the one copy of rows
    path = write_finding(result.finding, str(tmp_path))
    assert replay_finding(ForeignFinding.load(path)).still_fails


def test_the_kept_executorch_finding_replays_without_torch():
    finding = ForeignFinding.load(str(ET_FINDING))
    assert (finding.planner, finding.kind, finding.claims) == ("executorch", "confirmed", ("LAYOUT-NO-OVERLAP",))
    assert len(finding.program["steps"]) == 3 and finding.max_abs_diff > 0.1
    result = replay_finding(finding)
    assert result.still_fails
    assert main(["replay", str(ET_FINDING)]) == 1


def test_a_cond_then_a_map_is_the_same_bug_class_and_replays():
    # Found by the campaign with seed 1: the map's loop body reuses the bytes of the cond's moved
    # result while the map still reads it in later iterations; ExecuTorch's result was wrong.
    finding = ForeignFinding.load(str(ET_MAP_FINDING))
    assert finding.kind == "confirmed" and [s[0] for s in finding.program["steps"]] == ["cond", "map"]
    assert replay_finding(finding).still_fails


@pytest.mark.slow
def test_the_executorch_campaign_finds_the_two_cond_bug_from_a_clean_start(tmp_path):
    import os
    # On ExecuTorch 1.4.x the same campaign finds pytorch/executorch#21840 first (test_executorch_campaign.py).
    python = os.environ.get("ZCSPEC_EXECUTORCH_FIXED_PYTHON") or os.environ.get("ZCSPEC_EXECUTORCH_PYTHON")
    if not python:
        pytest.skip("set ZCSPEC_EXECUTORCH_FIXED_PYTHON to a Python that has torch and ExecuTorch 1.5.1 or later")
    from zcspec.checks.foreign.executorch_campaign import campaign, write_finding
    result = campaign(python, examples=300, seed=0, budget=600)
    if result.versions["executorch"].startswith("1.4."):
        pytest.skip("ExecuTorch 1.4.x: the campaign finds pytorch/executorch#21840 first")
    assert result.finding is not None and result.finding.kind == "confirmed"
    assert result.finding.claims == ("LAYOUT-NO-OVERLAP",)
    forms = [s.form for s in result.finding.program.steps]
    # a cond, and a second higher-order op (cond or map) running while the first one's result lives
    assert forms[0] == "cond" and forms[-1] in ("cond", "map") and len(forms) <= 3
    path = write_finding(result.finding, str(tmp_path), result.versions)
    assert replay_finding(ForeignFinding.load(path)).still_fails


def test_the_kinds_of_program_follow_the_claims_and_the_oracle():
    from zcspec.checks.foreign.campaign_core import Outcome
    program = JaxProgram(2, 2, ())
    kinds = {(claims, matches): Outcome(program, claims, (), 0.0, matches, {}).kind
             for claims in ((), ("LAYOUT-NO-OVERLAP",)) for matches in (True, False)}
    assert kinds == {((), True): "clean", ((), False): "miss", (("LAYOUT-NO-OVERLAP",), True): "hazard",
                     (("LAYOUT-NO-OVERLAP",), False): "confirmed"}


def test_the_litert_campaign_runs_and_a_finding_of_it_replays(tmp_path):
    pytest.importorskip("ai_edge_litert")
    from zcspec.checks.foreign.campaign_core import write_finding
    from zcspec.checks.foreign.litert_campaign import campaign, run_program
    result = campaign(examples=40, seed=0, budget=60)
    assert result.programs == 40 and result.clean + result.hazards + (result.finding is not None) >= 39
    # Any outcome writes a file that replays from the kept model and arena record alone.
    from hypothesis import find
    from zcspec.checks.foreign.litert_campaign import litert_programs
    program = find(litert_programs(), lambda p: len(p.steps) >= 3)
    outcome = run_program(program)
    path = write_finding("litert", outcome, str(tmp_path), result.versions)
    replayed = replay_finding(ForeignFinding.load(path))
    assert replayed.still_fails == bool(outcome.claims)


def test_the_iree_campaign_runs_and_its_outcome_replays(tmp_path):
    pytest.importorskip("iree.runtime")
    pytest.importorskip("iree.compiler")
    from zcspec.checks.foreign.campaign_core import write_finding
    from zcspec.checks.foreign.iree_campaign import OnnxProgram, campaign, run_program
    from zcspec.checks.foreign.step_programs import Step
    program = OnnxProgram(4, 8, (Step("matmul", (2.0,)), Step("softmax"), Step("concat", ("Tanh",)),
                                 Step("reduce", (0,)), Step("matmul", (0.5,))))
    outcome = run_program(program)
    assert outcome.kind == "clean" and outcome.artefact["layout.txt"]
    path = write_finding("iree", outcome, str(tmp_path), {})
    assert not replay_finding(ForeignFinding.load(path)).still_fails
    result = campaign(examples=3, seed=0, budget=60)
    assert result.programs == 3
