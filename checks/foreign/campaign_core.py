"""What every campaign on another compiler shares: the kinds of program, the Hypothesis loop, the finding.

A campaign (checks/foreign/xla_campaign.py, executorch_campaign.py, litert_campaign.py) gives a
Hypothesis strategy of programs and a function that compiles one, reads its plan(s) from the
compiler's own artefact, checks them and compares its result with the oracle. Each program is

- **confirmed**: a claim broken and the result wrong: a real bug, found from the artefact;
- **miss**: the result wrong with every claim holding: a bug the spec does not see;
- **hazard**: a claim broken and the result right: the plan relies on what no claim grants, or
  the claim is too strict;
- **clean**.

:func:`run_campaign` stops at the first confirmed bug or miss, which Hypothesis shrinks to a smallest
program; hazards are counted and the first kept. Given ``bug_class``, shrinking keeps to the first
finding's class: Hypothesis would otherwise slip to a smaller program that fails for another reason.
:func:`write_finding` writes an outcome as a file ``zcspec replay`` re-checks without the compiler
(checks/foreign/finding.py).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Hashable

import attrs
from hypothesis import HealthCheck, given, seed as hseed, settings

from zcspec.checks.foreign.finding import ForeignFinding


@attrs.frozen
class Outcome:
    program: Any                      # the drawn program (to_data, source)
    claims: tuple[str, ...]
    violations: tuple[str, ...]
    max_abs_diff: float
    matches: bool
    artefact: dict

    @property
    def kind(self) -> str:
        if self.claims:
            return "hazard" if self.matches else "confirmed"
        return "clean" if self.matches else "miss"


class _Found(Exception):
    def __init__(self, outcome: Outcome):
        self.outcome = outcome
        super().__init__(outcome.kind)


@attrs.define
class CampaignResult:
    programs: int = 0
    refused: int = 0                  # programs the compiler would not take (None from the runner)
    seconds: float = 0.0
    finding: Outcome | None = None    # the first confirmed bug or miss, shrunk
    clean: int = 0
    hazards: int = 0
    first_hazard: Outcome | None = None
    versions: dict = attrs.Factory(dict)
    bug_class: Hashable = None        # the finding's, when the campaign tells bugs apart
    found_at: int = 0                 # programs run when the finding was first drawn (before shrinking)
    found_seconds: float = 0.0
    other_bugs: int = 0               # failures of another class met while shrinking, not shrunk toward


def run_campaign(programs, run_one: Callable[[Any], Outcome | None], *, examples: int, seed: int, budget: float,
                 progress=lambda s: None, bug_class: Callable[[Outcome], Hashable] | None = None) -> CampaignResult:
    """Draw up to ``examples`` programs from the strategy ``programs`` (stop drawing after ``budget``
    seconds) and run each with ``run_one``; see the module doc. ``bug_class`` names the class of a
    confirmed bug or miss: a smaller program of another class does not replace the finding."""
    result = CampaignResult()
    start = time.monotonic()

    @settings(max_examples=examples, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @hseed(seed)
    @given(programs)
    def probe(program):
        if time.monotonic() - start > budget and result.finding is None:
            return
        outcome = run_one(program)
        result.programs += 1
        if result.programs % 10 == 0:
            progress(f"  {result.programs} programs, {time.monotonic() - start:.0f} s, {result.hazards} hazard(s)")
        if outcome is None:
            result.refused += 1
        elif outcome.kind in ("confirmed", "miss"):
            kind = bug_class(outcome) if bug_class is not None else None
            if result.finding is not None and kind != result.bug_class:
                result.other_bugs += 1
                return
            if result.finding is None:
                result.found_at, result.found_seconds = result.programs, time.monotonic() - start
            result.finding, result.bug_class = outcome, kind
            raise _Found(outcome)
        elif outcome.kind == "hazard":
            result.hazards += 1
            result.first_hazard = result.first_hazard or outcome
        else:
            result.clean += 1

    try:
        probe()
    except _Found as found:     # Hypothesis re-raises the shrunk program's
        result.finding = found.outcome
    result.seconds = time.monotonic() - start
    return result


def write_finding(planner: str, outcome: Outcome, folder: str, versions: dict) -> str:
    Path(folder).mkdir(parents=True, exist_ok=True)
    claims = "-".join(c.lower() for c in outcome.claims)
    path = str(Path(folder) / f"{planner}-{outcome.kind}{'-' + claims if claims else ''}-"
                              f"{len(outcome.program.steps)}-steps.json")
    ForeignFinding(planner, outcome.kind, outcome.program.to_data(), outcome.program.source(), outcome.claims,
                   outcome.violations, outcome.max_abs_diff, outcome.artefact, dict(versions)).save(path)
    return path
