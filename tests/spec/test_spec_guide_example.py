"""The Python example in docs/spec-guide.md runs (STYLE.md: examples in docs run as tests)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

from zcspec.spec.document import root_dir


def test_guide_example_runs(tmp_path):
    """Run as a user would: from outside the checkout, so only installed names import (``from spec
    import check`` once passed here because the checkout was on sys.path, and failed for users)."""
    with open(os.path.join(root_dir(), "docs", "spec-guide.md"), encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    assert blocks
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for code in blocks:
        run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
