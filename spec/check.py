"""``check(observation)``: evaluate every applicable invariant and report.

The report says which invariants applied to the observation's kind, which of
them the observation actually exercised (their precondition held), and every
violation. A claim that applied but was not exercised is not a pass; callers
that need non-vacuity (the checker's campaigns) look at ``exercised``.
"""
from __future__ import annotations

import json
from typing import Any, Iterable

import attrs

from zcspec.spec.errors import SpecError
from zcspec.spec.invariant import Invariant, Violation
from zcspec.spec.observables import OBSERVATION_KINDS, to_data
from zcspec.spec.registry import all_invariants


@attrs.frozen
class Report:
    """``applied``: the claims that say something about the observation; ``exercised``: those it put
    to the test; ``not_judged``: claim id -> why the observation could not (it lacks the facts the
    claim reads: a plan without ``consumers``); ``violations``: every broken claim."""

    kind: str
    applied: tuple[str, ...]
    exercised: tuple[str, ...]
    violations: tuple[Violation, ...]
    not_judged: dict[str, str] = attrs.field(factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations

    def violated(self) -> tuple[str, ...]:
        """Ids of the invariants with at least one violation, in catalogue order."""
        bad = {v.invariant_id for v in self.violations}
        return tuple(i for i in self.applied if i in bad)

    def to_json(self) -> str:
        return json.dumps({**to_data(self), "ok": self.ok}, indent=2, sort_keys=True, default=str)

    def __str__(self) -> str:
        head = (f"{self.kind}: {len(self.applied)} invariants applied, {len(self.exercised)} exercised, "
                f"{len(self.violations)} violation(s)")
        return "\n".join([head] + [f"  {v}" for v in self.violations]
                         + [f"  not judged: {claim}: {why}" for claim, why in self.not_judged.items()])


def kind_of(observation: Any) -> str:
    """``plan``, ``model_file``, ``load`` or ``execution``; SpecError for anything else."""
    for kind, cls in OBSERVATION_KINDS.items():
        if isinstance(observation, cls):
            return kind
    raise SpecError(f"cannot check a {type(observation).__name__}: expected one of "
                    f"{[c.__name__ for c in OBSERVATION_KINDS.values()]}")


def check(observation: Any, *, invariants: Iterable[Invariant] | None = None) -> Report:
    """Evaluate the invariants (default: the whole catalogue) that apply to ``observation``'s kind.

    An execution observation is also checked against the load invariants of
    the load it carries, since a load is part of what an execution shows.
    """
    kind = kind_of(observation)
    chosen = tuple(all_invariants() if invariants is None else invariants)
    applied, exercised, violations, not_judged = [], [], [], {}
    for inv in chosen:
        target = _target(inv, kind, observation)
        if target is None:
            continue
        applied.append(inv.id)
        if inv.exercised(target):
            exercised.append(inv.id)
        if why := inv.not_judged(target):
            not_judged[inv.id] = why
        violations.extend(inv.violations(target))
    return Report(kind, tuple(applied), tuple(exercised), tuple(violations), not_judged)


def _target(inv: Invariant, kind: str, observation: Any) -> Any:
    if inv.applies_to == kind:
        target = observation
    elif inv.applies_to == "load" and kind == "execution":
        target = observation.load
    else:
        return None
    return target if inv.applies(target) else None
