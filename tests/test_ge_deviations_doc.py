"""docs/ge-deviations.md stays true: every row names tests or cases that exist, and every ported GE case
(tests/ge/*CASES.md, written in the catalogue checks/cases/ge) either matches or is a recorded deviation
named in a row, with the counts the doc states.

A ported case is a record of zcspec.checks.cases.ge (status, deviation row, reason); tests/ge runs each
under pytest (a match as a plain test, a deviation as a strict xfail) and ``zcspec verify`` runs them too.
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

from zcspec.checks.cases.ge.all import CASES

from tests.helpers.ge_cases import params

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ge-deviations.md"
CASE_FILES = sorted((ROOT / "tests" / "ge").glob("*CASES.md"))
STATUSES = ("match", "deviation", "not expressible", "no memory fact")
TEST_REF = re.compile(r"`((?:tests|checks)/[\w/]+\.py)::(\w+)(\[[^\]`]*\])?`")
BY_SOURCE = {c.source: c for c in CASES}


def _rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
            if re.match(r"\| [A-Z]\d+ \|", line)]


def _cases(path: Path) -> list[dict]:
    """The case table of one CASES file: one dict per GE TEST_F (GE file, TEST_F, status, our case)."""
    out = []
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[4] in STATUSES:
            out.append({"file": cells[0], "ge": cells[1].strip("`"), "test": cells[3].strip("`"), "status": cells[4]})
    return out


def _counts_line(cases: list[dict]) -> str:
    n = Counter(c["status"] for c in cases)
    return (f"Counts: {n['match']} match, {n['deviation']} deviation, {n['not expressible']} not expressible, "
            f"{n['no memory fact']} no memory fact ({len(cases)} `TEST_F`s).")


def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text())
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def _records(ref: str) -> list:
    """The catalogue records a table cell names: ``checks/cases/ge/m.py::f[param]`` one, ``...::f`` every
    parameter set of ``f``."""
    if "[" in ref:
        return [BY_SOURCE[ref]] if ref in BY_SOURCE else []
    return [c for c in CASES if c.source.split("[")[0] == ref]


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
            assert name in _functions(ROOT / path), f"row {row[0]}: {path} has no test or case {name}"


def test_every_test_the_prose_names_exists():
    for path, name, _ in TEST_REF.findall(DOC.read_text()):
        assert name in _functions(ROOT / path), f"{path}::{name}"


def test_each_recorded_deviation_is_named_in_its_row():
    """A deviation record's row is a row of the doc, and that row names the case."""
    rows = {row[0]: row for row in _rows(DOC.read_text())}
    for case in CASES:
        if case.status != "deviation":
            continue
        assert case.row in rows, f"{case.key}: deviation row {case.row} is not a row of {DOC.name}"
        named = {f"{p}::{n}" for p, n, _ in TEST_REF.findall(rows[case.row][-1])}
        assert case.source.split("[")[0] in named, f"{case.key}: row {case.row} of {DOC.name} does not name it"


def test_deviations_are_strict_xfails_and_matches_plain_tests():
    """tests/ge runs every record: a deviation as a strict xfail with its reason and exception, a match
    with no mark; every case module has its test file."""
    for module in sorted({c.module for c in CASES}):
        test_file = ROOT / "tests" / "ge" / f"test_{module}_cases.py"
        assert f'params("{module}")' in test_file.read_text(), f"{test_file.name} does not run {module}'s cases"
        for p in params(module):
            (case,) = p.values
            marks = [m for m in p.marks if m.name == "xfail"]
            if case.status == "match":
                assert not marks, f"{case.key}: a match is a plain test"
            else:
                (mark,) = marks
                assert mark.kwargs == {"strict": True, "raises": case.raises, "reason": case.reason}, case.key


@pytest.mark.parametrize("case_file", CASE_FILES, ids=lambda p: p.name)
def test_each_ported_case_passes_or_has_its_row(case_file):
    cases = _cases(case_file)
    assert cases, f"{case_file.name} has no case table"
    named = {(p, n) for p, n, _ in TEST_REF.findall(DOC.read_text())}
    for c in cases:
        if c["status"] not in ("match", "deviation"):
            assert c["test"] in ("", "—"), f"{case_file.name} {c['ge']}: a {c['status']} case has no test"
            continue
        records = _records(c["test"])
        assert records, f"{case_file.name} {c['ge']}: {c['test']} is no case of the catalogue"
        for r in records:
            assert r.status == c["status"], f"{c['test']}: the table says {c['status']}, the catalogue {r.status}"
            assert (r.ge_file, r.ge_test) == (c["file"], c["ge"]), \
                f"{c['test']}: the catalogue names {r.ge_file} {r.ge_test}, the table {c['file']} {c['ge']}"
        if c["status"] == "deviation":
            path, name = c["test"].split("[")[0].split("::")
            assert (path, name) in named, f"{case_file.name} {c['ge']}: deviation {c['test']} has no row in {DOC.name}"


def test_every_catalogue_case_has_a_row_in_a_case_table():
    tabled = {c["test"] for f in CASE_FILES for c in _cases(f)}
    for case in CASES:
        assert case.source in tabled or case.source.split("[")[0] in tabled, f"{case.key} is in no CASES table"


@pytest.mark.parametrize("case_file", CASE_FILES, ids=lambda p: p.name)
def test_the_counts_are_those_of_the_tables(case_file):
    line = _counts_line(_cases(case_file))
    assert line in _flat(case_file.read_text()), f"{case_file.name} should say: {line}"
    assert line[len("Counts: "):] in _flat(DOC.read_text()), f"{DOC.name} should state {case_file.name}'s {line}"
