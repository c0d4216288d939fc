"""``zcspec --version`` prints the one version there is: ``zcspec.__version__`` (api/__init__.py)."""
from __future__ import annotations

import subprocess
import sys

import zcspec


def test_version_prints_the_package_version():
    done = subprocess.run([sys.executable, "-m", "zcspec.checks.cli.main", "--version"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"zcspec {zcspec.__version__}"
    assert done.stderr == ""
