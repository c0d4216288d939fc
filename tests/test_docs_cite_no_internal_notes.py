"""The documentation cites GE's own files and functions, never the project's internal notes.

The reference notes (ge-facts.md, planning-facts.md, DESIGN.md, under ../shared) live outside
the repository, so a reader of docs/ or README.md cannot follow a citation into them.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = re.compile(r"ge-facts|planning-facts|DESIGN\.md|\.\./shared", re.IGNORECASE)


def documents() -> list[Path]:
    return sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]


def test_docs_cite_no_internal_notes():
    docs = documents()
    assert len(docs) > 1, "no documents found"
    hits = [
        f"{doc.relative_to(ROOT)}:{number}: {line.strip()}"
        for doc in docs
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1)
        if FORBIDDEN.search(line)
    ]
    assert not hits, "docs cite internal notes readers do not have:\n" + "\n".join(hits)
