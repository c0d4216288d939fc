"""Which tests judge a mutant: those that ran its line in the baseline's coverage run, else the whole suite.

The suite phase (a mutant verify passes with artefacts identical to the pristine run's) decided
equivalent-or-miss by running the whole suite, 17 minutes a mutant on two cores. At the baseline the
suite runs once under coverage.py with a context per test (pytest-cov ``--cov-context=test``, plus
child_contexts.py's plugin); a mutant then runs only the tests whose context ran its line.

Why that gives the whole suite's verdict: a mutant changes one expression on one line, so a test that
never runs that line runs exactly the code it ran on the pristine copy, and the suite is deterministic
(the suite phase runs under the CI Hypothesis profile, tests/conftest.py: ``derandomize=True``, which
also leaves Hypothesis's example database out; a test whose verdict hung on the clock, the load or the
order xdist hands out tests would be flaky in the whole suite too), so it passes again as it passed at
the baseline. Only the tests that ran the line can fail. What could break "never runs the line" and how
it is closed:

- the line runs at import (module-level tables and definitions, class bodies, decorators, default
  values, a function the module calls to build a table): every test depends on it, whichever test
  happened to import the module first. Such a site (not inside a function body, found from the
  module's AST), a line the empty context (import time, collection) ran, and any line of a module a
  test imported (a module-level statement ran under a test's context, not at collection) take the
  whole suite;
- the line is compiled by numba (``@njit``, ``numba.jit``): coverage never sees it run. A site in a
  function so decorated, or a line no test context ran at all, takes the whole suite;
- the line runs in a child process (CLI tests, forked workers) or once for several tests (a
  ``functools`` cache, a module-scoped fixture): child_contexts.py labels children with the test that
  started them and empties the caches before each test; a fixture's ``|setup``/``|teardown`` context
  selects its whole test file (tests/ has module-scoped fixtures, none wider);
- there is no coverage data, or it is another commit's (or of a working tree): the whole suite.

Not closed: hand-written memo tables (a module-level dict filled on first use) shared by two tests of
one worker; impl/ has none at the time of writing.

``select`` says which (a ``Selection``: the node ids, or none and why the whole suite); the journal keeps
it with the mutant's suite verdict and the progress line prints it.
"""
from __future__ import annotations

import ast
import functools
import json
import shutil
from pathlib import Path

import attrs
import coverage

from . import child_contexts
from .mutator import Mutation
from .runs import Run, run, suite_command
from .sandbox import Sandbox

PLUGIN = "zcspec_mutation_contexts"   # child_contexts.py's name in the coverage run's boot folder
SETUP_PHASES = ("setup", "teardown")
_BOOT = '''\
"""Written by benchmarks/mutation/selection.py: the copy's import hook, then label a test's child process."""
import runpy
runpy.run_path({sandbox_hook!r})
import {plugin}
{plugin}.label_child()
'''
_RC = """\
[run]
data_file = {data}
parallel = true
patch = subprocess, fork, _exit
"""
_JIT_MARKS = ("jit", "numba")


@attrs.frozen
class BaselineCoverage:
    """The baseline's coverage data (``data``, a coverage.py SQLite file) of the copy at ``tree`` at ``commit``."""

    data: Path
    tree: str
    commit: str
    seconds: float


@attrs.frozen
class Selection:
    """The tests a mutant's suite run is given: ``tests`` (node ids, or test files: every test of the file),
    or none and ``why`` the whole suite."""

    tests: tuple[str, ...]
    why: str = ""

    @property
    def whole(self) -> bool:
        return not self.tests

    def describe(self) -> str:
        if self.whole:
            return f"the whole suite ({self.why})"
        files = sum("::" not in t for t in self.tests)
        ids = len(self.tests) - files
        return ", ".join(f"{k} {what}{'s' if k != 1 else ''}" for k, what in ((ids, "test"), (files, "test file")) if k)

    def to_json(self) -> dict:
        return {"tests": list(self.tests), "why": self.why}

    def pytest_args(self, folder: Path) -> list[str]:
        """Arguments naming the selected tests: an ``@file`` pytest reads, one node id a line (ids with
        parametrize brackets or spaces pass untouched); [] for the whole suite."""
        if self.whole:
            return []
        folder.mkdir(parents=True, exist_ok=True)
        listing = folder / "selected-tests.txt"
        listing.write_text("".join(t + "\n" for t in self.tests), encoding="utf-8")
        return [f"@{listing}"]


def whole_suite(why: str) -> Selection:
    return Selection((), why)


def meta_path(data: Path) -> Path:
    return Path(data).with_name(Path(data).name + ".json")


