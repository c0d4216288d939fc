"""The options of the figure scripts that print a second figure: plan_quality.py --planners,
fault_detection.py --real-code, frontend_import.py --summary (docs/memory-planning.md,
docs/fault-detection.md, docs/frontend.md)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _run(script, *args, timeout=300):
    return subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True,
                          timeout=timeout)


def test_each_of_ges_planners_alone():
    out = _run("plan_quality.py", "--planners")
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split() for line in out.stdout.splitlines()[1:]}
    assert len(rows) == 9
    for model, (_, binary, max_block, fm, lb, kept, *rest) in rows.items():
        assert not rest, (model, rest)   # the plan's feature map is the smaller planner's
        assert fm == min(binary, max_block, key=float) and float(lb) <= float(fm)
        assert kept == ("binary" if float(binary) <= float(max_block) else "max-block")


def test_explore_on_the_real_code_finds_nothing():
    out = _run("fault_detection.py", "--real-code", "--budget", "2")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "--seed 0 on the real code" in out.stdout and " 0 counterexamples, 0 crashed campaigns" in out.stdout


def test_the_summary_timing_is_offered():
    out = _run("frontend_import.py", "--help", timeout=120)
    assert out.returncode == 0, out.stderr
    assert "--summary" in out.stdout
