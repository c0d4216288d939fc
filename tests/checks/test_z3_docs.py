"""The examples in docs/proofs.md run (STYLE.md: examples in docs run as tests)."""
from __future__ import annotations

import pathlib
import re

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "proofs.md"


def test_python_examples_in_docs_run():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "docs/proofs.md lost its example"
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {})
