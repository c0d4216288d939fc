"""The user docs cite GE's own source (file and function), never a bare number of the private fact sheet.

The developers' fact sheet (ge-facts.md, outside the repository) numbers its sections, and the docs
used to cite GE's behaviour by those numbers alone: "(2.5.4)", "(2.5.4, 3.3)", a table column
"| 2.1.2-2.1.4 |", "ge-facts 6.5.4c". A reader of docs/ cannot look such a number up; a citation
such as `block_mem_assigner.cc` `ReuseBlocksByLifeTime` can be followed into GE's repository.

This test fails on any such bare reference in docs/ or README.md, and on any mention of the
internal notes (ge-facts, planning-facts, DESIGN.md, ../shared). Numbers that are not fact-sheet references (versions, figures, sizes,
ratios, opsets) are not caught: the patterns accept only section-shaped numbers (top level 1-12)
in the places a citation sits (parentheses and comma lists, a "GE" table column, after "GE" or
"facts"), and three-level numbers elsewhere unless a tool name (onnx, Python...) precedes them.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Documents exempt from the check (none: every document in docs/ and the README is checked).
EXCLUDED: tuple[str, ...] = ()

# A fact-sheet section: top level 1-12, then one or two levels 1-19 (never a leading zero, so
# "1.04" or "1.0000" is a figure), an optional item letter ("6.5.4c"), an optional range
# ("2.1.2-2.1.4", "6.5.4c-e").
_LEVEL = r"(?:1\d|[1-9])(?!\d)"
_SEC = rf"(?:1[0-2]|[1-9])\.{_LEVEL}(?:\.{_LEVEL})?[a-f]?"
_SEC_RANGE = rf"{_SEC}(?:-(?:{_SEC}|[a-f]))?"
_SEC3 = rf"(?:1[0-2]|[1-9])\.{_LEVEL}\.{_LEVEL}[a-f]?"

FORBIDDEN = re.compile(r"ge-facts|\.\./shared", re.IGNORECASE)
# "facts 6.5.4c", "ge-facts 1.7", "fact sheet 2.3", "§2.4"
AFTER_FACTS = re.compile(r"(?:\bfacts?(?:\s+sheet)?\s*§?\s*\d)|§\s*\d", re.IGNORECASE)
# "(2.5.4)", "(2.5.4, 3.3)", "(E13025, 6.5.4c)", "`DisableZeroCopy`, 6.4.4)", "(GE 7.3.3)", "(2.5.11, "data"..."
IN_LIST = re.compile(rf"(?:\(|[,;]\s*)(?:GE\s+|see\s+)?{_SEC_RANGE}(?=\s*[),;])")
# "GE 7.3.3" anywhere
AFTER_GE = re.compile(rf"\bGE\s+{_SEC_RANGE}(?![\w.])")
# "follow 6.7.1-6.7.3 (...)": a three-level number in prose...
THREE_LEVEL = re.compile(rf"(?<![\w.=<>~^/+-]){_SEC3}(?![\w.])")
# ...unless it is a version: "onnx 1.23.2", "Python 3.11.4", "version 2.1.0"
VERSION_BEFORE = re.compile(
    r"(?:onnx\w*|python|numpy|z3(?:-solver)?|pytest|hypothesis|protobuf|cann|opset|versions?|release|v"
    r"|executorch|litert|iree|(?:apache-)?tvm|jax(?:lib)?|torch)"
    r"\s*[=:]?\s*$",
    re.IGNORECASE,
)
# A table cell that is nothing but section numbers: "2.1.2-2.1.4", "2.5.4, 3.3", "1.1, 1.2, 12"
CELL_REFS = re.compile(rf"{_SEC_RANGE}(?:\s*,\s*(?:{_SEC_RANGE}|\d{{1,2}}))*")
CODE_SPAN = re.compile(r"`[^`]*`")


def _prose_hits(text: str) -> list[str]:
    """The bare references in one line of prose (code spans already blanked)."""
    hits = [m.group(0) for m in FORBIDDEN.finditer(text)]
    hits += [m.group(0) for m in AFTER_FACTS.finditer(text)]
    hits += [m.group(0) for m in IN_LIST.finditer(text)]
    hits += [m.group(0) for m in AFTER_GE.finditer(text)]
    hits += [
        m.group(0)
        for m in THREE_LEVEL.finditer(text)
        if not VERSION_BEFORE.search(text[: m.start()])
    ]
    return hits


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _cell_is_reference(cell: str, column: str) -> bool:
    cell = cell.strip("*").strip()
    if not CELL_REFS.fullmatch(cell):
        return False
    # In a "GE" column any section number is a reference; elsewhere a lone "2.2" may be a
    # figure, so only lists, ranges, three-level numbers and item letters count.
    return column.strip().lower() == "ge" or bool(re.search(r"[,\-]|\d\.\d+\.\d|\d[a-f]\b", cell))


def bare_references(text: str) -> list[tuple[int, str]]:
    """(line number, offending text) for every bare fact-sheet reference in a markdown text."""
    found: list[tuple[int, str]] = []
    lines = text.splitlines()
    in_fence = False
    header: list[str] | None = None
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if FORBIDDEN.search(line):
            found.append((number, FORBIDDEN.search(line).group(0)))
            continue
        if in_fence:
            continue
        prose = CODE_SPAN.sub("CODE", line)
        found += [(number, hit) for hit in _prose_hits(prose)]
        if prose.lstrip().startswith("|"):
            cells = _cells(prose)
            following = lines[number] if number < len(lines) else ""
            if header is None and re.fullmatch(r"\s*\|?[\s|:-]+\|?\s*", following or "x"):
                header = cells
                continue
            if re.fullmatch(r"[\s|:-]+", prose):
                continue
            for index, cell in enumerate(cells):
                column = header[index] if header and index < len(header) else ""
                if _cell_is_reference(cell, column):
                    found.append((number, f"| {cell} |"))
        else:
            header = None
    return list(dict.fromkeys(found))


def documents() -> list[Path]:
    docs = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
    return [doc for doc in docs if doc.relative_to(ROOT).as_posix() not in EXCLUDED]


# The developers' reference notes live outside the repository: a reader cannot follow a citation there.
INTERNAL_NOTES = re.compile(r"ge-facts|planning-facts|DESIGN\.md|\.\./shared", re.IGNORECASE)


def test_docs_cite_no_internal_notes():
    hits = [f"{doc.relative_to(ROOT)}:{number}: {line.strip()}" for doc in documents()
            for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1)
            if INTERNAL_NOTES.search(line)]
    assert not hits, "docs cite internal notes readers do not have:\n" + "\n".join(hits)


def test_docs_cite_ge_source_not_fact_sheet_numbers():
    docs = documents()
    assert len(docs) > 1, "no documents found"
    hits = [
        f"{doc.relative_to(ROOT)}:{number}: {hit}"
        for doc in docs
        for number, hit in bare_references(doc.read_text(encoding="utf-8"))
    ]
    assert not hits, (
        "docs cite the private fact sheet by section number; cite GE's file and function instead:\n"
        + "\n".join(hits)
    )


@pytest.mark.parametrize(
    "text",
    [
        "a memset-cleaned output joins ordinary reuse (2.5.4)",
        "a memset-cleaned output joins ordinary reuse (2.5.4, 3.3)",
        "| two planners | 2.1.2-2.1.4 | `offsets.ge_layout` |",
        "refuses host-placed I/O (see ge-facts 6.5.4c)",
        "as the notes say (ge-facts 1.7)",
        "the slot base (facts 6.5.4c)",
        "refuses host-placed I/O (E13025, 6.5.4c) and makes",
        "directly or through a view: `DisableZeroCopy`, 6.4.4); no task",
        "`buffer + relative offset` (6.5.4c-e, 6.5.6); the same",
        "the refresh bits follow 6.7.1-6.7.3 (`classify.py`).",
        "runtime memory, handed over (GE 7.3.3) |",
        "The block-type conflict rule (2.5.11, \"data\" vs \"concentrate_atomic\") never",
        "zero-copy blocks included (1.1, 1.2, 1.6, 12) |",
        "see §2.4 for the pool",
        "the pool sits in ../shared/reference",
    ],
)
def test_pattern_catches(text):
    assert bare_references(text), text


@pytest.mark.parametrize(
    "text",
    [
        "Pass rate: 86.5% of 577 cases (onnx 1.16's node tests and schemas).",
        "Pass rate on both runtimes (onnx 1.23.2's node tests and schemas).",
        "Install and run the main job (Python >= 3.10; Python 3.11 works).",
        "| resnet50 | 178 | 150.328 | 9.635 | 9.635 | 1.0000 | 9.635 | 1.0000 | optimal |",
        "| 0 | on | 0.24 | 1.97 | **2.2** |",
        "| 3x3, 64->64, 56x56 | 15.1 | 1.9 |",
        "header version 2; runtime v2 and v1",
        "opset_imports=[helper.make_opsetid(\"\", 13)] for opset 13",
        "CP-SAT 1.16x, best-of-greedy-orders 1.24x (1.31x)",
        "median 0.11 s, max 7.62 s (9.5 s at the loose capacity)",
        "(GE r1.11 `graph_mem_assigner.cc` `ReAssignAtomicMemory`)",
        "| 12 | 4 | header length, u32 (64) |",
        "(2 cores shared with other jobs; load average 3.3 at the end)",
        "Growth exponents: GE 1.04, compact 1.06 (n log n over this range: 1.11); both",
        "(D 1.283, J 1.322 times the bound), ratio 1.000 (0.66-1.5 s)",
    ],
)
def test_pattern_spares(text):
    assert not bare_references(text), bare_references(text)
