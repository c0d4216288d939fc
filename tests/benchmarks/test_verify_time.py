"""benchmarks/verify_time.py: the script that prints the main job's figures in docs/benchmarks.md."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "verify_time.py"


def test_the_script_imports_and_explains_itself():
    out = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "--examples" in out.stdout and "zcspec verify" in out.stdout
