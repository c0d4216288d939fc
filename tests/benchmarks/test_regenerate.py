"""benchmarks/regenerate.py: the one command that reruns the scripts behind docs/ and rewrites their blocks."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "regenerate.py"
sys.path.insert(0, str(SCRIPT.parent))
import regenerate  # noqa: E402  (a script, not a package module)


def test_every_block_in_docs_has_a_script_and_every_figure_a_block():
    out = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert regenerate.check(regenerate.DOCS) == []


def test_a_block_is_rewritten_with_the_command_and_its_output_and_nothing_else_changes(tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text(textwrap.dedent("""\
        # Title
        Prose that stays.
        <!-- figures: echo -->
        old figure 1.23
        <!-- /figures -->
        More prose.
        <!-- figures: echo -->
        a second copy
        <!-- /figures -->
        """))
    fig = regenerate.Figure("echo", ("-c", "print('| a | b |'); print('| 1 | 2 |')"), 0.1)
    body, _ = regenerate.produce(fig)
    assert body.startswith("`python -c") and body.endswith("| a | b |\n| 1 | 2 |")
    doc.write_text(regenerate.rewrite(doc.read_text(), "echo", body, str(doc)))
    text = doc.read_text()
    assert "old figure" not in text and "a second copy" not in text and text.count("\n| 1 | 2 |\n") == 2
    assert text.startswith("# Title\nProse that stays.\n<!-- figures: echo -->\n`python -c")
    assert "<!-- /figures -->\nMore prose.\n" in text
    assert regenerate.check(tmp_path, (fig,)) == ["figure 'echo': -c does not exist"]


@pytest.mark.parametrize("text, message", [
    ("<!-- figures: a -->\nx\n", "a.md:1: block 'a' is never closed"),
    ("x\n<!-- /figures -->\n", "a.md:2: <!-- /figures --> closes no block"),
    ("<!-- figures: a -->\n<!-- figures: b -->\n", "a.md:2: block 'b' opens inside block 'a'"),
])
def test_malformed_blocks_name_the_file_and_line(tmp_path, text, message):
    (tmp_path / "a.md").write_text(text)
    with pytest.raises(regenerate.DocError, match=message):
        regenerate.doc_blocks(tmp_path)
    out = subprocess.run([sys.executable, str(SCRIPT), "--check", "--docs", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and message in out.stderr


def test_an_unregistered_block_and_an_unknown_name_are_refused(tmp_path):
    (tmp_path / "a.md").write_text("<!-- figures: nobody -->\n<!-- /figures -->\n")
    assert any("'nobody' has no entry" in p for p in regenerate.check(tmp_path))
    out = subprocess.run([sys.executable, str(SCRIPT), "no-such-figure"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "no-such-figure" in out.stderr


def test_sync_copies_a_body_into_its_empty_copies_and_refuses_two_different_ones(tmp_path):
    (tmp_path / "a.md").write_text("<!-- figures: x -->\nrun 1\n<!-- /figures -->\n")
    (tmp_path / "b.md").write_text("intro\n<!-- figures: x -->\n<!-- /figures -->\nend\n")
    assert regenerate.sync(tmp_path) == ["x"]
    assert (tmp_path / "b.md").read_text() == "intro\n<!-- figures: x -->\nrun 1\n<!-- /figures -->\nend\n"
    assert regenerate.sync(tmp_path) == []
    (tmp_path / "b.md").write_text("<!-- figures: x -->\nrun 2\n<!-- /figures -->\n")
    with pytest.raises(regenerate.DocError, match="block 'x' differs"):
        regenerate.sync(tmp_path)


def test_a_figure_whose_script_exits_1_below_its_target_is_written_only_if_allowed():
    """mutation_score.py exits 1 when verify's score misses the target: the figure is still its output."""
    below = "import sys; print('score 83.3% < 90%'); sys.exit(1)"
    body, _ = regenerate.produce(regenerate.Figure("t", ("-c", below), 0.1, printed=(0, 1)))
    assert body.endswith("score 83.3% < 90%")
    with pytest.raises(RuntimeError, match="exited 1"):
        regenerate.produce(regenerate.Figure("t", ("-c", below), 0.1))
    with pytest.raises(RuntimeError, match="exited 1"):   # exit 1 with nothing printed is a failure
        regenerate.produce(regenerate.Figure("t", ("-c", "import sys; sys.exit(1)"), 0.1, printed=(0, 1)))


def test_the_stamp_names_the_commit_at_the_start_and_the_peak_load_during_the_run(monkeypatch):
    """A mutation-score run of 100 minutes was stamped with the commit made while it ran, and with the
    load of an idle start and end although the machine was loaded throughout."""
    commits = iter(["abc1234", "def5678"])
    monkeypatch.setattr(regenerate, "_commit", lambda: next(commits))
    loads = iter([(1.0, 0, 0), (9.0, 0, 0)])
    monkeypatch.setattr(regenerate.os, "getloadavg", lambda: next(loads, (2.0, 0, 0)))
    body, _ = regenerate.produce(regenerate.Figure("t", ("-c", "print(1)"), 0.1))
    head = body.splitlines()[0]
    assert "printed this at abc1234," in head
    assert "load average 1.0 before, 9.0 at most during, 2.0 after" in head


def test_a_figure_may_need_several_variables_and_is_skipped_while_one_is_missing(tmp_path, capsys, monkeypatch):
    fig = regenerate.Figure("t", ("-c", "import sys; print(sys.argv[1:])", "{A_DIR}", "{B_DIR}"), 0.1,
                            needs="A_DIR B_DIR")
    body, _ = regenerate.produce(fig, {"A_DIR": "/x", "B_DIR": "/y"})
    assert body.startswith("`python -c import sys; print(sys.argv[1:]) $A_DIR $B_DIR`") and "['/x', '/y']" in body
    (tmp_path / "a.md").write_text("<!-- figures: t -->\n<!-- /figures -->\n")
    monkeypatch.setattr(regenerate, "FIGURES", (fig,))
    monkeypatch.delenv("A_DIR", raising=False)
    monkeypatch.setenv("B_DIR", "/y")
    assert regenerate.main(["t", "--docs", str(tmp_path)]) == 0
    assert "skipped: t (needs $A_DIR)" in capsys.readouterr().out


def test_a_figures_progress_on_stderr_reaches_the_terminal_while_it_runs(capfd):
    """A mutation-score run of two hours showed nothing but its header: regenerate captured the script's
    stderr along with its stdout. stdout is still the block; stderr now passes through."""
    script = "import sys; print('progress', 1, file=sys.stderr, flush=True); print('the figure')"
    body, _ = regenerate.produce(regenerate.Figure("t", ("-c", script), 0.1))
    assert body.endswith("\n\nthe figure") and "progress 1" not in body
    assert "progress 1" in capfd.readouterr().err
