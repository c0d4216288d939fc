"""benchmarks/plan_traces.py on a folder of small made-up traces (the published ones are not in the
repository): one row per trace with the bound, the arena and the load; MiniMalloc's column only when its
CLI is named; a missing folder or trace is exit code 2 naming it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
# Max-live 12 at steps 1-2 (b0 + b1 + b2); greedy by size reaches it.
TRACE = "id,lower,upper,size\nb0,0,4,4\nb1,1,3,6\nb2,1,2,2\nb3,3,5,8\n"


def _run(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("ZCSPEC_TRACES_DIR", "ZCSPEC_MINIMALLOC")}
    return subprocess.run([sys.executable, str(BENCHMARKS / "plan_traces.py"), *args], capture_output=True,
                          text=True, timeout=120, env=env)


def test_each_trace_gets_a_row_at_its_bound(tmp_path):
    for name in ("somas_resnet50.csv", "iopddl_G_1.csv"):
        (tmp_path / name).write_text(TRACE)
    out = _run("--traces", str(tmp_path), "--time-limit", "5", "somas_resnet50.csv", "iopddl_G_1.csv")
    assert out.returncode == 0, out.stderr
    rows = [line.split("|") for line in out.stdout.splitlines() if line.startswith(("| SOMAS", "| IOPDDL"))]
    assert len(rows) == 2
    for row in rows:
        assert [c.strip() for c in row[2:6]] == ["4", "12", "12", "1.0000"]
        assert "MiniMalloc" not in out.stdout.splitlines()[0]
    assert "2 of 2 traces at the max-live bound" in out.stdout
    assert "cappadokes/idealloc" in out.stdout


def test_a_missing_trace_or_folder_is_exit_code_2(tmp_path):
    out = _run("--traces", str(tmp_path), "iopddl_S_1.csv")
    assert out.returncode == 2 and "iopddl_S_1.csv" in out.stderr
    out = _run()
    assert out.returncode == 2 and "--traces" in out.stderr
