"""benchmarks/mutation/confirm.py: a suite kill by a failed test counts only when the test fails alone on the
mutant and passes alone on the unmutated copy (the 4298fff run counted three failures of the campaign's own
load and of uncollected devices as kills)."""
from __future__ import annotations

from benchmarks.mutation.attribution import Kill
from benchmarks.mutation.confirm import UNCONFIRMED, confirmed
from benchmarks.mutation.mutator import Mutation
from benchmarks.mutation.runs import Run
from benchmarks.mutation.score import Outcome, Score

TEST = "tests/x.py::test_y"


def _run(verdict: str, kind: str = "", reason: str = "") -> Run:
    return Run("suite", verdict, kind, 0 if verdict == "survived" else 1, 1.0, reason, "")


FAILED, PASSED = _run("killed", "violation", TEST), _run("survived")


def _confirm(first: Run, in_mutant: Run, in_pristine: Run, again: Run):
    calls = []

    def alone(where, result):
        def f(test):
            calls.append((where, test))
            return result
        return f

    def rerun():
        calls.append(("again", None))
        return again
    return confirmed(first, alone("mutant", in_mutant), alone("pristine", in_pristine), rerun), calls


def test_a_kill_the_test_repeats_alone_on_the_mutant_only_stands():
    got, calls = _confirm(FAILED, FAILED, PASSED, PASSED)
    assert got is FAILED and calls == [("mutant", TEST), ("pristine", TEST)]


def test_a_failure_the_unmutated_copy_shares_is_retried_then_unconfirmed():
    got, calls = _confirm(FAILED, FAILED, FAILED, FAILED)
    assert got.kind == UNCONFIRMED and not got.killed and ("again", None) in calls


def test_a_failure_of_the_run_alone_is_retried_and_the_retry_stands():
    got, _ = _confirm(FAILED, PASSED, PASSED, PASSED)
    assert got is PASSED


def test_survivals_crashes_and_timeouts_stand_as_they_are():
    for r in (PASSED, _run("killed", "crash", "ImportError"), _run("killed", "timeout", "over 10 s")):
        got, calls = _confirm(r, PASSED, FAILED, PASSED)
        assert got is r and calls == []


def test_an_unconfirmed_suite_leaves_the_mutant_undecided_and_out_of_the_scores():
    m = Mutation("impl/a.py", 1, 0, 1, "compare", "a", "b")
    verify = Run("verify", "survived", "", 0, 1.0, "", "")
    unconfirmed, _ = _confirm(FAILED, PASSED, PASSED, FAILED)
    outcome = Outcome(m, verify, Kill(""), "", unconfirmed)
    assert outcome.status == "undecided"
    score = Score.of([outcome])
    assert score.undecided == (outcome,) and score.overall.n == 0
    assert any(line.startswith("undecided") for line in score.lines())
