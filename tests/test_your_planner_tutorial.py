"""docs/your-planner.md runs: its files are written and its commands run, in order, in a fresh folder.

A block preceded by ``<!-- file: NAME -->`` is written to NAME; one preceded by ``<!-- run -->``
(or ``<!-- run: exit N -->``) is run by bash with ``pipefail`` and must exit 0 (N). The commands run
as a user's would: from outside the checkout, with only what is installed importable. A PYTHONPATH
entry inside the checkout is dropped; one outside it is kept, since that is how a copy of the sources
under test can be what is installed (the mutation benchmark's sandboxes: benchmarks/mutation/sandbox.py),
and the commands must import the zcspec this test imports, not another checkout's.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import zcspec

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "your-planner.md"
STEP = re.compile(r"<!-- (file: (?P<file>\S+)|run(: exit (?P<exit>\d+))?) -->\n```\w*\n(?P<body>.*?)```", re.S)


def steps():
    return [(m["file"], int(m["exit"] or 0), m["body"]) for m in STEP.finditer(DOC.read_text(encoding="utf-8"))]


def test_the_tutorial_has_files_and_commands():
    kinds = [bool(file) for file, _, _ in steps()]
    assert kinds.count(True) >= 4 and kinds.count(False) >= 5


def _outside_checkout(pythonpath: str) -> str:
    return os.pathsep.join(p for p in pythonpath.split(os.pathsep)
                           if p and not Path(p).resolve().is_relative_to(ROOT))


def user_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST")}
    if kept := _outside_checkout(os.environ.get("PYTHONPATH", "")):
        env["PYTHONPATH"] = kept
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def test_the_commands_import_the_zcspec_under_test(tmp_path):
    """A mutation run's baseline failed here: the tutorial's commands imported the editable install's
    checkout, which other work was editing, instead of the sandbox's copy under test."""
    run = subprocess.run([sys.executable, "-c", "import os, zcspec; print(os.path.realpath(zcspec.__file__))"],
                         cwd=tmp_path, env=user_env(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == os.path.realpath(zcspec.__file__)


def test_the_tutorial_runs(tmp_path):
    env = user_env()
    for file, expected, body in steps():
        if file:
            (tmp_path / file).write_text(body, encoding="utf-8")
            continue
        run = subprocess.run(["bash", "-o", "pipefail", "-c", body], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=600)
        assert run.returncode == expected, f"{body}\nexit {run.returncode}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    # The planted bug was shrunk to a small plan (at most 3 tensors), kept, and exported as a test.
    kept = json.loads((tmp_path / "zcspec-failures" / "test_greedy_buggy.py-test_buggy_greedy.json").read_text())
    assert len(kept["tensors"]) <= 3
    assert (tmp_path / "test_kept_plan.py").exists() and (tmp_path / "zcspec-report.xml").exists()
