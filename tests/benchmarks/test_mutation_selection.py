"""The mutation benchmark's test selection (benchmarks/mutation/selection.py): a mutant whose artefacts are
the pristine run's is judged by the tests that ran its line at the baseline, the whole suite where the
coverage data cannot tell; and one campaign end to end on a tiny project whose suite runs for real, under
coverage at the baseline and on the selected tests for each mutant."""
from __future__ import annotations

import json
import re
import sys

import coverage

from benchmarks.mutation import campaign, mutator, selection
from benchmarks.mutation.journal import Identity, Journal
from benchmarks.mutation.runs import Run
from benchmarks.mutation.sandbox import Sandbox

SOURCE = '''\
import numba

TABLE = {"a": 1, "b": 2}


def f(a):
    return a < 1


def g(a):
    return a + 2


def h(a):
    return a - 3


def nonnegative(a):
    return abs(a) >= 0


@numba.njit
def k(a):
    return a * 2


def m(a):
    return (a >
            0)
'''
FILE = "impl/x.py"


def _site(operator: str, line: int) -> mutator.Mutation:
    return next(m for m in mutator.file_sites(SOURCE, FILE) if m.operator == operator and m.line == line)


def _coverage(tmp_path, contexts: dict[str, list[int]], commit: str = "c0ffee") -> selection.BaselineCoverage:
    """Coverage data of a copy at tmp_path/tree where each context ran the lines given, as pytest-cov writes."""
    tree = tmp_path / "tree"
    tmp_path.mkdir(exist_ok=True)
    assert not (tmp_path / "suite.coverage").exists()
    data = coverage.CoverageData(str(tmp_path / "suite.coverage"))
    for context, lines in contexts.items():
        data.set_context(context)
        data.add_lines({str(tree / FILE): lines})
    data.write()
    return selection.BaselineCoverage(tmp_path / "suite.coverage", str(tree), commit, 1.0)


def test_a_line_two_tests_ran_selects_those_two(tmp_path):
    cov = _coverage(tmp_path, {"tests/t.py::test_f[1]|run": [7], "tests/t.py::test_f[2]|run": [7],
                               "tests/t.py::test_g|run": [11], "": [1, 3, 6, 10]})
    chosen = selection.select(cov, _site("compare", 7), SOURCE)
    assert chosen.tests == ("tests/t.py::test_f[1]", "tests/t.py::test_f[2]") and chosen.describe() == "2 tests"


def test_a_fixtures_line_selects_its_whole_test_file(tmp_path):
    """A module-scoped fixture runs in the first test's setup only; the file's other tests use its value."""
    cov = _coverage(tmp_path, {"tests/t.py::test_f[1]|setup": [7], "tests/t.py::test_g|run": [7],
                               "tests/u.py::test_h|run": [7], "tests/v.py::test_k|run": [15]})
    chosen = selection.select(cov, _site("compare", 7), SOURCE)
    assert chosen.tests == ("tests/t.py", "tests/u.py::test_h") and chosen.describe() == "1 test, 1 test file"


def test_a_child_process_line_selects_the_test_that_started_it(tmp_path):
    cov = _coverage(tmp_path, {"tests/cli.py::test_runs_the_cli|child": [11], "tests/t.py::test_g|run": [11]})
    assert selection.select(cov, _site("arith", 11), SOURCE).tests == ("tests/cli.py::test_runs_the_cli",
                                                                      "tests/t.py::test_g")


def test_a_site_on_a_statements_later_line_is_found_by_any_of_its_lines(tmp_path):
    """A tracer may report the two-line return at its first line only."""
    cov = _coverage(tmp_path, {"tests/t.py::test_m|run": [28]})
    assert selection.select(cov, _site("off-by-one", 29), SOURCE).tests == ("tests/t.py::test_m",)


def test_an_import_time_site_takes_the_whole_suite_whatever_the_data_says(tmp_path):
    """The table is built when the module is imported: whichever test imported it first ran the line, and
    every test depends on it."""
    cov = _coverage(tmp_path, {"tests/t.py::test_f[1]|run": [3]})
    chosen = selection.select(cov, _site("table-drop", 3), SOURCE)
    assert chosen.whole and chosen.why == "the site runs at import" and chosen.pytest_args(tmp_path) == []


def test_a_line_the_empty_context_ran_takes_the_whole_suite(tmp_path):
    cov = _coverage(tmp_path, {"": [7], "tests/t.py::test_f[1]|run": [7]})
    assert selection.select(cov, _site("compare", 7), SOURCE).why == "the line runs at import"


