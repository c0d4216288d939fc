"""The Python example in docs/spec-guide.md runs (STYLE.md: examples in docs run as tests)."""
from __future__ import annotations

import os
import re

from zcspec.spec.document import root_dir


def test_guide_example_runs():
    with open(os.path.join(root_dir(), "docs", "spec-guide.md"), encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, "docs/spec-guide.md", "exec"), {})
