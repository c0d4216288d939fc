"""The example in docs/runtime-v1.md runs."""
import os
import re

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "runtime-v1.md")


def test_doc_example_runs():
    text = open(DOC, encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, DOC, "exec"), {})