def test_a_module_a_test_imported_takes_the_whole_suite(tmp_path):
    """Imported inside one test, not at collection: the functions it calls at import ran for that test only."""
    cov = _coverage(tmp_path, {"tests/t.py::test_f[1]|run": [1, 3, 6, 7]})
    assert selection.select(cov, _site("compare", 7), SOURCE).why == "the module is first imported inside a test"
    child = _coverage(tmp_path / "child", {"tests/t.py::test_f[1]|child": [1, 3, 6, 7]})   # a child imports it afresh
    assert selection.select(child, _site("compare", 7), SOURCE).tests == ("tests/t.py::test_f[1]",)


def test_a_line_no_test_ran_or_numba_compiles_takes_the_whole_suite(tmp_path):
    cov = _coverage(tmp_path, {"tests/t.py::test_f[1]|run": [7]})
    assert selection.select(cov, _site("arith", 15), SOURCE).why == "no test ran the line"
    assert selection.select(cov, _site("off-by-one", 24), SOURCE).why == "numba compiles the function"


def test_missing_or_another_commits_data_takes_the_whole_suite(tmp_path):
    assert selection.select(None, _site("compare", 7), SOURCE).why == "no coverage data"
    assert selection.load(tmp_path / "none.coverage", "c0ffee") is None
    kept = _coverage(tmp_path, {"tests/t.py::test_f[1]|run": [7]})
    selection.meta_path(kept.data).write_text(json.dumps({"commit": "c0ffee", "tree": kept.tree, "seconds": 1.0}))
    assert selection.load(kept.data, "c0ffee") == kept
    assert selection.load(kept.data, "beef00") is None and selection.load(kept.data, None) is None


def test_selected_ids_reach_pytest_through_a_file(tmp_path):
    chosen = selection.Selection(("tests/t.py::test_f[1]", "tests/t.py::test_f[a b]"))
    (arg,) = chosen.pytest_args(tmp_path / "box")
    assert arg.startswith("@") and open(arg[1:]).read().splitlines() == list(chosen.tests)


# A tiny project judged for real: impl/x.py (SOURCE without numba), tests that run its functions (one
# parametrized, one through a child process), the campaign with a stand-in verify whose artefacts never
# change, so every mutant goes to the suite.
TESTS = '''\
import subprocess, sys
import pytest
from zcspec.impl.x import f, g, h, nonnegative


@pytest.mark.parametrize("a", [0, 1])
def test_f(a):
    assert f(a) == (a < 1)


def test_g_in_a_child():
    out = subprocess.run([sys.executable, "-c", "from zcspec.impl.x import g; print(g(1))"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "3"


def test_nonnegative():
    assert nonnegative(3)


def test_nothing_of_x():
    assert True
'''
VERIFY = r'''
import hashlib, pathlib, sys
out = pathlib.Path(sys.argv[sys.argv.index("--artefacts") + 1]); out.mkdir(parents=True)
(out / "cases.tsv").write_text("phase\tcase\tobservations\tviolated\tsha256\nzoo\tzoo:x\t1\t\t0\n")
(out / "DIGESTS").write_text(hashlib.sha256((out / "cases.tsv").read_bytes()).hexdigest() + "  cases.tsv\n")
'''


def _project(tmp_path) -> Sandbox:
    repo = tmp_path / "repo"
    for folder in ("api", "spec", "impl", "checks", "tests"):
        (repo / folder).mkdir(parents=True)
        (repo / folder / "__init__.py").write_text("")
    (repo / "checks" / "pytest_plugin.py").write_text("")   # the installed zcspec's pytest11 entry point
    (repo / FILE).write_text(SOURCE.replace("import numba", "").split("@numba")[0])   # same lines
    (repo / "tests" / "test_x.py").write_text(TESTS)
    return Sandbox.create(repo, tmp_path / "work" / "pristine", commit=None)


