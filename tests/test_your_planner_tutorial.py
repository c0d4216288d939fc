"""docs/your-planner.md runs: its files are written and its commands run, in order, in a fresh folder.

A block preceded by ``<!-- file: NAME -->`` is written to NAME; one preceded by ``<!-- run -->``
(or ``<!-- run: exit N -->``) is run by bash with ``pipefail`` and must exit 0 (N). The commands run
as a user's would: from outside the checkout, with only what is installed importable.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "your-planner.md"
STEP = re.compile(r"<!-- (file: (?P<file>\S+)|run(: exit (?P<exit>\d+))?) -->\n```\w*\n(?P<body>.*?)```", re.S)


def steps():
    return [(m["file"], int(m["exit"] or 0), m["body"]) for m in STEP.finditer(DOC.read_text(encoding="utf-8"))]


def test_the_tutorial_has_files_and_commands():
    kinds = [bool(file) for file, _, _ in steps()]
    assert kinds.count(True) >= 4 and kinds.count(False) >= 5


def test_the_tutorial_runs(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST")}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
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
