"""benchmarks/exhaustive_faults.py: the seeded-bugs table of docs/checker.md."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "exhaustive_faults.py"


def test_a_seeded_bug_is_found_on_the_first_graph_and_the_real_code_is_clean():
    out = subprocess.run([sys.executable, str(SCRIPT), "--max-nodes", "1", "--variants", "zc-align-32",
                          "atomic-block-reused"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if line.startswith("| `")]
    assert rows[0].startswith("| `zc-align-32` | ascend910b") and "graph 0 (1 compute or view node): LAYOUT-ALIGN" in rows[0]
    assert any("atomic-block-reused` | ascend910b" in r and "not caught" in r for r in rows)
    assert "NOT CLEAN" not in out.stdout
