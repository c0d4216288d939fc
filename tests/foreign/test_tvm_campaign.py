"""The TVM campaign's programs and findings; compiling needs a Python with TVM (ZCSPEC_TVM_PYTHON)."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.errors import InvalidArgument

from zcspec.checks.cli.main import main
from zcspec.checks.errors import UsageError
from zcspec.checks.foreign.finding import ForeignFinding, replay_finding
from zcspec.checks.foreign.relax_programs import RelaxProgram, relax_programs
from zcspec.checks.foreign.step_programs import Step

FINDINGS = Path(__file__).parent / "findings"
# What the campaign found and shrank from a clean start (300 examples, at most 5 steps):
MATCH_CAST = FINDINGS / "tvm-20190-match-cast-alias.json"   # TVM 0.26.0, seed 0, no ifs drawn (max_ifs=0)
KEPT_ALIAS = FINDINGS / "tvm-20190-kept-alias.json"         # TVM 0.26.0, seed 3
BRANCHES = FINDINGS / "tvm-20191-branch-chains.json"        # TVM 0.27.0.post1, seed 0 (0.26.0 shrinks to the same)
TVM_PYTHON = os.environ.get("ZCSPEC_TVM_PYTHON")


@settings(max_examples=80, deadline=None)
@given(relax_programs())
def test_every_drawn_program_renders_to_python_and_round_trips(program):
    compile(program.source(), "<relax program>", "exec")
    assert RelaxProgram.from_data(json.loads(json.dumps(program.to_data()))) == program
    runs = program.inputs()
    assert len(runs) == 2 ** program.conditions and len({label for label, _, _ in runs}) == len(runs)
    for _, x, conds in runs:
        outputs = program.reference(x, conds)
        assert all(o.shape == (program.rows, program.cols) and o.dtype == np.float32 for o in outputs)
        assert len(outputs) == 1 + sum(s.form == "keep" for s in program.steps)


def test_a_program_renders_blocks_between_its_ifs_and_joins_the_branches():
    program = RelaxProgram(2, 3, (Step("cast"), Step("keep"), Step("if", (("sin", "reshape"), ("cos",))),
                                  Step("mix", ("tanh",))))
    assert program.source().split("class Module:\n")[1] == '''\
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), c0: R.Tensor((), "bool")):
        with R.dataflow():
            m0 = R.match_cast(x, R.Tensor((2, 3), "float32"))
            R.output(m0)
        if c0:
            v2 = R.sin(m0)
            f3 = R.reshape(v2, R.shape([6]))
            v4 = R.reshape(f3, R.shape([2, 3]))
            j1 = v4
        else:
            v5 = R.cos(m0)
            j1 = v5
        with R.dataflow():
            t6 = R.tanh(x)
            v7 = R.add(j1, t6)
            R.output(v7)
        return (v7, m0)


# inputs: x = np.linspace(-0.9, 1.1, 6, dtype='float32').reshape(2, 3); runs: c0=True; c0=False
'''
    x = program.inputs()[0][1]
    assert np.array_equal(program.reference(x, (True,))[0], np.sin(x) + np.tanh(x))
    assert np.array_equal(program.reference(x, (False,))[1], x)


def test_the_reference_follows_the_steps_not_the_source():
    program = RelaxProgram(2, 2, (Step("affine", (2.0, -1.0)), Step("matmul", (0.5,)), Step("flatten", ("abs",))))
    x = program.inputs()[0][1]
    w = np.eye(2, dtype="float32") * 0.5 + 0.01
    assert np.allclose(program.reference(x, ())[0], np.abs((x * 2 - 1) @ w))
    assert "W1 = (np.eye(2, dtype='float32') * np.float32(0.5)" in program.source()


@pytest.mark.parametrize("kwargs", [dict(max_steps=0), dict(max_ifs=6), dict(max_steps="3")])
def test_bad_strategy_arguments_are_refused_at_once(kwargs):
    with pytest.raises(InvalidArgument):
        relax_programs(**kwargs)


def test_a_python_without_tvm_is_a_usage_error():
    from zcspec.checks.foreign.tvm_campaign import Worker
    if subprocess.run([sys.executable, "-c", "import tvm"], capture_output=True).returncode == 0:
        pytest.skip("this Python has TVM")
    with pytest.raises(UsageError, match="has no TVM"):
        Worker(sys.executable)


_FAKE_TVM = """#!{python}
# Stands for a Python with TVM: 'compiles' to the kept module of apache/tvm#20191 and runs it as 0.27 does
# (c0=True right, c0=False a segfault); with HANG set, the c0=False run never returns.
import json, os, signal, sys, time
print(json.dumps({{"ready": True, "tvm": "fake"}}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if "source" in request:
        print(json.dumps({{"text": {text!r}}}), flush=True)
    elif request["conds"] == [True]:
        print(json.dumps({{"outputs": [[request["shape"], request["x"]]]}}), flush=True)
    elif {hang}:
        time.sleep(60)
    else:
        os.kill(os.getpid(), signal.SIGSEGV)
"""


@pytest.mark.parametrize("hang", [False, True])
def test_a_run_that_crashes_or_hangs_is_a_wrong_result_and_the_worker_starts_again(tmp_path, monkeypatch, hang):
    from zcspec.checks.foreign import tvm_campaign
    monkeypatch.setattr(tvm_campaign, "RUN_SECONDS", 1.0)
    fake = tmp_path / "python"
    text = ForeignFinding.load(str(BRANCHES)).artefact["relax.txt"]
    fake.write_text(_FAKE_TVM.format(python=sys.executable, text=text, hang=hang))
    fake.chmod(0o755)
    worker = tvm_campaign.Worker(str(fake))
    try:
        program = RelaxProgram.from_data(ForeignFinding.load(str(BRANCHES)).program)
        outcome = tvm_campaign.run_program(worker, program)
        again = tvm_campaign.run_program(worker, program)       # a fresh worker after the crash
    finally:
        worker.close()
    runs = json.loads(outcome.artefact["runs.json"])
    assert runs["c0=True"] == {"matches": True, "max_abs_diff": 0.0}
    assert runs["c0=False"] == {"failed": "timed out after 1 s" if hang else "crashed: SIGSEGV"}
    assert (outcome.kind, outcome.claims, outcome.max_abs_diff) == ("confirmed", ("LAYOUT-ARENA-ALLOCATED",), math.inf)
    assert again.artefact == outcome.artefact


# -- the kept findings, replayed without TVM -------------------------------------------------------

def test_the_match_cast_finding_of_tvm_0_26_replays_without_tvm():
    """apache/tvm#20190's class, shrunk to the issue's own reproducer: match_cast's alias of sin(x) is read by
    the add while cos(x) is written in the same storage."""
    finding = ForeignFinding.load(str(MATCH_CAST))
    assert (finding.planner, finding.kind, finding.versions["tvm"]) == ("tvm", "confirmed", "0.26.0")
    assert "LAYOUT-NO-OVERLAP" in finding.claims and finding.max_abs_diff > 0.1
    assert [s[0] for s in finding.program["steps"]] == ["unary", "cast", "mix"]
    result = replay_finding(finding)
    assert result.still_fails and any("LAYOUT-NO-OVERLAP" in v for v in result.violations)
    assert main(["replay", str(MATCH_CAST)]) == 1


def test_a_match_cast_alias_kept_as_an_output_is_the_same_class():
    """m1 = match_cast(sin(x)) is returned, but 0.26.0 hands its storage to a later sin: the output is wrong."""
    finding = ForeignFinding.load(str(KEPT_ALIAS))
    assert [s[0] for s in finding.program["steps"]] == ["unary", "cast", "keep", "unary", "unary"]
    assert "LAYOUT-NO-OVERLAP" in finding.claims and not json.loads(finding.artefact["runs.json"])["x"]["matches"]
    assert replay_finding(finding).still_fails


def test_the_branch_finding_of_tvm_0_27_replays_without_tvm():
    """apache/tvm#20191's class (open in 0.27.0.post1), shrunk to the issue's own reproducer: a reshape chain
    (two copies outside a dataflow block) in each branch; the else path's first copy is placed in a storage
    only the then branch allocates, and c0=False crashes."""
    finding = ForeignFinding.load(str(BRANCHES))
    assert (finding.kind, finding.claims, finding.versions["tvm"]) == ("confirmed", ("LAYOUT-ARENA-ALLOCATED",),
                                                                      "0.27.0.post1")
    assert finding.program["steps"] == [["if", [["reshape"], ["reshape"]]]]
    runs = json.loads(finding.artefact["runs.json"])
    assert runs["c0=True"]["matches"] and runs["c0=False"]["failed"].startswith("crashed")
    assert finding.max_abs_diff is None       # no result to compare: the else path crashed (strict JSON: null)
    assert all(v.startswith("[main [if at line 6: false]] LAYOUT-ARENA-ALLOCATED") for v in finding.violations)
    result = replay_finding(finding)
    assert result.still_fails and all(v.startswith("LAYOUT-ARENA-ALLOCATED") for v in result.violations)
    assert main(["replay", str(BRANCHES)]) == 1


def test_a_finding_whose_plan_is_mended_passes(tmp_path):
    """Give cos(x) a storage of its own in the kept 0.26.0 module: every claim holds, replay exits 0."""
    data = json.loads(MATCH_CAST.read_text())
    text = data["artefact"]["relax.txt"]
    alloc = next(line for line in text.splitlines() if "alloc1" in line and "R.memory.alloc_tensor(storage," in line)
    indent = alloc[: len(alloc) - len(alloc.lstrip())]
    size = next(line for line in text.splitlines() if "R.memory.alloc_storage(" in line)
    mended = size.replace("storage:", "storage9:", 1)
    data["artefact"]["relax.txt"] = text.replace(alloc, f"{indent}{mended.strip()}\n"
                                                 + alloc.replace("alloc_tensor(storage,", "alloc_tensor(storage9,"))
    path = tmp_path / "mended.json"
    path.write_text(json.dumps(data))
    assert not replay_finding(ForeignFinding.load(str(path))).still_fails
    assert main(["replay", str(path)]) == 0


def test_a_tvm_finding_without_its_module_is_bad_input(tmp_path, capsys):
    data = json.loads(BRANCHES.read_text())
    del data["artefact"]["relax.txt"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    assert main(["replay", str(path)]) == 2
    assert "relax.txt" in capsys.readouterr().err


# -- with TVM --------------------------------------------------------------------------------------

def _tvm_python() -> str:
    if not TVM_PYTHON:
        pytest.skip("set ZCSPEC_TVM_PYTHON to a Python with apache-tvm (0.26.0 or 0.27.0.post1)")
    return TVM_PYTHON


def test_the_kept_findings_programs_compile_and_run_as_kept():
    from zcspec.checks.foreign.tvm_campaign import Worker, run_program
    worker = Worker(_tvm_python())
    try:
        outcomes = {path.name: run_program(worker, RelaxProgram.from_data(ForeignFinding.load(str(path)).program))
                    for path in (MATCH_CAST, KEPT_ALIAS, BRANCHES)}
    finally:
        worker.close()
    assert outcomes[BRANCHES.name].claims == ("LAYOUT-ARENA-ALLOCATED",)      # open in both releases
    assert outcomes[BRANCHES.name].kind == "confirmed"
    fixed = worker.versions["tvm"] != "0.26.0"
    assert outcomes[MATCH_CAST.name].kind == outcomes[KEPT_ALIAS.name].kind == ("clean" if fixed else "confirmed")


@pytest.mark.slow
def test_the_campaign_finds_the_open_branch_bug_from_a_clean_start(tmp_path):
    """apache/tvm#20191 is in both releases and comes first from seed 0: shrunk to one if of reshape chains."""
    from zcspec.checks.foreign.tvm_campaign import campaign, write_finding
    result = campaign(_tvm_python(), examples=300, seed=0, budget=600, max_steps=5)
    assert result.finding is not None and result.finding.kind == "confirmed"
    assert result.finding.claims == ("LAYOUT-ARENA-ALLOCATED",)
    assert [s.form for s in result.finding.program.steps] == ["if"]
    path = write_finding(result.finding, str(tmp_path), result.versions)
    assert replay_finding(ForeignFinding.load(path)).still_fails


@pytest.mark.slow
def test_without_ifs_the_campaign_finds_the_match_cast_bug_only_before_its_fix(tmp_path):
    """No ifs drawn, so #20191 cannot come first: 0.26.0 shows apache/tvm#20190, shrunk to the issue's
    reproducer; 0.27.0.post1 (with apache/tvm#20220) runs every program clean."""
    from zcspec.checks.foreign.tvm_campaign import campaign
    result = campaign(_tvm_python(), examples=300, seed=0, budget=600, max_steps=5, max_ifs=0)
    if result.versions["tvm"] != "0.26.0":
        assert result.finding is None and result.hazards == 0 and result.clean == result.programs
        return
    assert result.finding is not None and result.finding.kind == "confirmed"
    assert "LAYOUT-NO-OVERLAP" in result.finding.claims
    assert [s.form for s in result.finding.program.steps] == ["unary", "cast", "mix"]
