"""The Python examples in docs/runtime-v2.md run."""
from __future__ import annotations

import os
import re

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "runtime-v2.md")


def test_python_examples_run():
    with open(DOC, encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, DOC, "exec"), {})  # noqa: S102 - our own documentation
