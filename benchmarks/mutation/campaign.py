"""Judging sampled mutants: ``zcspec verify --artefacts`` on each, then the test suite where it decides.

Every mutant runs in its own copy (sandbox.py) of a pristine copy of the sources, so no file of
the checkout is ever written. Before any mutant, the pristine copy itself must pass both judges
(the baseline): a judge that already fails would "kill" every mutant. verify runs twice there, and
its two runs must write identical artefacts (checks/verify_artefacts.py): the evidence that a
mutant's artefacts differ because of the mutant. The baseline's times set the default time limits.

A mutant verify kills is attributed (attribution.py); one it passes has its artefacts compared with
the pristine run's: any difference is verify's miss, whatever the suite says; identical artefacts
make it equivalent on verify's cases, unless the suite (``suite="identical"``, the default: run only
there) kills it, a miss too. score.py says what each status and score means.

The suite runs on a mutant as selection.py chooses: only the tests that ran its line in the baseline's
suite run, which runs under coverage when ``Settings.coverage`` names where to keep its data (the whole
suite where the data cannot tell; selection.py argues why the verdict is the whole suite's).
"""
from __future__ import annotations

import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs

from zcspec.checks.verify_artefacts import first_difference

from .attribution import Kill, read_verdict
from .confirm import confirmed
from .journal import Journal
from .mutator import Mutation
from .runs import Run, run, suite_command, verify_command
from .sandbox import Sandbox
from .score import Outcome
from .selection import BaselineCoverage, load, measure, select

# Default limits: this many times the baseline's seconds, never under MIN_TIMEOUT (the machine is
# shared and --jobs runs several judges at once, so a mutant's run is slower than the baseline).
TIMEOUT_FACTOR = 4.0
MIN_TIMEOUT = 120.0
LIMIT_UNSET = 1800.0    # a judge's limit when no baseline timed it and no option set it
# The suite under coverage (with a context per test and child processes measured) ran 2.8x as long as
# without at 8026fbd (48 min against 17, on a busier machine): its run gets this many times the limit.
COVERAGE_SLOWDOWN = 3.0


# The suite runs under the CI's Hypothesis profile (tests/conftest.py): derandomised, so a mutant's
# suite verdict is the same on every run. A HYPOTHESIS_PROFILE already set is kept.
SUITE_ENV = {"HYPOTHESIS_PROFILE": "ci"}
# verify's artefacts must not depend on str hashing's per-process seed (a set's order): every verify
# run, the pristine ones and the mutants', gets the same one.
VERIFY_ENV = {"PYTHONHASHSEED": "0"}
ARTEFACTS = "artefacts"
SUITE_WHEN = ("identical", "survivors", "none")


class CampaignError(Exception):
    """The campaign cannot give meaningful verdicts (a baseline judge fails on unmutated code). ``evidence``:
    the error names files of the run's temporary folder to look at (then it is kept)."""

    def __init__(self, message: str, *, evidence: bool = False):
        super().__init__(message)
        self.evidence = evidence


@attrs.frozen
class Settings:
    jobs: int = 2
    verify_args: tuple[str, ...] = ()
    suite_workers: int = 2
    suite_args: tuple[str, ...] = ()
    verify_timeout: float | None = None   # None: from the baseline
    suite_timeout: float | None = None
    keep: bool = False                    # keep each mutant's copy (for debugging a verdict)
    suite: str = "identical"              # run the suite on: verify's survivors with identical artefacts,
                                          # all of verify's survivors, or none (SUITE_WHEN)
    twice: bool = True                    # the baseline runs verify twice and compares the artefacts
    coverage: Path | None = None          # where to keep the baseline suite's coverage data, read to select a
                                          # mutant's tests (None: every mutant's suite run is the whole suite)
    commit: str | None = None             # the commit judged: kept data is reused for it only (None: never)

    def __attrs_post_init__(self):
        if self.suite not in SUITE_WHEN:
            raise ValueError(f"suite={self.suite!r} must be one of {SUITE_WHEN}")
        if self.jobs < 1 or self.suite_workers < 1:
            raise ValueError(f"jobs={self.jobs!r} and suite_workers={self.suite_workers!r} must be >= 1")
        for name in ("verify_timeout", "suite_timeout"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name}={value!r} must be positive seconds")


@attrs.frozen
class Baseline:
    verify: Run           # the pristine run whose artefacts every mutant's are compared with
    suite: Run | None     # None with --skip-baseline (then verify runs once)
    verify_timeout: float
    suite_timeout: float
    artefacts: Path | None   # that run's --artefacts folder (None: every mutant's verify is in the journal)
    coverage: BaselineCoverage | None = None   # the suite run's coverage (None: not measured, or not kept)


