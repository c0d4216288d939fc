"""benchmarks/kernel_checks_reached.py: the kernel-checks figure of docs/benchmarks.md (docs/checker.md cites it)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "kernel_checks_reached.py"
sys.path.insert(0, str(SCRIPT.parent))
import kernel_checks_reached as kcr  # noqa: E402  (a script, not a package module)


def test_every_raise_fail_of_the_kernels_is_a_site():
    modules = kcr.kernel_modules()
    sites = kcr.find_sites(modules)
    texts = {name: Path(m.__file__).read_text().splitlines() for name, m in modules.items()}
    assert len(sites) > 50
    assert all(texts[s.module][s.line - 1].lstrip().startswith("raise fail(") for s in sites)
    assert kcr.Site("indexing", 85, "pad") in sites


def test_a_planted_check_is_gone_inside_the_block_and_back_after_an_error():
    from zcspec.impl.device.kernels import KERNELS, common
    modules = kcr.kernel_modules()
    site = next(s for s in kcr.find_sites(modules) if s.module == "common" and s.function == "axis")
    original, registry = common.axis, dict(KERNELS)

    class Task:
        name, op_type = "t", "Softmax"

        def attr(self, key, default):
            return 5

    with pytest.raises(RuntimeError, match="inside"):
        with kcr.planted(modules, site):
            assert common.axis is not original and modules["shape"].axis is common.axis
            assert common.axis(Task(), "axis", -1, 2) == 1   # 5 % 2: the range check is gone
            raise RuntimeError("inside")
    assert common.axis is original and modules["shape"].axis is original and KERNELS == registry
    with pytest.raises(Exception, match="out of range"):
        common.axis(Task(), "axis", -1, 2)


def test_one_site_is_caught_with_the_refused_steps_and_not_without():
    out = subprocess.run([sys.executable, str(SCRIPT), "--sites", "indexing.py:85"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "| indexing.py:85 | pad | DEVICE-KERNEL-ORACLE (Pad x" in out.stdout and "| nothing |" in out.stdout
    assert ("1 of 1 kernel checks caught by verify's device cases (0 with the refused oracle steps left out)"
            in out.stdout)
