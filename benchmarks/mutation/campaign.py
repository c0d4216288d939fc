"""Judging sampled mutants: ``zcspec verify`` on each, then the test suite on verify's survivors.

Every mutant runs in its own copy (sandbox.py) of a pristine copy of the sources, so no file of
the checkout is ever written. Before any mutant, the pristine copy itself must pass both judges
(the baseline): a judge that already fails would "kill" every mutant. The baseline's times set
the default time limits. A mutant's status is ``verify-killed``, ``suite-killed`` (verify's miss)
or ``equivalent`` (neither kills it: probably an equivalent mutant, listed for a reader to check).
"""
from __future__ import annotations

import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs

from .mutator import Mutation
from .runs import Run, run, suite_command, verify_command
from .sandbox import Sandbox

# Default limits: this many times the baseline's seconds, never under MIN_TIMEOUT (the machine is
# shared and --jobs runs several judges at once, so a mutant's run is slower than the baseline).
TIMEOUT_FACTOR = 4.0
MIN_TIMEOUT = 120.0


# The suite runs under the CI's Hypothesis profile (tests/conftest.py): derandomised, so a mutant's
# suite verdict is the same on every run. A HYPOTHESIS_PROFILE already set is kept.
SUITE_ENV = {"HYPOTHESIS_PROFILE": "ci"}


class CampaignError(Exception):
    """The campaign cannot give meaningful verdicts (a baseline judge fails on unmutated code)."""


@attrs.frozen
class Settings:
    jobs: int = 2
    verify_args: tuple[str, ...] = ()
    suite_workers: int = 2
    suite_args: tuple[str, ...] = ()
    verify_timeout: float | None = None   # None: from the baseline
    suite_timeout: float | None = None
    keep: bool = False                    # keep each mutant's copy (for debugging a verdict)

    def __attrs_post_init__(self):
        if self.jobs < 1 or self.suite_workers < 1:
            raise ValueError(f"jobs={self.jobs!r} and suite_workers={self.suite_workers!r} must be >= 1")
        for name in ("verify_timeout", "suite_timeout"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name}={value!r} must be positive seconds")


@attrs.frozen
class Baseline:
    verify: Run | None    # None with --skip-baseline
    suite: Run | None
    verify_timeout: float
    suite_timeout: float


@attrs.frozen
class Outcome:
    mutation: Mutation
    verify: Run
    suite: Run | None     # None when verify killed the mutant (the suite is not run)

    @property
    def status(self) -> str:
        if self.verify.killed:
            return "verify-killed"
        return "suite-killed" if self.suite is not None and self.suite.killed else "equivalent"

    @property
    def seconds(self) -> float:
        return self.verify.seconds + (self.suite.seconds if self.suite else 0.0)

    def to_json(self) -> dict:
        return {"mutation": self.mutation.to_json(), "status": self.status, "seconds": round(self.seconds, 1),
                "verify": self.verify.to_json(), "suite": self.suite.to_json() if self.suite else None}


@attrs.frozen
class Score:
    """verify's share of the non-equivalent mutants: killed / (killed + missed), in percent
    (None when no mutant is killed by either judge)."""

    killed: tuple[Outcome, ...]       # by verify
    missed: tuple[Outcome, ...]       # by the suite only
    equivalent: tuple[Outcome, ...]   # by neither

    @classmethod
    def of(cls, outcomes: list[Outcome]) -> "Score":
        return cls(*(tuple(o for o in outcomes if o.status == s) for s in ("verify-killed", "suite-killed", "equivalent")))

    @property
    def percent(self) -> float | None:
        judged = len(self.killed) + len(self.missed)
        return 100.0 * len(self.killed) / judged if judged else None

    def sentence(self) -> str:
        n = len(self.killed) + len(self.missed)
        pct = self.percent
        return f"verify kills {len(self.killed)} of {n} non-equivalent mutants" + (
            f" = {pct:.1f}%" if pct is not None else " (neither judge killed any: no score)")


def baseline(pristine: Sandbox, settings: Settings, progress: Callable[[str], None]) -> Baseline:
    """Both judges on the unmutated copy; raises CampaignError if either fails."""
    limit = 3600.0
    progress("baseline: zcspec verify on the unmutated copy ...")
    v = run("verify", verify_command(list(settings.verify_args)), pristine.tree, pristine.env(),
            settings.verify_timeout or limit)
    _require_pass(v)
    progress(f"baseline: verify passed in {v.seconds:.1f} s; the suite ...")
    s = run("suite", suite_command(settings.suite_workers, list(settings.suite_args)), pristine.tree,
            _suite_env(pristine), settings.suite_timeout or limit)
    _require_pass(s)
    progress(f"baseline: suite passed in {s.seconds:.1f} s")
    return Baseline(v, s, settings.verify_timeout or max(MIN_TIMEOUT, TIMEOUT_FACTOR * v.seconds),
                    settings.suite_timeout or max(MIN_TIMEOUT, TIMEOUT_FACTOR * s.seconds))


def _require_pass(r: Run) -> None:
    if r.killed:
        raise CampaignError(f"the unmutated copy fails {r.judge} ({r.short()}), so every mutant would count as "
                            f"killed; fix it or pick another commit (--commit). Its output ends:\n{r.tail}")


def judge(mutations: list[Mutation], pristine: Sandbox, workdir: Path, settings: Settings,
          limits: Baseline, progress: Callable[[str], None]) -> list[Outcome]:
    """Verify every mutant (``settings.jobs`` at a time), then run the suite on the survivors."""
    boxes = [_mutant_copy(pristine, m, workdir / f"mutant-{i:03d}") for i, m in enumerate(mutations)]
    n = len(mutations)

    def verify_one(i: int) -> Run:
        r = run("verify", verify_command(list(settings.verify_args)), boxes[i].tree, boxes[i].env(),
                limits.verify_timeout)
        progress(f"[{i + 1}/{n}] verify {mutations[i].label} {mutations[i].operator}: {r.short()} ({r.seconds:.0f} s)")
        if r.killed and not settings.keep:
            shutil.rmtree(boxes[i].tree.parent, ignore_errors=True)
        return r

    with ThreadPoolExecutor(settings.jobs) as pool:
        verdicts = list(pool.map(verify_one, range(n)))
    survivors = [i for i in range(n) if not verdicts[i].killed]
    progress(f"verify killed {n - len(survivors)} of {n}; the suite on the {len(survivors)} survivors ...")

    def suite_one(i: int) -> Run:
        r = run("suite", suite_command(settings.suite_workers, list(settings.suite_args)), boxes[i].tree,
                _suite_env(boxes[i]), limits.suite_timeout)
        progress(f"[{i + 1}/{n}] suite {mutations[i].label} {mutations[i].operator}: {r.short()} ({r.seconds:.0f} s)")
        if not settings.keep:
            shutil.rmtree(boxes[i].tree.parent, ignore_errors=True)
        return r

    with ThreadPoolExecutor(settings.jobs) as pool:
        suites = dict(zip(survivors, pool.map(suite_one, survivors)))
    return [Outcome(m, verdicts[i], suites.get(i)) for i, m in enumerate(mutations)]


def _suite_env(box: Sandbox) -> dict[str, str]:
    return {**SUITE_ENV, **box.env()}


def _mutant_copy(pristine: Sandbox, mutation: Mutation, into: Path) -> Sandbox:
    box = Sandbox.create(pristine.tree, into, commit=None)
    box.write(mutation.path, mutation.apply((box.tree / mutation.path).read_text(encoding="utf-8")))
    return box
