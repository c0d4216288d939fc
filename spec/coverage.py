"""Which tests and checks cover each invariant: found by scanning the sources for its id.

A test covers an invariant when the id appears in the test function's source
(``tests/**/test_*.py``, functions named ``test_*``); an id that appears in a
test module outside any test function counts for the module. A check covers
it when the id appears anywhere in a module under ``checks/``. Because the
table is computed, not written, it cannot claim coverage that is not there.
"""
from __future__ import annotations

import ast
import os
import re

import attrs


@attrs.frozen
class Coverage:
    tests: tuple[str, ...]    # "tests/spec/test_spec_layout.py::test_name" or a module path
    checks: tuple[str, ...]   # "checks/..../module.py"


def _id_pattern(ids) -> re.Pattern:
    alternatives = "|".join(sorted((re.escape(i) for i in ids), key=len, reverse=True))
    return re.compile(rf"(?<![A-Z0-9-])({alternatives})(?![A-Z0-9-])")


def _python_files(root: str, folder: str):
    base = os.path.join(root, folder)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__pycache__")))
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                yield path, os.path.relpath(path, root).replace(os.sep, "/")


def _test_mentions(text: str, rel: str, pattern: re.Pattern) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    tree = ast.parse(text)
    covered_lines: set[int] = set()
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.name.startswith("test_")]
    for fn in nodes:
        segment = ast.get_source_segment(text, fn) or ""
        decorators = "".join(ast.get_source_segment(text, d) or "" for d in fn.decorator_list)
        covered_lines.update(range(fn.lineno, (fn.end_lineno or fn.lineno) + 1))
        for m in pattern.finditer(decorators + segment):
            found.setdefault(m.group(1), set()).add(f"{rel}::{fn.name}")
    for lineno, line in enumerate(text.splitlines(), 1):
        if lineno not in covered_lines:
            for m in pattern.finditer(line):
                found.setdefault(m.group(1), set()).add(rel)
    return found


def scan(root: str, ids) -> dict[str, Coverage]:
    """Coverage of every id in ``ids`` by tests under ``root/tests`` and checks under ``root/checks``."""
    pattern = _id_pattern(ids)
    tests: dict[str, set[str]] = {i: set() for i in ids}
    checks: dict[str, set[str]] = {i: set() for i in ids}
    for path, rel in _python_files(root, "tests"):
        if not os.path.basename(path).startswith("test_"):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if pattern.search(text):
            for i, where in _test_mentions(text, rel, pattern).items():
                tests[i] |= where
    for path, rel in _python_files(root, "checks"):
        with open(path, encoding="utf-8") as f:
            for m in pattern.finditer(f.read()):
                checks[m.group(1)].add(rel)
    return {i: Coverage(tuple(sorted(tests[i])), tuple(sorted(checks[i]))) for i in ids}
