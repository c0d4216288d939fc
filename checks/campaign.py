"""Campaigns: drive impl with generated scenarios, check every invariant, shrink failures.

``run_campaign`` runs Hypothesis over a scenario strategy for a budget of
examples (never a wall-clock deadline inside one run, so results do not
depend on machine load), counts per invariant the cases in which it applied
and in which its precondition held (non-vacuity), and turns the first failure
into a shrunk Counterexample. ``explore`` repeats campaigns with fresh seeds
until a time budget runs out.

Each case also gets the Z3 proofs verify gives a zoo case (``checks.proofs.cases``, limited to
``CAMPAIGN_PROOFS``): a refuted proof is a failure like a violated invariant (shrunk, and named
by the proof's pseudo-claim id, e.g. ``PROOF-V1-REFRESH``); an unknown one is counted and listed
in the tally (``Tally.unknown``), never a counterexample: Z3 giving up on one random case says
nothing about the code.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from typing import Callable

import attrs
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed

from zcspec.checks.counterexample import CRASH, PROOF_PREFIX, Counterexample, crash_violation, proof_violation
from zcspec.checks.execution import races
from zcspec.checks.proofs.cases import CLAIMS, claimed_proofs
from zcspec.checks.proofs.z3_layout import PROVED, UNKNOWN
from zcspec.checks.scenario import key_of, notes_of, observe
from zcspec.checks.seeded_draws import seed_only
from zcspec.spec.check import check


def observation_key(case: str, observation, racing: bool = False) -> str:
    """What makes an observation a distinct case: its scenario (``case``, a fingerprint or a zoo
    case's name), the runtime and options it ran with, and the user's buffers it was given. Two
    calls with the same buffers of one loaded model count once; a re-bound call counts again.
    ``racing``: the case's calls race (``execution.races``), so the buffers are told apart by name, role,
    size and placement only: which racing call got which addresses, and which of them shows the unload,
    is the threads' schedule, and a distinct count that followed it changed from run to run."""
    load = getattr(observation, "load", None)
    buffers = getattr(observation, "buffers", None)
    if racing and buffers is not None:
        buffers = tuple((b.name, b.role, b.size, b.placement) for b in buffers)
    what = (type(observation).__name__, repr(getattr(load, "options", None)), repr(buffers))
    return hashlib.sha1(repr((case, what)).encode()).hexdigest()[:16]


@attrs.define
class Tally:
    """Per-invariant counts over all cases: applied, exercised, violated, and the distinct cases
    (``distinct``: invariant id -> the keys of the observations that exercised it); ``notes`` are
    the executions' unjudged outputs and failed valid calls (checks/execution/judge.py).

    ``keyed=False`` is for runs whose observations are distinct by construction (the exhaustive
    mode: every graph once, per strategy and kind): no keys are kept, a distinct count is the
    exercised count, and tallies of shards merge into exactly the tally of the whole run."""

    cases: int = 0
    applied: Counter = attrs.Factory(Counter)
    exercised: Counter = attrs.Factory(Counter)
    violated: Counter = attrs.Factory(Counter)
    distinct: dict = attrs.Factory(dict)
    notes: list = attrs.Factory(list)
    judged: int = 0    # outputs held to an oracle
    proofs: Counter = attrs.Factory(Counter)    # (proof claim id, status) -> proofs
    unknown: list = attrs.Factory(list)         # (case, proof claim id, Z3's reason) of each unknown proof
    keyed: bool = True

    def add(self, reports, keys=None, notes=()) -> list:
        """Count one case: its reports (one per observation), their ``keys`` (``observation_key``;
        default: every report its own case) and its notes; returns the violations."""
        self.cases += 1
        violations = []
        keys = list(keys) if keys is not None else [f"{self.cases}:{i}" for i in range(len(reports))]
        for r, key in zip(reports, keys):
            self.applied.update(r.applied)
            self.exercised.update(r.exercised)
            if self.keyed:
                for i in r.exercised:
                    self.distinct.setdefault(i, set()).add(key)
            self.violated.update({v.invariant_id for v in r.violations})
            violations.extend(r.violations)
        self.notes.extend(notes)
        return violations

    def distinct_count(self, invariant_id: str) -> int:
        if not self.keyed:
            return self.exercised[invariant_id]
        return len(self.distinct.get(invariant_id, ()))

    def merge(self, other: "Tally") -> None:
        if other.keyed != self.keyed:
            raise ValueError("Tally.merge(): a keyed and an unkeyed tally count distinct cases differently")
        self.cases += other.cases
        self.applied.update(other.applied)
        self.exercised.update(other.exercised)
        self.violated.update(other.violated)
        for i, keys in other.distinct.items():
            self.distinct.setdefault(i, set()).update(keys)
        self.notes.extend(other.notes)
        self.judged += other.judged
        self.proofs.update(other.proofs)
        self.unknown.extend(other.unknown)

    def proof_summary(self) -> str:
        """The campaign's proofs by claim: proved / refuted / unknown counts."""
        claims = sorted({c for c, _ in self.proofs})
        return "; ".join(f"{c}: " + ", ".join(f"{self.proofs[(c, st)]} {st}" for st in (PROVED, "refuted", UNKNOWN)
                                             if self.proofs[(c, st)]) for c in claims) or "no proofs"


def check_observations(case: str, observations, tally: Tally, racing: bool = False) -> tuple[list, list]:
    """Check every observation of one case into ``tally``; (reports, failed notes). ``racing``: see
    :func:`observation_key`."""
    reports = [check(o) for o in observations]
    notes = notes_of(observations)
    tally.judged += sum(1 for o in observations for out in getattr(o, "outputs", ())
                        if out.oracle_max_abs_diff is not None)
    tally.add(reports, [observation_key(case, o, racing) for o in observations], notes)
    return reports, [n for n in notes if n.failed]


# The proofs the campaign runs on its cases: all of them, as verify's zoo gets. What they cost the
# campaign: the verify-parts block of docs/checker.md (benchmarks/verify_time.py --parts).
CAMPAIGN_PROOFS = CLAIMS


def prove_case(case: str, scenario, observations, tally: Tally, claims=CAMPAIGN_PROOFS) -> tuple[str, dict] | None:
    """Run ``scenario``'s proofs (those of ``claims``) into ``tally``; the first refuted one as
    (claim id, violation) or None. Unknown proofs are counted and listed, not failures."""
    refuted = None
    for claim, p in claimed_proofs(scenario, observations, claims):
        tally.proofs[(claim, p.status)] += 1
        if p.status == UNKNOWN:
            tally.unknown.append((case, claim, p.reason))
        elif not p.passed and refuted is None:
            refuted = (claim, proof_violation(claim, p))
    return refuted


@attrs.frozen
class CampaignResult:
    tally: Tally
    counterexample: Counterexample | None
    seconds: float


def run_campaign(strategy, *, max_examples: int = 100, seed: int = 0, found_with: str | None = None,
                 on_case: Callable[[int], None] | None = None, shrink: bool = True,
                 proofs: tuple[str, ...] = CAMPAIGN_PROOFS, database=None,
                 on_observed: Callable[[str, object, list, list], None] | None = None,
                 crashes_as_failures: bool = False) -> CampaignResult:
    """``max_examples`` scenarios of ``strategy``: every invariant, and the proofs named by ``proofs``
    (claim ids of ``checks.proofs.cases``; ``()``: none); the first failure shrunk.

    ``database`` (a Hypothesis ``ExampleDatabase``): the failing examples saved there are replayed
    first, and a new failure is saved there shrunk (checks/explore_parallel.py shares one between
    workers); None (the default) keeps nothing between runs. ``on_observed(key, scenario, observations,
    reports)`` is called for each case checked (``zcspec verify --artefacts`` writes them).

    ``crashes_as_failures``: an exception the code under test raises on a case is a failure like a violated
    invariant (shrunk, and the counterexample's invariant is ``CRASH``); by default it propagates."""
    tally = Tally()
    last_failure: list = []

    def prop(scenario):
        try:
            judged(scenario)
        except _Failed:
            raise
        except Exception as e:
            if not crashes_as_failures:
                raise
            last_failure[:] = [scenario, (CRASH, crash_violation(e))]
            raise _Failed(f"{CRASH}: {type(e).__name__}: {e}") from e

    def judged(scenario):
        key, observations = key_of(scenario), observe(scenario)
        reports, _failed = check_observations(key, observations, tally, races(scenario))   # failed: in tally.notes
        if on_observed:
            on_observed(key, scenario, observations, reports)
        violations = [v for r in reports for v in r.violations]
        if violations:
            v = violations[0]
            failure = (v.invariant_id, {"culprit": v.culprit, "message": v.message, "values": _jsonable(v.values)})
        elif last_failure and not last_failure[1][0].startswith(PROOF_PREFIX):
            failure = None   # shrinking an invariant's failure: proofs would only slow it (twice the time)
        else:
            failure = prove_case(key, scenario, observations, tally, proofs)
        if on_case:
            on_case(tally.cases)
        if failure:
            last_failure[:] = [scenario, failure]
            raise _Failed(f"{failure[0]}: {failure[1]['culprit']}: {failure[1]['message']}")

    phases = ([Phase.reuse] if database is not None else []) + \
        ([Phase.generate, Phase.shrink] if shrink else [Phase.generate])
    # derandomize off: ``seed`` alone decides the draws, whatever Hypothesis profile the caller loaded
    # (a test suite's derandomised profile would otherwise replace it with a digest of ``prop``).
    # The settings go on after the seed: ``seed`` replaces the test's database with None.
    test = settings(max_examples=max_examples, deadline=None, database=database, phases=phases, derandomize=False,
                    suppress_health_check=list(HealthCheck), print_blob=False)(hypothesis_seed(seed)(given(strategy)(prop)))
    start = time.perf_counter()
    try:
        with seed_only():   # the draws depend on the seed alone, not on which modules are imported (seeded_draws)
            test()
    except BaseException as e:  # AssertionError, or an ExceptionGroup of several distinct failures
        if not last_failure:
            raise
        del e
    cx = None
    if last_failure:
        scenario, (invariant, violation) = last_failure
        cx = Counterexample(scenario, invariant, violation, found_with=found_with)
    return CampaignResult(tally, cx, time.perf_counter() - start)


def _crash_case(strategy, batch: int, seed: int) -> Counterexample | None:
    """The campaign of ``seed`` again, a crash of the code under test a failure Hypothesis shrinks: its
    ``CRASH`` counterexample, or None when the crash does not come back (or comes from the drawing itself,
    outside the code under test)."""
    try:
        return run_campaign(strategy, max_examples=batch, seed=seed, crashes_as_failures=True).counterexample
    except Exception:
        return None


class _Failed(AssertionError):
    """A case failed a claim, a proof or (``crashes_as_failures``) raised: what Hypothesis shrinks."""


def _jsonable(values: dict) -> dict:
    return json.loads(json.dumps(values, default=str))


EXPLORE_BATCH = 50   # examples per campaign of ``explore`` (a fresh seed each)


def explore(strategy, *, seconds: float, seed: int = 0, batch: int = EXPLORE_BATCH,
            on_batch: Callable[[Tally, float], None] | None = None,
            crashes: list | None = None, seed_step: int = 1, database=None) -> tuple[Tally, list[Counterexample]]:
    """Campaigns with seeds ``seed, seed + seed_step, ...`` until ``seconds`` have passed; every
    failure kept. A campaign whose code under test crashed (not a spec verdict) is recorded in
    ``crashes`` (``"seed N: error"``), run again with the crash as a failure so that its case is shrunk
    into a ``CRASH`` counterexample among those returned, and the next seed runs; without a ``crashes``
    list the crash is raised. ``database``: see ``run_campaign`` (each campaign replays it first)."""
    total, found = Tally(), []
    start = time.perf_counter()
    k = 0
    while time.perf_counter() - start < seconds:
        try:
            result = run_campaign(strategy, max_examples=batch, seed=seed + k * seed_step, database=database)
        except Exception as e:
            if crashes is None:
                raise
            crashes.append(f"seed {seed + k * seed_step}: {type(e).__name__}: {str(e)[:200]}")
            if (cx := _crash_case(strategy, batch, seed + k * seed_step)) is not None:
                found.append(cx)
            k += 1
            continue
        total.merge(result.tally)
        if result.counterexample is not None:
            found.append(result.counterexample)
        k += 1
        if on_batch:
            on_batch(total, time.perf_counter() - start)
    return total, found
