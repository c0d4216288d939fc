"""The command outputs docs/foreign-planners.md quotes are what the commands print today.

Each ``$ zcspec import ... --check`` (or ``zcspec check``) in a code block is run from the checkout,
and every line the doc shows under it (``...`` elides) must appear in the real output, stripped
(a long line may be wrapped in the doc). A new claim changes the counts; this test says where."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from zcspec.checks.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
QUOTE = re.compile(r"^\$ zcspec ((?:import|check) [^\n]*)\n((?:(?!\$ |```).*\n)*)", re.M)


def _quotes():
    text = (ROOT / "docs" / "foreign-planners.md").read_text(encoding="utf-8")
    return [(m.group(1), m.group(2)) for m in QUOTE.finditer(text) if " -o " not in m.group(1)]


def test_the_doc_quotes_commands():
    assert len(_quotes()) >= 6


@pytest.mark.parametrize("command, shown", _quotes(), ids=[q[0][:60] for q in _quotes()])
def test_a_quoted_output_is_what_the_command_prints(command, shown, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    main(shlex.split(command))
    out = capsys.readouterr().out
    missing = [line.strip() for line in shown.splitlines() if line.strip() not in ("", "...")
               and line.strip() not in out]
    assert missing == [], f"zcspec {command} no longer prints these lines:\n" + "\n".join(missing)
