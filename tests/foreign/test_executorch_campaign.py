"""The ExecuTorch campaign's backend configs and the class of pytorch/executorch#21840 it finds with them.

The drawn programs and their configs are tested with no torch; the kept finding replays with none;
the campaigns (marked ``slow``) need ``ZCSPEC_EXECUTORCH_PYTHON``, a Python with ExecuTorch 1.4.x
(before the fix), and ``ZCSPEC_EXECUTORCH_FIXED_PYTHON``, one with a release that has it (1.5.1).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings

from zcspec.checks.cli.main import main
from zcspec.checks.foreign.campaign_core import Outcome, run_campaign
from zcspec.checks.foreign.finding import ForeignFinding, replay_finding
from zcspec.checks.foreign.step_programs import Step
from zcspec.checks.foreign.torch_programs import REINPLACEABLE, TorchProgram, torch_programs

FINDING = Path(__file__).parent / "findings" / "executorch-21840-maximum-reinplaced.json"
HIGHER_ORDER = ("cond", "map")


@settings(max_examples=80, deadline=None)
@given(torch_programs())
def test_a_drawn_config_names_only_top_level_ops_the_program_calls(program):
    called = {REINPLACEABLE[s.args[0]] for s in program.steps if s.form == "binary" and s.args[0] in REINPLACEABLE}
    assert set(program.reinplace) <= called and list(program.reinplace) == sorted(set(program.reinplace))
    source = program.source()
    compile(source, "<torch program>", "exec")
    assert ("config = ExecutorchBackendConfig(" in source) == bool(program.reinplace)
    assert TorchProgram.from_data(json.loads(json.dumps(program.to_data()))) == program


@settings(max_examples=60, deadline=None)
@given(torch_programs(higher_order=False))
def test_a_campaign_without_higher_order_ops_draws_no_cond_or_map(program):
    assert not {s.form for s in program.steps} & set(HIGHER_ORDER)


def test_a_program_kept_before_configs_were_drawn_reads_as_one_without():
    old = {"rows": 1, "cols": 1, "steps": [["cond", ["torch.sin", "torch.sin"]], ["map", ["torch.sin"]]]}
    assert TorchProgram.from_data(old).reinplace == ()


def test_shrinking_keeps_to_the_first_findings_class():
    # A stand-in compiler: three steps or more with the config fail (the first finding), and once that
    # is seen, two steps or more without it fail too (another bug). Hypothesis shrinks the first toward
    # the smaller other one unless the campaign tells their classes apart: on ExecuTorch 1.4.1 the
    # seed-0 finding, a reinplaced maximum, shrank to pytorch/executorch#21490's cond and map so.
    from hypothesis import strategies as st
    programs = st.builds(lambda n, r: TorchProgram(1, 1, (Step("unary", ("torch.sin",)),) * n, r),
                         st.integers(1, 6), st.sampled_from(((), ("maximum.default",))))

    def runner():
        seen = []

        def run(p):
            failing = len(p.steps) >= 3 if p.reinplace else len(p.steps) >= 2 and any(seen)
            seen.append(failing)
            return Outcome(p, ("LAYOUT-NO-OVERLAP",) if failing else (), (), float(failing), not failing, {})
        return run

    def config_class(o):
        return "backend config" if o.program.reinplace else "program"

    kept = run_campaign(programs, runner(), examples=200, seed=0, budget=60, bug_class=config_class)
    assert kept.bug_class == "backend config" and kept.other_bugs > 0
    assert (len(kept.finding.program.steps), kept.finding.program.reinplace) == (3, ("maximum.default",))
    slipped = run_campaign(programs, runner(), examples=200, seed=0, budget=60)
    assert (len(slipped.finding.program.steps), slipped.finding.program.reinplace) == (2, ())


def test_the_kept_finding_replays_without_torch():
    finding = ForeignFinding.load(str(FINDING))
    assert (finding.planner, finding.kind, finding.claims) == ("executorch", "confirmed", ("LAYOUT-NO-OVERLAP",))
    program = TorchProgram.from_data(finding.program)
    assert program.reinplace == ("maximum.default",) and finding.versions["executorch"].startswith("1.4.")
    assert [s.form for s in program.steps][0] == "binary" and finding.max_abs_diff > 0.01
    assert not {s.form for s in program.steps} & set(HIGHER_ORDER)
    assert replay_finding(finding).still_fails
    assert main(["replay", str(FINDING)]) == 1


def _python(variable: str) -> str:
    python = os.environ.get(variable)
    if not python:
        pytest.skip(f"set {variable} to a Python that has torch and ExecuTorch")
    return python


@pytest.mark.slow
def test_the_campaign_finds_executorch_21840_from_a_clean_start(tmp_path):
    from zcspec.checks.foreign.executorch_campaign import campaign, write_finding
    result = campaign(_python("ZCSPEC_EXECUTORCH_PYTHON"), examples=300, seed=0, budget=900)
    if not result.versions["executorch"].startswith("1.4."):
        pytest.skip(f"ExecuTorch {result.versions['executorch']} has the fix of pytorch/executorch#21840")
    f = result.finding
    assert f is not None and f.kind == "confirmed" and f.claims == ("LAYOUT-NO-OVERLAP",)
    assert result.bug_class == "backend config" and f.program.reinplace, f.program.source()
    assert not {s.form for s in f.program.steps} & set(HIGHER_ORDER) and len(f.program.steps) <= 3
    assert replay_finding(ForeignFinding.load(write_finding(f, str(tmp_path), result.versions))).still_fails


@pytest.mark.slow
def test_the_release_with_the_fix_shows_nothing_of_that_class():
    from zcspec.checks.foreign.executorch_campaign import campaign
    python = _python("ZCSPEC_EXECUTORCH_FIXED_PYTHON")
    # Without cond or map (pytorch/executorch#21490 is open in 1.5.1 too): 300 programs, 29 of them with
    # a backend config (ExecuTorch 1.4.1 runs the 47th wrong and stops there); 1.5.1 plans them all right.
    result = campaign(python, examples=300, seed=0, budget=900, higher_order=False)
    assert result.programs == 300 and result.finding is None and result.hazards == 0
    # With them, whatever it finds (#21490) needs no config.
    result = campaign(python, examples=300, seed=0, budget=900)
    assert result.bug_class == "program" and not result.finding.program.reinplace
