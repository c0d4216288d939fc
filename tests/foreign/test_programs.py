"""Every kept program of another compiler (checks/foreign/programs) reads and shows what it should."""
from __future__ import annotations

import json
import shutil

import pytest

from zcspec.checks.foreign.programs import foreign_cases, problems
from zcspec.spec.check import check

CASES = foreign_cases()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
def test_every_kept_program_reads_and_shows_what_it_should(case):
    reports = [check(p.plan) for p in case.imported()]
    assert problems(case, reports) == []
    for report in reports:
        assert {"LAYOUT-NO-OVERLAP", "LAYOUT-ARENA-ALIGN", "LAYOUT-LIFETIME-COVERS-WRITES"} <= set(report.applied)


def test_the_known_bugs_kept_are_these():
    bugs = {(c.planner, c.issue, c.expect) for c in CASES if c.expect != "clean"}
    assert bugs == {("xla", "openxla/xla#49176", "LAYOUT-IN-PLACE-READS"),
                    ("executorch", "pytorch/executorch#21490", "LAYOUT-NO-OVERLAP"),
                    ("executorch", "pytorch/executorch#21840", "LAYOUT-NO-OVERLAP"),
                    ("litert", "google-ai-edge/LiteRT#8928", "LAYOUT-NO-OVERLAP"),
                    ("tvm", "apache/tvm#20190", "LAYOUT-NO-OVERLAP"),
                    ("tvm", "apache/tvm#20191", "LAYOUT-ARENA-ALLOCATED"),
                    ("iree", "iree-org/iree#19355", "LAYOUT-READS-SEE-WRITES"),
                    ("iree", "iree-org/iree#21053", "LAYOUT-READS-SEE-WRITES")}
    assert {c.planner for c in CASES} == {"xla", "executorch", "iree", "litert", "tvm"}


def test_a_known_bug_that_is_no_longer_found_is_a_problem():
    case = next(c for c in CASES if c.expect == "LAYOUT-NO-OVERLAP")
    clean = next(c for c in CASES if c.planner == case.planner and c.expect == "clean")
    wrong = problems(case, [check(p.plan) for p in clean.imported()])
    assert wrong and "no longer found" in wrong[0]


def test_zcspec_replay_judges_each_kept_program_without_its_compiler(tmp_path, capsys):
    from zcspec.checks.cli.main import main

    files = [str(c.folder / "program.json") for c in CASES]
    assert main(["replay", *files]) == 0
    assert capsys.readouterr().out.count(": as kept") == len(files)
    case = next(c for c in CASES if c.planner == "tvm" and c.expect == "clean")
    shutil.copytree(case.folder, tmp_path / "tvm" / case.name)
    meta = tmp_path / "tvm" / case.name / "program.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "expect": "LAYOUT-NO-OVERLAP"}))
    assert main(["replay", str(meta)]) == 1      # a bug kept as found that is not found: not as kept
    assert "NOT AS KEPT" in capsys.readouterr().out
