"""The hunt: with a variant installed, run checker campaigns from a clean start until the spec
reports a violation, and shrink it.

Detection comes only from the spec's invariants and the Z3 proofs (``zcspec.checks.campaign.run_campaign``
evaluates every applicable invariant on each scenario and runs its proofs, as plain ``zcspec explore``
does: a refuted proof is a ``PROOF-...`` counterexample); the variant never announces itself. A crash of
the code under test is not counted as a detection: it is recorded and the hunt goes on with
the next seed (a checker that only notices crashes has not checked anything).

Campaigns grow, as bounded model checking deepens its bound: campaign k draws graphs of at
most ``NODE_BOUNDS[k]`` compute nodes (the last bound repeats) with ``FIRST_BATCH * 2**k``
examples (at most ``MAX_BATCH``) and seed ``seed + k``, until a counterexample or ``budget``
seconds. Small graphs first make the counterexample small even where Hypothesis's shrinker
would stop at a local minimum. If the first counterexample still has more than ``SMALL_NODES``
nodes, the hunt goes on at ``SMALL_BOUND`` (fresh seeds) within the budget and keeps a smaller
one if it finds one; the reported seconds are those to the counterexample reported. No
Hypothesis database is used, so each hunt starts from nothing.
"""
from __future__ import annotations

import time

import attrs

from zcspec.checks.campaign import EXPLORE_BATCH, run_campaign
from zcspec.checks.counterexample import Counterexample
from zcspec.checks.faults.registry import active
from zcspec.checks.faults.variant import Variant
from zcspec.checks.replay import replay
from zcspec.checks.strategies.scenarios import EXPLORE_MAX_NODES, scenarios

FIRST_BATCH = 25
MAX_BATCH = 400
NODE_BOUNDS = (2, 3, 4, 4, 5, 6)
SMALL_BOUND = 4       # graphs drawn at this bound have at most 6 nodes (1 input, NetOutput)
SMALL_NODES = 6
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


def hunt_plain(variant: Variant, seed: int = 0, *, budget: float = BUDGET) -> Detection:
    """Hunt ``variant`` with exactly plain ``zcspec explore``'s campaign: the default scenario mix at
    ``EXPLORE_MAX_NODES``, batches of ``EXPLORE_BATCH`` examples with seeds ``seed, seed+1, ...``, no
    search space of its own. ``seconds`` is the time until the first counterexample (shrunk) that
    is the variant's: one that still fails on the real code is a finding about the real code, not a
    detection (noted in ``crashes`` as such, and the hunt goes on with the next seed)."""
    strategy = scenarios(max_nodes=EXPLORE_MAX_NODES)
    state = _State()
    start = time.perf_counter()
    k = 0
    while time.perf_counter() - start < budget:
        try:
            with active(variant):
                result = run_campaign(strategy, max_examples=EXPLORE_BATCH, seed=seed + k, found_with=variant.name)
        except Exception as e:  # a crash, not a spec verdict: note it and try the next seed
            state.crashes.append(f"seed {seed + k}: {type(e).__name__}: {str(e)[:200]}")
            k += 1
            continue
        k += 1
        state.cases += result.tally.cases
        cx = result.counterexample
        if cx is None:
            continue
        if replay(cx).still_fails:
            state.crashes.append(f"seed {seed + k - 1}: {cx.invariant} fails on the real code too (not counted)")
            continue
        return Detection(variant.name, time.perf_counter() - start, cx, len(cx.scenario.graph.nodes), state.cases,
                         tuple(state.crashes))
    return Detection(variant.name, time.perf_counter() - start, None, None, state.cases, tuple(state.crashes))


def hunt(variant: Variant, seed: int = 0, *, budget: float = BUDGET, first_batch: int = FIRST_BATCH,
         installed: bool = True) -> Detection:
    """Hunt ``variant`` (installed unless ``installed`` is False: then the real code is hunted with
    the variant's strategy, which must find nothing)."""
    start = time.perf_counter()
    state = _State()
    batch, k = first_batch, 0
    while time.perf_counter() - start < budget:
        bound = NODE_BOUNDS[min(k, len(NODE_BOUNDS) - 1)]
        if state.best is not None:
            if state.best.nodes <= SMALL_NODES:
                break
            bound = SMALL_BOUND  # minimising: only small graphs now
        cx = _campaign(variant, bound, batch, seed + k, installed, state)
        if cx is not None:
            state.offer(cx, time.perf_counter() - start)
        batch, k = min(batch * 2, MAX_BATCH), k + 1
    if state.best is None:
        return Detection(variant.name, time.perf_counter() - start, None, None, state.cases, tuple(state.crashes))
    best = state.best
    return Detection(variant.name, best.seconds, best.cx, best.nodes, state.cases, tuple(state.crashes))


@attrs.define
class _Found:
    cx: Counterexample
    nodes: int
    seconds: float


@attrs.define
class _State:
    cases: int = 0
    crashes: list = attrs.Factory(list)
    best: _Found | None = None

    def offer(self, cx: Counterexample, seconds: float) -> None:
        nodes = len(cx.scenario.graph.nodes)
        if self.best is None or nodes < self.best.nodes:
            self.best = _Found(cx, nodes, seconds)


def _campaign(variant: Variant, bound: int, batch: int, seed: int, installed: bool, state: _State):
    """One campaign; returns its counterexample or None (a crash is noted in ``state``)."""
    strategy = variant.strategy(bound)
    try:
        if installed:
            with active(variant):
                result = run_campaign(strategy, max_examples=batch, seed=seed, found_with=variant.name)
        else:
            result = run_campaign(strategy, max_examples=batch, seed=seed)
    except Exception as e:  # a crash, not a spec verdict: note it and try the next seed
        state.crashes.append(f"seed {seed}: {type(e).__name__}: {str(e)[:200]}")
        return None
    state.cases += result.tally.cases
    return result.counterexample
