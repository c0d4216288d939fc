"""benchmarks/refresh_proof.py: the script behind the refresh-proof figure (docs/proofs.md)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "refresh_proof.py"


def test_one_model_is_proved_and_timed():
    out = subprocess.run([sys.executable, str(SCRIPT), "squeezenet", "--no-verify"], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if line.startswith("squeezenet"))
    assert row.split()[-1] == "proved" and len(row.split()) == 8
    assert "every proof proved" in out.stdout and "zcspec verify" not in out.stdout
