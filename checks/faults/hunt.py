"""The hunt: with a variant installed, run checker campaigns from a clean start until the spec
reports a violation, and shrink it.

Detection comes only from the spec's invariants (``checks.campaign.run_campaign`` evaluates
every applicable invariant on each scenario); the variant never announces itself. A crash of
the code under test is not counted as a detection: it is recorded and the hunt goes on with
the next seed (a checker that only notices crashes has not checked anything).

Campaigns grow, as bounded model checking deepens its bound: campaign k draws graphs of at
most ``NODE_BOUNDS[k]`` compute nodes (the last bound repeats) with ``FIRST_BATCH * 2**k``
examples (at most ``MAX_BATCH``) and seed ``seed + k``, until a counterexample or ``budget``
seconds. Small graphs first make the counterexample small even where Hypothesis's shrinker
would stop at a local minimum. No Hypothesis database is used, so each hunt starts from nothing.
"""
from __future__ import annotations

import time

import attrs

from checks.campaign import run_campaign
from checks.counterexample import Counterexample
from checks.faults.registry import active
from checks.faults.variant import Variant

FIRST_BATCH = 25
MAX_BATCH = 400
NODE_BOUNDS = (2, 3, 4, 6)
BUDGET = 120.0


@attrs.frozen
class Detection:
    """The outcome of one hunt: ``counterexample`` is None when the budget ran out first."""

    variant: str
    seconds: float
    counterexample: Counterexample | None
    nodes: int | None
    cases: int
    crashes: tuple[str, ...] = ()

    @property
    def detected(self) -> bool:
        return self.counterexample is not None

    @property
    def invariant(self) -> str | None:
        return self.counterexample.invariant if self.counterexample else None


def hunt(variant: Variant, seed: int = 0, *, budget: float = BUDGET, first_batch: int = FIRST_BATCH,
         installed: bool = True) -> Detection:
    """Hunt ``variant`` (installed unless ``installed`` is False: then the real code is hunted with
    the variant's strategy, which must find nothing)."""
    start = time.perf_counter()
    cases, crashes, batch, k = 0, [], first_batch, 0
    while time.perf_counter() - start < budget:
        strategy = variant.strategy(NODE_BOUNDS[min(k, len(NODE_BOUNDS) - 1)])
        try:
            if installed:
                with active(variant):
                    result = run_campaign(strategy, max_examples=batch, seed=seed + k, found_with=variant.name)
            else:
                result = run_campaign(strategy, max_examples=batch, seed=seed + k)
        except Exception as e:  # a crash, not a spec verdict: note it and try the next seed
            crashes.append(f"seed {seed + k}: {type(e).__name__}: {str(e)[:200]}")
            result = None
        if result is not None:
            cases += result.tally.cases
            if result.counterexample is not None:
                cx = result.counterexample
                return Detection(variant.name, time.perf_counter() - start, cx, len(cx.scenario.graph.nodes),
                                 cases, tuple(crashes))
        batch, k = min(batch * 2, MAX_BATCH), k + 1
    return Detection(variant.name, time.perf_counter() - start, None, None, cases, tuple(crashes))
