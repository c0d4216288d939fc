"""Campaigns: drive impl with generated scenarios, check every invariant, shrink failures.

``run_campaign`` runs Hypothesis over a scenario strategy for a budget of
examples (never a wall-clock deadline inside one run, so results do not
depend on machine load), counts per invariant the cases in which it applied
and in which its precondition held (non-vacuity), and turns the first failure
into a shrunk Counterexample. ``explore`` repeats campaigns with fresh seeds
until a time budget runs out.
"""
from __future__ import annotations

import json
import time
from collections import Counter
from typing import Callable

import attrs
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from zcspec.checks.counterexample import Counterexample
from zcspec.checks.scenario import evaluate


@attrs.define
class Tally:
    """Per-invariant counts over all cases: applied, exercised, violated."""

    cases: int = 0
    applied: Counter = attrs.Factory(Counter)
    exercised: Counter = attrs.Factory(Counter)
    violated: Counter = attrs.Factory(Counter)

    def add(self, reports) -> list:
        self.cases += 1
        violations = []
        for r in reports:
            self.applied.update(r.applied)
            self.exercised.update(r.exercised)
            self.violated.update({v.invariant_id for v in r.violations})
            violations.extend(r.violations)
        return violations

    def merge(self, other: "Tally") -> None:
        self.cases += other.cases
        self.applied.update(other.applied)
        self.exercised.update(other.exercised)
        self.violated.update(other.violated)


@attrs.frozen
class CampaignResult:
    tally: Tally
    counterexample: Counterexample | None
    seconds: float


def run_campaign(strategy, *, max_examples: int = 100, seed: int = 0, found_with: str | None = None,
                 on_case: Callable[[int], None] | None = None, shrink: bool = True) -> CampaignResult:
    tally = Tally()
    last_failure: list = []

    def prop(scenario):
        violations = tally.add(evaluate(scenario))
        if on_case:
            on_case(tally.cases)
        if violations:
            last_failure[:] = [scenario, violations]
            raise AssertionError(str(violations[0]))

    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    test = settings(max_examples=max_examples, deadline=None, database=None, phases=phases,
                    suppress_health_check=list(HealthCheck), print_blob=False)(given(strategy)(prop))
    start = time.perf_counter()
    try:
        hypothesis_seed(seed)(test)()
    except BaseException as e:  # AssertionError, or an ExceptionGroup of several distinct failures
        if not last_failure:
            raise
        del e
    cx = None
    if last_failure:
        scenario, violations = last_failure
        v = violations[0]
        cx = Counterexample(scenario, v.invariant_id, {"culprit": v.culprit, "message": v.message,
                                                       "values": _jsonable(v.values)}, found_with=found_with)
    return CampaignResult(tally, cx, time.perf_counter() - start)


def _jsonable(values: dict) -> dict:
    return json.loads(json.dumps(values, default=str))


def explore(strategy, *, seconds: float, seed: int = 0, batch: int = 50,
            on_batch: Callable[[Tally, float], None] | None = None) -> tuple[Tally, list[Counterexample]]:
    """Campaigns with seeds ``seed, seed+1, ...`` until ``seconds`` have passed; every failure kept."""
    total, found = Tally(), []
    start = time.perf_counter()
    k = 0
    while time.perf_counter() - start < seconds:
        result = run_campaign(strategy, max_examples=batch, seed=seed + k)
        total.merge(result.tally)
        if result.counterexample is not None:
            found.append(result.counterexample)
        k += 1
        if on_batch:
            on_batch(total, time.perf_counter() - start)
    return total, found
