"""docs/SPEC.md (and its HTML page and pictures) must be what `zcspec spec` renders now, and cover everything."""
from __future__ import annotations

import os

from zcspec.spec.document import MARKDOWN, render_all, root_dir
from zcspec.spec.registry import all_invariants

ROOT = root_dir()
FILES = render_all(ROOT)


def _on_disk(rel: str) -> str | None:
    path = os.path.join(ROOT, rel)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_spec_document_is_current():
    stale = sorted(rel for rel, text in FILES.items() if _on_disk(rel) != text)
    assert not stale, f"stale generated files {stale}: run `zcspec spec` and commit the result"


def test_coverage_table_shows_no_invariant_without_a_check():
    text = FILES[MARKDOWN]
    assert "without a test or example" not in text and "**none**" not in text
    for inv in all_invariants():
        assert f"### {inv.id} " in text


def test_no_stray_pictures_are_left_behind():
    folder = os.path.join(ROOT, "docs", "spec")
    expected = {os.path.basename(rel) for rel in FILES if rel.startswith("docs/spec/")}
    assert set(os.listdir(folder)) <= expected | {".gitkeep"}
