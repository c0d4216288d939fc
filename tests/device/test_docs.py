"""The examples in docs/device.md run."""
import os
import re

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "device.md")


def test_device_doc_examples_run():
    with open(DOC, encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, DOC, "exec"), {})
