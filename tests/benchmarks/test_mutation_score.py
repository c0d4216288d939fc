"""The mutation-score benchmark's parts: a seeded mutator, mutants that parse and differ, copies
that are really what runs (benchmarks/mutation_score.py; the campaign itself is the benchmark)."""
from __future__ import annotations

import ast
import hashlib
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchmarks.mutation import mutator
from benchmarks.mutation.campaign import Outcome, Score
from benchmarks.mutation.runs import Run, run
from benchmarks.mutation.sandbox import Sandbox, SandboxError

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def impl_sites():
    return mutator.sites(REPO)


def test_the_sample_is_fixed_by_the_seed(impl_sites):
    assert mutator.sites(REPO) == impl_sites
    first = mutator.sample(impl_sites, 40, 7, REPO)
    assert mutator.sample(impl_sites, 40, 7, REPO) == first
    assert mutator.sample(impl_sites, 40, 8, REPO) != first
    assert len(set(first)) == 40


def _non_ascii(m: mutator.Mutation) -> bool:
    return not (REPO / m.path).read_text(encoding="utf-8").isascii()


def test_every_sampled_mutant_parses_and_differs_from_the_original(impl_sites):
    # Besides a sample, every site of the modules with non-ASCII text: there a byte column (ast's)
    # and a character column differ, and a splice at the wrong one would still parse.
    unicode = [m for m in impl_sites if _non_ascii(m)]
    assert unicode, "no module of impl/ has non-ASCII text any more: pick another way to test columns"
    for m in mutator.sample(impl_sites, 200, 0, REPO) + unicode:
        assert m.path.startswith("impl/") and not m.path.endswith("/errors.py"), m.label
        source = (REPO / m.path).read_text(encoding="utf-8")
        mutated = ast.parse(m.apply(source))
        assert ast.dump(mutated) != ast.dump(ast.parse(source)), m.describe()
        assert ast.dump(mutated) == ast.dump(_expected(source, m)), m.describe()


def _expected(source: str, m: mutator.Mutation) -> ast.Module:
    """The original tree with the one node the mutation names (found here from its line, its text
    and its character column) replaced by the parsed replacement: the splice changed nothing else."""
    tree = ast.parse(source)
    line = source.splitlines()[m.line - 1]
    column = len(source.encode("utf-8")[:m.start].decode("utf-8")) - len("".join(source.splitlines(True)[:m.line - 1]))
    targets = [n for n in ast.walk(tree) if getattr(n, "lineno", None) == m.line
               and len(line.encode("utf-8")[:n.col_offset].decode("utf-8")) == column
               and ast.get_source_segment(source, n) == m.before]
    statement = m.operator in ("drop", "return")  # an Expr statement and its call share start and text
    targets = [n for n in targets if isinstance(n, ast.stmt) == statement]
    assert targets, f"{m.label}: no node with the text {m.before!r} at column {column}"
    target = targets[-1]  # the innermost, where nodes share a start and a text
    new = ast.parse(m.after).body[0] if statement else ast.parse(m.after, mode="eval").body

    class Swap(ast.NodeTransformer):
        def visit(self, node):
            return new if node is target else super().visit(node)

    return Swap().visit(tree)


def test_every_operator_is_sampled(impl_sites):
    assert {m.operator for m in impl_sites} == {"compare", "boolop", "arith", "call", "off-by-one", "constant",
                                                "negate", "drop", "return"}


LEFT_ALONE = '''\
"""Module docstring with 1 < 2."""
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from x import y
log = logging.getLogger(__name__)
TABLE = {"a": 1, "b": 2}
OPS = make(Info("Conv", inputs=(2, 3)))
ALIGN = 32


class Thing:
    """Docstring."""

    def __repr__(self):
        return f"Thing({1 + 1})"


def checked(n: "int" = 3) -> bool:
    """A check."""
    log.debug("n=%d", n + 1)
    print(n - 1)
    if n > 4:
        raise fail(f"n={n + 1} is over {4}", n + 1)
    err = PlanError("n", n + 1)
    return n > 4
'''


def test_docstrings_messages_logging_and_data_are_left_alone():
    found = mutator.file_sites(LEFT_ALONE, "impl/x.py")
    assert {(m.line, m.operator, m.before, m.after) for m in found} == {
        (10, "off-by-one", "32", "(33)"), (10, "off-by-one", "32", "(31)"),
        (20, "off-by-one", "3", "(4)"), (20, "off-by-one", "3", "(2)"),
        (24, "negate", "n > 4", "(not (n > 4))"), (24, "compare", "n > 4", "(n >= 4)"),
        (24, "off-by-one", "4", "(5)"), (24, "off-by-one", "4", "(3)"),
        (25, "drop", 'raise fail(f"n={n + 1} is over {4}", n + 1)', "pass"),
        (27, "return", "return n > 4", "return None"),
        (27, "compare", "n > 4", "(n >= 4)"), (27, "off-by-one", "4", "(5)"), (27, "off-by-one", "4", "(3)"),
    }


