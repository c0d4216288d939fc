"""benchmarks/exhaustive_size.py: the script behind the exhaustive-size figure (docs/checker.md)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "exhaustive_size.py"


def test_small_counts_checks_and_estimates():
    out = subprocess.run([sys.executable, str(SCRIPT), "--count-max-nodes", "2", "--check-max-nodes", "1",
                          "--execution-max-nodes", "1"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line.split()[1:5] for line in out.stdout.splitlines() if line[:2].strip().isdigit()}
    assert rows["1"] == ["10", "12", "22", "29"] and rows["2"] == ["288", "581", "906", "1,868"]
    assert "N=1: 22 graphs, 88 observations" in out.stdout and "N=1: 22 graphs, 220 observations" in out.stdout
    assert out.stdout.count("N=2: 906 graphs would take about") == 2 and "(estimate, not run)" in out.stdout