def baseline(pristine: Sandbox, workdir: Path, settings: Settings, progress: Callable[[str], None], *,
             full: bool = True, journal: Journal | None = None, artefacts: bool = True) -> Baseline:
    """verify on the unmutated copy (twice with ``settings.twice``, the two runs' artefacts compared), then
    the suite (unless not ``full``: then verify once and limits from ``settings`` or LIMIT_UNSET); raises
    CampaignError if a judge fails or the two runs' artefacts differ. A baseline the ``journal`` holds is
    not judged again: only its artefacts are made anew, by one verify run, if ``artefacts`` (a mutant's
    verify is still to come)."""
    recorded = journal.baseline() if journal is not None else None
    if recorded is not None:
        return _recorded_baseline(recorded, pristine, workdir, settings, progress, artefacts)
    limits = _judged_baseline(pristine, workdir, settings, progress, full)
    if journal is not None:
        journal.record_baseline(limits.verify, limits.suite, limits.verify_timeout, limits.suite_timeout)
    return limits


def _recorded_baseline(recorded, pristine: Sandbox, workdir: Path, settings: Settings,
                       progress: Callable[[str], None], artefacts: bool) -> Baseline:
    progress(f"baseline: in the journal (verify passed in {recorded.verify.seconds:.1f} s"
             + (f", suite in {recorded.suite.seconds:.1f} s" if recorded.suite else "") + ")")
    folder = None
    if artefacts:
        progress("baseline: zcspec verify on the unmutated copy again, for its artefacts ...")
        folder = workdir / f"baseline-{ARTEFACTS}-0"
        _require_pass(_verify(pristine, folder, settings, recorded.verify_timeout))
    return Baseline(recorded.verify, recorded.suite, recorded.verify_timeout, recorded.suite_timeout, folder,
                    load(settings.coverage, settings.commit))


def _judged_baseline(pristine: Sandbox, workdir: Path, settings: Settings, progress: Callable[[str], None],
                     full: bool) -> Baseline:
    twice = full and settings.twice
    progress(f"baseline: zcspec verify on the unmutated copy{' (twice, at once)' if twice else ''} ...")
    folders = [workdir / f"baseline-{ARTEFACTS}-{k}" for k in range(2 if twice else 1)]
    limit = settings.verify_timeout or 3600.0
    with ThreadPoolExecutor(len(folders)) as pool:
        runs = list(pool.map(lambda f: _verify(pristine, f, settings, limit), folders))
    for r in runs:
        _require_pass(r)
    if twice and (diff := first_difference(folders[0], folders[1])):
        raise CampaignError(f"two verify runs of the unmutated copy wrote different artefacts ({diff}): "
                            f"identical artefacts would prove nothing; compare {folders[0]} and {folders[1]}",
                            evidence=True)
    v = min(runs, key=lambda r: r.seconds)
    progress(f"baseline: verify passed in {v.seconds:.1f} s" + (", artefacts identical twice" if twice else ""))
    verify_timeout = settings.verify_timeout or max(MIN_TIMEOUT, TIMEOUT_FACTOR * v.seconds)
    if not full:
        return Baseline(v, None, verify_timeout, settings.suite_timeout or LIMIT_UNSET, folders[0])
    progress("baseline: the suite" + (" under coverage" if settings.coverage else "") + " ...")
    s, cov = _baseline_suite(pristine, workdir, settings, settings.suite_timeout or 3600.0)
    _require_pass(s)
    progress(f"baseline: suite passed in {s.seconds:.1f} s" + (f", coverage kept in {cov.data}" if cov else ""))
    return Baseline(v, s, verify_timeout, settings.suite_timeout or max(MIN_TIMEOUT, TIMEOUT_FACTOR * s.seconds),
                    folders[0], cov)


def _baseline_suite(pristine: Sandbox, workdir: Path, settings: Settings,
                    timeout: float) -> tuple[Run, BaselineCoverage | None]:
    """The suite on the unmutated copy, under coverage if ``settings.coverage`` (its data kept there; then
    ``timeout`` is COVERAGE_SLOWDOWN times longer)."""
    if settings.coverage is None:
        return run("suite", suite_command(settings.suite_workers, list(settings.suite_args)), pristine.tree,
                   _suite_env(pristine), timeout), None
    return measure(pristine, workdir, settings.suite_workers, list(settings.suite_args), SUITE_ENV,
                   COVERAGE_SLOWDOWN * timeout, settings.coverage, settings.commit)


def _verify(box: Sandbox, artefacts: Path, settings: Settings, timeout: float) -> Run:
    return run("verify", verify_command(list(settings.verify_args), artefacts), box.tree,
               {**box.env(), **VERIFY_ENV}, timeout)


def _require_pass(r: Run) -> None:
    if r.killed:
        raise CampaignError(f"the unmutated copy fails {r.judge} ({r.short()}), so every mutant would count as "
                            f"killed; fix it or pick another commit (--commit). Its output ends:\n{r.tail}")