def load(data: Path | None, commit: str | None) -> BaselineCoverage | None:
    """The coverage kept at ``data`` if it was measured on ``commit`` (None: a working tree, never reused)."""
    if data is None or commit is None or not Path(data).is_file():
        return None
    try:
        meta = json.loads(meta_path(data).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    if meta.get("commit") != commit:
        return None
    return BaselineCoverage(Path(data), meta["tree"], commit, meta["seconds"])


def coverage_setup(pristine: Sandbox, folder: Path, data: Path) -> tuple[list[str], dict[str, str]]:
    """The extra pytest arguments and the environment of the suite's coverage run on ``pristine``, writing
    ``data``: impl/ measured with a context per test, child processes labelled (child_contexts.py)."""
    boot = folder / "coverage-boot"
    boot.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(child_contexts.__file__, boot / f"{PLUGIN}.py")
    (boot / "sitecustomize.py").write_text(
        _BOOT.format(sandbox_hook=str(pristine.boot / "sitecustomize.py"), plugin=PLUGIN), encoding="utf-8")
    rc = folder / "coveragerc"
    rc.write_text(_RC.format(data=str(data)), encoding="utf-8")
    env = pristine.env()
    env["PYTHONPATH"] = f"{boot}:{env['PYTHONPATH']}"
    args = ["-p", PLUGIN, f"--cov={pristine.tree / 'impl'}", "--cov-context=test", f"--cov-config={rc}",
            "--cov-report="]
    return args, env


def measure(pristine: Sandbox, folder: Path, workers: int, extra: list[str], env: dict[str, str],
            timeout: float, keep: Path, commit: str | None) -> tuple[Run, BaselineCoverage | None]:
    """Run the suite on ``pristine`` under coverage (``env`` under the coverage run's); a passing run's
    data is moved to ``keep`` (with its meta file beside it) and returned."""
    data = folder / "coverage" / "suite.coverage"
    data.parent.mkdir(parents=True, exist_ok=True)
    args, cov_env = coverage_setup(pristine, folder, data)
    r = run("suite", suite_command(workers, [*extra, *args]), pristine.tree, {**env, **cov_env}, timeout)
    if r.killed or not data.is_file():
        return r, None
    keep = Path(keep)
    keep.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(data, keep)
    kept = BaselineCoverage(keep, str(pristine.tree), commit or "", r.seconds)
    if commit is not None:
        meta_path(keep).write_text(json.dumps({"commit": commit, "tree": kept.tree, "seconds": r.seconds}) + "\n",
                                   encoding="utf-8")
    return r, kept


def select(cov: BaselineCoverage | None, mutation: Mutation, source: str) -> Selection:
    """The tests that ran ``mutation``'s line in ``cov`` (``source``: the pristine module's text), or the
    whole suite and why (see the module's docstring)."""
    if cov is None:
        return whole_suite("no coverage data")
    why, lines = site_of(source, mutation)
    if why:
        return whole_suite(why)
    data = coverage.CoverageData(str(cov.data))
    data.read()
    by_line = data.contexts_by_lineno(str(Path(cov.tree) / mutation.path))
    if any(c.rpartition("|")[0] and c.rpartition("|")[2] != child_contexts.CHILD_PHASE
           for stmt in ast.parse(source).body for c in by_line.get(stmt.lineno, ())):
        # imported inside a test, not at collection: its functions may have run at import for the others
        return whole_suite("the module is first imported inside a test")
    contexts = {c for line in lines for c in by_line.get(line, ())}
    tests: set[str] = set()
    setup_files: set[str] = set()
    for context in contexts:
        test, _, phase = context.rpartition("|")
        if not test:
            return whole_suite("the line runs at import")
        tests.add(test)
        if phase in SETUP_PHASES:
            setup_files.add(test.split("::", 1)[0])
    if not tests:
        return whole_suite("no test ran the line")
    return Selection(tuple(sorted(setup_files | {t for t in tests if t.split("::", 1)[0] not in setup_files})))


NUMBA = "numba compiles the function"
AT_IMPORT = "the site runs at import"


def site_of(source: str, mutation: Mutation) -> tuple[str, range]:
    """Why the site needs the whole suite whatever the data says (``AT_IMPORT``, or ``NUMBA``: inside a
    function numba compiles), or "" and the lines whose contexts select the tests: those of the statement
    holding the site (a compound statement's header only), since a tracer may report a statement that
    spans lines at any of them."""
    tree, starts = _parsed(source)

    def holds(first: ast.AST, last: ast.AST) -> bool:
        return (_offset(starts, first.lineno, first.col_offset) <= mutation.start
                and mutation.end <= _offset(starts, last.end_lineno, last.end_col_offset))

    in_body, statement = False, None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = [node.body] if isinstance(node, ast.Lambda) else node.body
            if holds(body[0], body[-1]):
                if any(mark in ast.get_source_segment(source, d) for d in getattr(node, "decorator_list", ())
                       for mark in _JIT_MARKS):
                    return NUMBA, range(0)
                in_body = True
        if isinstance(node, ast.stmt) and holds(node, node) and (
                statement is None or _offset(starts, node.lineno, node.col_offset)
                >= _offset(starts, statement.lineno, statement.col_offset)):
            statement = node
    if not in_body or statement is None:
        return AT_IMPORT, range(0)
    inner = [b[0].lineno for f in ("body", "orelse", "finalbody", "handlers") if (b := getattr(statement, f, None))]
    return "", range(statement.lineno, max(min(inner), statement.lineno + 1) if inner else statement.end_lineno + 1)


@functools.lru_cache(maxsize=8)
def _parsed(source: str) -> tuple[ast.Module, list[int]]:
    """A module's tree and line offsets, parsed once for all the sites of one module."""
    return ast.parse(source), _line_starts(source)


def _line_starts(source: str) -> list[int]:
    """Byte offset of each line's start (index 0 is line 1); ast's columns are UTF-8 byte offsets."""
    starts, total = [], 0
    for line in source.encode("utf-8").splitlines(keepends=True):
        starts.append(total)
        total += len(line)
    starts.append(total)
    return starts


def _offset(starts: list[int], lineno: int, col: int) -> int:
    return starts[lineno - 1] + col
