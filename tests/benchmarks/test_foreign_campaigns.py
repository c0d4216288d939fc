"""benchmarks/foreign_campaigns.py: one row per campaign, a planner without a Python listed as skipped."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "foreign_campaigns.py"
sys.path.insert(0, str(SCRIPT.parent))
import foreign_campaigns  # noqa: E402  (a script, not a package module)


def _run(*args, **env):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ZCSPEC_") or not k.endswith("_PYTHON")}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300,
                          env={**clean, **env})


def test_without_pythons_every_planner_is_listed_as_skipped():
    out = _run()
    assert out.returncode == 0, out.stderr
    rows = out.stdout.splitlines()[2:]
    assert len(rows) == len(foreign_campaigns.PLANNERS)
    assert all("skipped: no Python" in r for r in rows)
    assert "$ZCSPEC_EXECUTORCH_FIXED_PYTHON" in out.stdout


def test_a_python_without_the_compiler_is_a_failed_row_naming_why():
    if importlib.util.find_spec("jax") is not None:
        pytest.skip("this Python has jax")
    out = _run("--examples", "2", "--budget", "5", ZCSPEC_XLA_PYTHON=sys.executable)
    assert out.returncode == 1
    (xla,) = [r for r in out.stdout.splitlines() if r.startswith("| xla ")]
    assert "failed" in xla and "jax" in xla


def test_a_finding_is_shown_in_one_line():
    from zcspec.checks.foreign.litert_programs import MODELS
    from zcspec.checks.foreign.litert_campaign import LitertProgram
    from zcspec.checks.foreign.step_programs import Step
    from zcspec.checks.foreign.torch_programs import TorchProgram
    fc = next(m for m in MODELS if m.name == "fc-view-read-twice")
    assert foreign_campaigns.shape(LitertProgram(fc)) == \
        "FULLY_CONNECTED → RESHAPE → RESHAPE → ADD → RESHAPE → MUL"
    program = TorchProgram(1, 1, (Step("binary", ("torch.maximum", 2.0)), Step("keep")), ("maximum.default",))
    assert foreign_campaigns.shape(program) == ("binary(torch.maximum, 2.0) → keep; "
                                                "reinplace_extra_ops {maximum.default}")
