"""The spec observes artefacts, not code. Nothing under spec/ may import impl/ (or checks/)."""
from __future__ import annotations

import ast
import os

from zcspec.spec.document import root_dir


def test_spec_imports_nothing_from_impl_or_checks():
    offenders = []
    for dirpath, _, files in os.walk(os.path.join(root_dir(), "spec")):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                offenders += [f"{path}: {m}" for m in mods
                              if m.split(".")[:2] in (["zcspec", "impl"], ["zcspec", "checks"])
                              or m.split(".")[0] in ("impl", "checks")]
    assert offenders == []