def test_an_early_return_is_dropped_a_final_one_only_emptied():
    found = mutator.file_sites("def f(a):\n    if a:\n        return 1\n    return 2\n", "impl/x.py")
    returns = {(m.line, m.after) for m in found if m.operator == "return"}
    assert returns == {(3, "return None"), (3, "pass"), (4, "return None")}


def test_a_mutation_refuses_a_source_it_was_not_found_in():
    m = mutator.file_sites("def f(a):\n    return a < 1\n", "impl/x.py")[0]
    with pytest.raises(ValueError, match="source changed"):
        m.apply("def f(a):\n    return a <= 1\n")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_mutants_copy_is_what_python_imports_not_the_checkout(tmp_path, impl_sites):
    m = next(s for s in impl_sites if s.path == "impl/compiler/memory/lifetimes.py")
    checkout_before = _digest(REPO / m.path)
    box = Sandbox.create(REPO, tmp_path / "m", commit=None)
    box.write(m.path, m.apply((box.tree / m.path).read_text(encoding="utf-8")))
    (box.tree / "impl" / "_mutant_marker.py").write_text("COPY = True\n")
    probe = ("import inspect, zcspec.spec, zcspec.impl, zcspec.checks, zcspec.impl._mutant_marker\n"
             "import zcspec.impl.compiler.memory.lifetimes as lt\n"
             "print(zcspec.spec.__file__, zcspec.impl.__file__, zcspec.checks.__file__, lt.__file__)\n"
             f"assert {m.after!r} in inspect.getsource(lt)\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=box.env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert all(Path(f).is_relative_to(box.tree) for f in done.stdout.split()), done.stdout
    assert _digest(REPO / m.path) == checkout_before
    assert not (REPO / "impl" / "_mutant_marker.py").exists()


def test_pytest_and_its_xdist_workers_import_the_copy(tmp_path):
    box = Sandbox.create(REPO, tmp_path / "m", commit=None)
    (box.tree / "impl" / "_mutant_marker.py").write_text("COPY = True\n")
    (box.tree / "tests" / "test_zz_copy_probe.py").write_text(textwrap.dedent(f"""\
        import pytest, zcspec.impl, zcspec.checks.pytest_plugin as plugin
        @pytest.mark.parametrize("i", range(4))
        def test_copy(i):
            import zcspec.impl._mutant_marker
            assert zcspec.impl.__file__.startswith({str(box.tree)!r})
            assert plugin.__file__.startswith({str(box.tree)!r})
        """))
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider",
                           "tests/test_zz_copy_probe.py"], cwd=box.tree, env=box.env(), capture_output=True, text=True)
    assert done.returncode == 0 and "4 passed" in done.stdout, done.stdout + done.stderr


def test_a_copy_without_the_packages_is_refused(tmp_path):
    (tmp_path / "src" / "spec").mkdir(parents=True)
    with pytest.raises(SandboxError, match="no package folder"):
        Sandbox.create(tmp_path / "src", tmp_path / "m", commit=None)


def test_a_run_past_its_limit_is_killed_with_its_children(tmp_path):
    pid_file = tmp_path / "child.pid"
    spawn = ("import subprocess, sys, time\n"
             "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
             f"open({str(pid_file)!r}, 'w').write(str(c.pid)); time.sleep(60)\n")
    t0 = time.monotonic()
    r = run("suite", [sys.executable, "-c", spawn], tmp_path, {}, timeout=2)
    assert (r.verdict, r.kind) == ("killed", "timeout") and time.monotonic() - t0 < 20
    child = int(pid_file.read_text())
    time.sleep(0.2)
    status = Path(f"/proc/{child}/stat")
    assert not status.exists() or status.read_text().split()[2] == "Z", "the grandchild outlived the time-out"


