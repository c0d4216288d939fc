"""docs/ge-deviations.md stays true: every row names tests that exist, and every ported GE case
(tests/ge/*CASES.md) either passes or is named in a row, with the counts the doc states."""
from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ge-deviations.md"
CASE_FILES = sorted((ROOT / "tests" / "ge").glob("*CASES.md"))
STATUSES = ("match", "deviation", "not expressible", "no memory fact")
TEST_REF = re.compile(r"`(tests/[\w/]+\.py)::(\w+)(\[[^\]`]*\])?`")


def _rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
            if re.match(r"\| [A-Z]\d+ \|", line)]


def _cases(path: Path) -> list[dict]:
    """The case table of one CASES file: one dict per GE TEST_F (status, our test)."""
    out = []
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[4] in STATUSES:
            out.append({"ge": cells[1], "test": cells[3].strip("`"), "status": cells[4]})
    return out


def _counts_line(cases: list[dict]) -> str:
    n = Counter(c["status"] for c in cases)
    return (f"Counts: {n['match']} match, {n['deviation']} deviation, {n['not expressible']} not expressible, "
            f"{n['no memory fact']} no memory fact ({len(cases)} `TEST_F`s).")


def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text())
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def _is_strict_xfail(fn: ast.FunctionDef, module: str) -> bool:
    for d in fn.decorator_list:
        src = ast.get_source_segment(module, d) or ""
        if "xfail" in src and "strict=True" in src:
            return True
        if "parametrize" in src:  # strict xfails on some parameters, built in the module
            return "xfail" in module and "strict=True" in module
    return False


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_every_row_names_a_test_that_exists():
    rows = _rows(DOC.read_text())
    assert len(rows) >= 20
    for row in rows:
        refs = TEST_REF.findall(row[-1])
        assert refs, f"row {row[0]} names no test"
        for path, name, _ in refs:
            assert (ROOT / path).is_file(), f"row {row[0]}: {path} does not exist"
            assert name in _functions(ROOT / path), f"row {row[0]}: {path} has no test {name}"


def test_every_test_the_prose_names_exists():
    for path, name, _ in TEST_REF.findall(DOC.read_text()):
        assert name in _functions(ROOT / path), f"{path}::{name}"


@pytest.mark.parametrize("case_file", CASE_FILES, ids=lambda p: p.name)
def test_each_ported_case_passes_or_has_its_row(case_file):
    cases = _cases(case_file)
    assert cases, f"{case_file.name} has no case table"
    named = {(p, n) for p, n, _ in TEST_REF.findall(DOC.read_text())}
    for c in cases:
        if c["status"] not in ("match", "deviation"):
            assert c["test"] in ("", "—"), f"{case_file.name} {c['ge']}: a {c['status']} case has no test"
            continue
        file, _, name = c["test"].partition("::")
        name = name.split("[")[0]
        path = case_file.parent / file
        module = path.read_text()
        fn = _functions(path).get(name)
        assert fn is not None, f"{case_file.name} {c['ge']}: {c['test']} does not exist"
        if c["status"] == "deviation":
            assert _is_strict_xfail(fn, module), f"{c['test']}: a deviation must be a strict xfail"
            rel = str(path.relative_to(ROOT))
            assert (rel, name) in named, f"{case_file.name} {c['ge']}: deviation {c['test']} has no row in {DOC.name}"
        else:
            assert not _is_strict_xfail(fn, module) or "[" in c["test"], f"{c['test']}: a match is a plain test"


@pytest.mark.parametrize("case_file", CASE_FILES, ids=lambda p: p.name)
def test_the_counts_are_those_of_the_tables(case_file):
    line = _counts_line(_cases(case_file))
    assert line in _flat(case_file.read_text()), f"{case_file.name} should say: {line}"
    assert line[len("Counts: "):] in _flat(DOC.read_text()), f"{DOC.name} should state {case_file.name}'s {line}"