def test_the_campaign_runs_only_the_tests_that_ran_each_mutants_line(tmp_path, monkeypatch):
    pristine = _project(tmp_path)
    (tmp_path / "verify.py").write_text(VERIFY)
    monkeypatch.setattr(campaign, "verify_command", lambda extra, artefacts=None: [
        sys.executable, str(tmp_path / "verify.py"), "--artefacts", str(artefacts)])
    work, kept = tmp_path / "work", tmp_path / "out" / "run.coverage"
    journal = Journal.open(tmp_path / "out" / "run.journal.jsonl",
                           Identity("c0ffee", 7, 3, (), (), (), "identical", 2, None, None))
    settings = campaign.Settings(jobs=2, twice=False, coverage=kept, commit="c0ffee")
    lines = []
    limits = campaign.baseline(pristine, work, settings, lines.append, journal=journal)
    assert limits.coverage is not None and selection.load(kept, "c0ffee") == limits.coverage
    resumed = Journal.open(journal.path, journal.identity)   # the coverage is part of the recorded baseline
    assert campaign.baseline(pristine, work, settings, lines.append, journal=resumed,
                             artefacts=False).coverage == limits.coverage
    other = campaign.Settings(jobs=2, twice=False, coverage=kept, commit="beef00")
    assert campaign.baseline(pristine, work, other, lines.append, journal=resumed, artefacts=False).coverage is None
    source = (pristine.tree / FILE).read_text()
    chosen = [next(m for m in mutator.file_sites(source, FILE) if (m.operator, m.line) == site)
              for site in (("compare", 7), ("arith", 11), ("arith", 15), ("table-drop", 3), ("compare", 19))]
    outcomes = campaign.judge(chosen, pristine, work, settings, limits, lines.append, journal)
    assert [o.status for o in outcomes] == ["missed", "missed", "equivalent", "equivalent", "equivalent"]
    # pytest ran what was selected: one test for the survivor at line 19, all five for the whole suite
    assert re.search(r"^1 passed", outcomes[4].suite.tail, re.M) and re.search(r"^5 passed", outcomes[2].suite.tail, re.M)
    records = [json.loads(r) for r in (tmp_path / "out" / "run.journal.jsonl").read_text().splitlines()]
    given = {r["mutation"]["line"]: r["selection"] for r in records if r.get("kind") == "suite"}
    assert given == {7: {"tests": ["tests/test_x.py::test_f[0]", "tests/test_x.py::test_f[1]"], "why": ""},
                     11: {"tests": ["tests/test_x.py::test_g_in_a_child"], "why": ""},
                     15: {"tests": [], "why": "no test ran the line"},
                     3: {"tests": [], "why": "the site runs at import"},
                     19: {"tests": ["tests/test_x.py::test_nonnegative"], "why": ""}}
    assert any("suite impl/x.py:7 compare on 2 tests: killed (violation: tests/test_x.py::test_f" in s
               for s in lines)


def test_a_resumed_run_without_the_baselines_coverage_measures_it_before_the_suite_phase(tmp_path, monkeypatch):
    """A journal from before the coverage was kept (or whose data was removed): the suite's verdicts still
    to come get their selection from a coverage run made then, on the unmutated copy."""
    pristine = _project(tmp_path)
    (tmp_path / "verify.py").write_text(VERIFY)
    monkeypatch.setattr(campaign, "verify_command", lambda extra, artefacts=None: [
        sys.executable, str(tmp_path / "verify.py"), "--artefacts", str(artefacts)])
    real_run, suites = campaign.run, []

    def run(judge, cmd, cwd, env, timeout):   # the mutants' suite runs are only recorded
        if judge == "suite":
            suites.append(cmd)
            return Run("suite", "survived", "", 0, 0.1, "", "")
        return real_run(judge, cmd, cwd, env, timeout)

    monkeypatch.setattr(campaign, "run", run)
    journal = Journal.open(tmp_path / "out" / "run.journal.jsonl",
                           Identity("c0ffee", 7, 1, (), (), (), "identical", 2, None, None))
    journal.record_baseline(Run("verify", "survived", "", 0, 1.0, "", ""), Run("suite", "survived", "", 0, 9.0, "", ""),
                            120.0, 600.0)
    kept = tmp_path / "out" / "run.coverage"
    settings = campaign.Settings(jobs=1, coverage=kept, commit="c0ffee", keep=True)   # keep: the listing stays
    lines = []
    limits = campaign.baseline(pristine, tmp_path / "work", settings, lines.append, journal=journal)
    assert limits.coverage is None
    source = (pristine.tree / FILE).read_text()
    chosen = [next(m for m in mutator.file_sites(source, FILE) if (m.operator, m.line) == ("compare", 7))]
    campaign.judge(chosen, pristine, tmp_path / "work", settings, limits, lines.append, journal)
    assert selection.load(kept, "c0ffee") is not None
    (cmd,) = suites
    listing = next(a for a in cmd if a.startswith("@"))
    assert open(listing[1:]).read().split() == ["tests/test_x.py::test_f[0]", "tests/test_x.py::test_f[1]"]