@pytest.mark.parametrize("code, kind, reason", [
    ("print('VIOLATION MEM-NO-OVERLAP in zoo:x'); raise SystemExit(1)", "violation", "MEM-NO-OVERLAP"),
    ("raise RuntimeError('boom')", "crash", "RuntimeError: boom"),
    ("raise RuntimeError('boom (\\n  in two lines\\n)')", "crash", "RuntimeError: boom ("),
    ("print('CRASH in zoo:x [plan, ge]: KeyError'); print('VIOLATION MEM-A in zoo:y'); raise SystemExit(1)",
     "violation", "MEM-A"),
    ("print('CRASH in zoo:x [plan, ge]: KeyError'); raise SystemExit(1)", "crash", "CRASH in zoo:x [plan, ge]: KeyError"),
    ("raise SystemExit(2)", "bad-input", ""),
    ("import sys; print('Z3 proofs (...): 1/2 proved'); print('  packing [1@0-1/8]: refuted suboptimal  arena 9'); "
     "print('W:onnxruntime warning', file=sys.stderr); raise SystemExit(1)",
     "violation", "packing [1@0-1/8]: refuted suboptimal  arena 9"),
    ("pass", "", ""),
])
def test_verify_verdicts(tmp_path, code, kind, reason):
    r = run("verify", [sys.executable, "-c", code], tmp_path, {}, timeout=30)
    assert (r.kind, r.reason) == (kind, reason)
    assert r.killed == bool(kind)


@pytest.mark.parametrize("code, kind, reason", [
    # pytest -x -n 2 exits 2 after a failed test, as after a collection error: the output tells them apart.
    ("print('FAILED tests/a.py::test_b - assert 0'); raise SystemExit(2)", "violation", "tests/a.py::test_b"),
    ("print('ERROR tests/a.py - ImportError'); raise SystemExit(2)", "crash", "tests/a.py"),
    ("print('FAILED tests/a.py::test_c'); raise SystemExit(1)", "violation", "tests/a.py::test_c"),
])
def test_suite_verdicts(tmp_path, code, kind, reason):
    r = run("suite", [sys.executable, "-c", code], tmp_path, {}, timeout=30)
    assert (r.verdict, r.kind, r.reason) == ("killed", kind, reason)


def _outcome(verify_kills: bool, suite_kills: bool | None) -> Outcome:
    m = mutator.file_sites("def f(a):\n    return a < 1\n", "impl/x.py")[0]

    def judged(judge, killed):
        return Run(judge, "killed" if killed else "survived", "violation" if killed else "", int(killed), 1.0, "", "")
    return Outcome(m, judged("verify", verify_kills), None if suite_kills is None else judged("suite", suite_kills))


def test_the_score_counts_only_mutants_some_judge_kills():
    outcomes = [_outcome(True, None)] * 3 + [_outcome(False, True), _outcome(False, False), _outcome(False, False)]
    score = Score.of(outcomes)
    assert (len(score.killed), len(score.missed), len(score.equivalent)) == (3, 1, 2)
    assert score.sentence() == "verify kills 3 of 4 non-equivalent mutants = 75.0%"
    assert Score.of([_outcome(False, False)]).percent is None


def test_the_script_lists_a_seeded_sample_without_running_anything():
    cmd = [sys.executable, str(REPO / "benchmarks" / "mutation_score.py"), "--list", "--sample", "3", "--seed", "5",
           "--worktree"]
    first, again = (subprocess.run(cmd, capture_output=True, text=True, timeout=120) for _ in range(2))
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0].startswith("mutation score: 3 mutants sampled (seed 5) from ") and len(lines) == 4
    assert again.stdout == first.stdout


def test_module_patterns_restrict_the_sites_and_a_pattern_matching_nothing_is_refused(impl_sites):
    acl = mutator.in_modules(impl_sites, ["impl/runtime/acl.py"])
    assert acl and {m.path for m in acl} == {"impl/runtime/acl.py"}
    packing = mutator.in_modules(impl_sites, ["impl/compiler/memory/packing/*", "impl/runtime/acl.py"])
    assert {m.path for m in packing} > {"impl/runtime/acl.py"} and set(acl) < set(packing)
    assert mutator.in_modules(impl_sites, []) == impl_sites
    with pytest.raises(ValueError, match="--module 'impl/nowhere.py' matches none"):
        mutator.in_modules(impl_sites, ["impl/nowhere.py"])


def test_the_script_lists_a_focused_sample_and_refuses_an_unknown_module():
    cmd = [sys.executable, str(REPO / "benchmarks" / "mutation_score.py"), "--list", "--sample", "4", "--worktree"]
    focused = subprocess.run(cmd + ["--module", "impl/runtime/acl.py"], capture_output=True, text=True, timeout=120)
    assert focused.returncode == 0, focused.stderr
    lines = focused.stdout.splitlines()
    assert "in 1 modules of impl/" in lines[0] and "(--module impl/runtime/acl.py)" in lines[0]
    assert len(lines) == 5 and all(line.split()[0].startswith("impl/runtime/acl.py:") for line in lines[1:])
    bad = subprocess.run(cmd + ["--module", "impl/nowhere.py"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "matches none" in bad.stderr