def judge(mutations: list[Mutation], pristine: Sandbox, workdir: Path, settings: Settings,
          limits: Baseline, progress: Callable[[str], None], journal: Journal | None = None) -> list[Outcome]:
    """Verify every mutant (``settings.jobs`` at a time) and attribute each kill or compare the artefacts;
    then run the suite where ``settings.suite`` says. Verdicts the ``journal`` holds are taken from it, the
    others recorded in it as they come."""
    boxes: dict[int, Sandbox] = {}
    n = len(mutations)

    def box(i: int) -> Sandbox:   # a mutant's copy, made when a judge first needs it (one thread per mutant)
        if i not in boxes:
            boxes[i] = _mutant_copy(pristine, mutations[i], workdir / f"mutant-{i:03d}")
        return boxes[i]

    def verify_one(i: int) -> tuple[Run, Kill, str | None]:
        recorded = journal.verify(i, mutations[i]) if journal is not None else None
        if recorded is not None:
            progress(f"[{i + 1}/{n}] verify {mutations[i].label} {mutations[i].operator}: {recorded[0].short()} "
                     "(in the journal)")
            return recorded
        folder = box(i).tree.parent / ARTEFACTS
        r = _verify(box(i), folder, settings, limits.verify_timeout)
        kill = Kill.of(r, read_verdict(folder))
        compared = None if r.killed else _compare(limits.artefacts, folder)
        said = kill.short() if r.killed else ("artefacts identical" if compared == "" else compared)
        progress(f"[{i + 1}/{n}] verify {mutations[i].label} {mutations[i].operator}: {r.short()}; {said} "
                 f"({r.seconds:.0f} s)")
        if not settings.keep:
            shutil.rmtree(folder, ignore_errors=True)
        if journal is not None:
            journal.record_verify(i, mutations[i], r, kill, compared)
        return r, kill, compared

    with ThreadPoolExecutor(settings.jobs) as pool:
        verdicts = list(pool.map(verify_one, range(n)))
    chosen = [i for i, (r, _, compared) in enumerate(verdicts) if _runs_suite(settings.suite, r, compared)]
    progress(f"verify killed {sum(v[0].killed for v in verdicts)} of {n}; the suite on {len(chosen)} "
             f"({settings.suite}) ...")
    cov = limits.coverage
    if cov is None and settings.coverage is not None and any(
            journal is None or journal.suite(i, mutations[i]) is None for i in chosen):
        progress("the suite on the unmutated copy under coverage, to select each mutant's tests ...")
        measured, cov = _baseline_suite(pristine, workdir, settings, limits.suite_timeout)
        progress(f"coverage run {measured.short()} in {measured.seconds:.0f} s"
                 + ("" if cov else ": every mutant's suite run is the whole suite"))

    def suite_one(i: int) -> Run:
        recorded = journal.suite(i, mutations[i]) if journal is not None else None
        if recorded is not None:
            progress(f"[{i + 1}/{n}] suite {mutations[i].label} {mutations[i].operator}: {recorded.short()} "
                     "(in the journal)")
            return recorded
        chosen_tests = select(cov, mutations[i], (pristine.tree / mutations[i].path).read_text(encoding="utf-8"))

        def selection() -> Run:
            return run("suite", suite_command(settings.suite_workers, [*settings.suite_args,
                                                                       *chosen_tests.pytest_args(box(i).tree.parent)]),
                       box(i).tree, _suite_env(box(i)), limits.suite_timeout)

        def alone(copy: Sandbox) -> Callable[[str], Run]:
            return lambda test: run("suite", suite_command(1, [*settings.suite_args, test]), copy.tree,
                                    _suite_env(copy), limits.suite_timeout)

        r = confirmed(selection(), alone(box(i)), alone(pristine), selection)
        progress(f"[{i + 1}/{n}] suite {mutations[i].label} {mutations[i].operator} on {chosen_tests.describe()}: "
                 f"{r.short()} ({r.seconds:.0f} s)")
        if journal is not None:
            journal.record_suite(i, mutations[i], r, chosen_tests.to_json())
        return r

    with ThreadPoolExecutor(settings.jobs) as pool:
        suites = dict(zip(chosen, pool.map(suite_one, chosen)))
    if not settings.keep:
        for copy in boxes.values():
            shutil.rmtree(copy.tree.parent, ignore_errors=True)
    return [Outcome(m, *verdicts[i], suites.get(i)) for i, m in enumerate(mutations)]


def _compare(pristine: Path, folder: Path) -> str:
    """"" when the mutant's artefacts are the pristine run's, else where they differ."""
    try:
        return first_difference(pristine, folder)
    except FileNotFoundError as e:
        return f"the run wrote no {Path(e.filename).name}"


def _runs_suite(when: str, r: Run, compared: str | None) -> bool:
    if r.killed or when == "none":
        return False
    return when == "survivors" or compared == ""


def _suite_env(box: Sandbox) -> dict[str, str]:
    return {**SUITE_ENV, **box.env()}


def _mutant_copy(pristine: Sandbox, mutation: Mutation, into: Path) -> Sandbox:
    box = Sandbox.create(pristine.tree, into, commit=None)
    box.write(mutation.path, mutation.apply((box.tree / mutation.path).read_text(encoding="utf-8")))
    return box
