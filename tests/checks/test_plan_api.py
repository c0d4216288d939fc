"""zcspec.check_plan / assert_plan_ok, the CI options of ``zcspec check`` and the replay of plain plan files."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import zcspec
from zcspec.checks.cli.main import main
from zcspec.spec.errors import SpecError
from tests.helpers.user_plans import CLEAN


def _buggy() -> dict:
    """z is planned from step 1 (the step of its first read's neighbour) over x, which step 1 still reads."""
    plan = copy.deepcopy(CLEAN)
    plan["tensors"][2]["first"] = 1
    plan["writes"]["z"] = [1]
    return plan


def _wasteful() -> dict:
    """Clean, but z gets bytes of its own: the arena is 192 bytes where 128 are ever live (1.5x)."""
    plan = copy.deepcopy(CLEAN)
    plan["tensors"][2]["offset"] = 128
    plan["regions"]["act"] = 192
    return plan


def test_check_plan_reads_a_path_a_dict_or_an_observation(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(CLEAN))
    reports = [zcspec.check_plan(str(path)), zcspec.check_plan(CLEAN), zcspec.check_plan(zcspec.read_plan(CLEAN)[0])]
    assert all(r.ok for r in reports)
    assert {r.title for r in reports} == {"p.json", "plan"}
    row = reports[0].arenas[0]
    assert (row.name, row.size, row.lower_bound, row.compact, row.ratio) == ("act", 128, 128, 128, 1.0)
    with pytest.raises(TypeError, match="list"):
        zcspec.check_plan([CLEAN])


def test_claims_soc_and_max_ratio_choose_what_is_judged():
    buggy = zcspec.check_plan(_buggy(), compact=False)
    assert not buggy.ok and buggy.report.violated() == ("LAYOUT-NO-OVERLAP", "LAYOUT-LOWER-BOUND")
    assert zcspec.check_plan(_buggy(), claims=["LAYOUT-REGION-COVER"]).ok
    assert zcspec.check_plan(_buggy(), claims=["LAYOUT-REGION-COVER"]).applied == ("LAYOUT-REGION-COVER",)
    with pytest.raises(SpecError, match="LAYOUT-NO-OVERLAPP"):
        zcspec.check_plan(CLEAN, claims=["LAYOUT-NO-OVERLAPP"])
    with pytest.raises(SpecError, match="ascend910b"):
        zcspec.check_plan(CLEAN, soc="ascend9000")
    assert zcspec.check_plan(CLEAN, soc="ascend910b").plan.soc == "ascend910b"
    wasteful = zcspec.check_plan(_wasteful(), max_ratio=1.25, compact=False)
    assert wasteful.report.ok and not wasteful.ok and [a.name for a in wasteful.over_ratio] == ["act"]
    assert "above --max-ratio 1.25" in str(wasteful)
    assert zcspec.check_plan(_wasteful(), max_ratio=1.5).ok
    with pytest.raises(ValueError, match="at least 1"):
        zcspec.check_plan(CLEAN, max_ratio=0.5)


def test_assert_plan_ok_raises_one_assertion_with_the_report_and_keeps_the_plan(tmp_path):
    assert zcspec.assert_plan_ok(CLEAN).ok
    with pytest.raises(zcspec.PlanViolation) as info:
        zcspec.assert_plan_ok(_buggy(), save=str(tmp_path / "kept"))
    assert isinstance(info.value, AssertionError)
    text = str(info.value)
    assert "LAYOUT-NO-OVERLAP: tensor 'x' and tensor 'z': both live during steps 1..1 and share bytes [0, 64)" in text
    assert info.value.saved and info.value.saved in text
    assert main(["replay", info.value.saved]) == 1
    assert zcspec.read_plan(info.value.saved)[0] == zcspec.read_plan(_buggy())[0]


def test_check_exit_codes_and_the_quality_gate(tmp_path, capsys):
    paths = {}
    for name, plan in (("clean", CLEAN), ("buggy", _buggy()), ("wasteful", _wasteful())):
        paths[name] = str(tmp_path / f"{name}.json")
        (tmp_path / f"{name}.json").write_text(json.dumps(plan))
    assert main(["check", paths["clean"], paths["wasteful"]]) == 0
    assert main(["check", paths["clean"], paths["wasteful"], "--max-ratio", "1.25"]) == 1
    assert main(["check", paths["buggy"]]) == 1
    for bad in (["--max-ratio", "0.9"], ["--max-ratio", "x"], ["--claims", ""]):
        with pytest.raises(SystemExit) as info:          # argparse's usage error: exit 2, the option named
            main(["check", paths["clean"], *bad])
        assert info.value.code == 2 and bad[0] in capsys.readouterr().err
    capsys.readouterr()
    assert main(["check", paths["buggy"], "--json", "--no-compact"]) == 1
    line = json.loads(capsys.readouterr().out.splitlines()[0])
    assert line["ok"] is False and line["claims"]["LAYOUT-NO-OVERLAP"] == "violated"
    assert line["violations"][0]["culprit"] == "tensor 'x' and tensor 'z'"


def test_junit_has_one_case_per_claim_and_plan(tmp_path):
    bare = copy.deepcopy(CLEAN)
    del bare["consumers"]
    for name, plan in (("bare", bare), ("buggy", _buggy()), ("wasteful", _wasteful())):
        (tmp_path / f"{name}.json").write_text(json.dumps(plan))
    out = tmp_path / "report.xml"
    files = [str(tmp_path / f"{n}.json") for n in ("bare", "buggy", "wasteful")]
    assert main(["check", *files, "--junit", str(out), "--max-ratio", "1.25", "--no-compact"]) == 1
    suites = {s.get("name"): s for s in ET.parse(out).getroot()}
    assert set(suites) == {"bare.json", "buggy.json", "wasteful.json"}
    cases = {c.get("name"): c for c in suites["buggy.json"]}
    assert cases["LAYOUT-NO-OVERLAP"].find("failure").get("type") == "LAYOUT-NO-OVERLAP"
    assert "tensor 'x' and tensor 'z'" in cases["LAYOUT-NO-OVERLAP"].find("failure").text
    skipped = {c.get("name"): c.find("skipped") for c in suites["bare.json"]}
    assert skipped["LAYOUT-LIFETIME-COVERS-USES"].get("message") == "not judged: the plan gives no consumers"
    arena = [c for c in suites["wasteful.json"] if c.get("name").startswith("arena act")]
    assert len(arena) == 1 and arena[0].find("failure") is not None
    assert suites["buggy.json"].get("failures") == "2"


def test_replay_and_export_pytest_of_a_plain_plan(tmp_path):
    kept = tmp_path / "kept.json"
    kept.write_text(json.dumps(_buggy()))
    out = tmp_path / "test_kept.py"
    assert main(["replay", str(kept), "--export-pytest", str(out)]) == 1
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out)],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 1 and "LAYOUT-NO-OVERLAP: tensor 'x' and tensor 'z'" in run.stdout
    kept.write_text(json.dumps(CLEAN))          # the planner fixed: the kept plan now holds
    assert main(["replay", str(kept), "--export-pytest", str(out)]) == 0
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out)],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout
    kept.write_text(json.dumps({**CLEAN, "order": "abc"}))
    assert main(["replay", str(kept)]) == 2     # a malformed plan is bad input, not a failing replay
