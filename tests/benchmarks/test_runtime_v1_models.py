"""benchmarks/runtime_v1_models.py: the script behind the runtime-v1-models figure (docs/runtime-v1.md)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "runtime_v1_models.py"


def test_zero_copy_copies_nothing_and_the_copy_path_copies_the_io():
    out = subprocess.run([sys.executable, str(SCRIPT), "squeezenet"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    on, off = (line.split() for line in out.stdout.splitlines() if line.startswith("squeezenet"))
    assert on[1] == "on" and on[2:5] == ["0", "0", "0"] and on[5].split("/")[0] == on[5].split("/")[1] != "0"
    assert off[1] == "off" and off[4] == off[6] and off[5] == "0/0"
    assert "2 runs" in out.stdout and "every output within" in out.stdout
