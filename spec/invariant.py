"""An invariant: one reviewable claim about an observable, and the predicate that checks it.

An :class:`Invariant` is data: a stable ``id`` (``LAYOUT-NO-OVERLAP``), a
one-line ``title``, a ``statement`` an engineer can review, the ``rationale``,
the GE source it comes from, what it ``applies_to`` (``plan``, ``model_file``, ``device``,
``load``, ``execution``, ``input_file`` or ``api_call``), its ``concern`` (the spec module it lives in) and
a pure ``predicate`` that yields :class:`Violation` s naming the culprit
(tensor, block, task slot or buffer). ``precondition`` says whether an
observation actually exercises the claim, so a checker can tell a claim that
held from one that was never put to the test (non-vacuity).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Literal

import attrs

AppliesTo = Literal["plan", "model_file", "load", "execution", "device", "input_file", "api_call"]
APPLIES_TO = ("plan", "model_file", "load", "execution", "device", "input_file", "api_call")
_ID = re.compile(r"^[A-Z][A-Z0-9]*(-[A-Z0-9]+)+$")


@attrs.frozen
class Violation:
    """One broken claim: which invariant, the culprit it names, a readable message, and the values involved."""

    invariant_id: str
    culprit: str
    message: str
    values: dict[str, Any] = attrs.field(factory=dict)

    def __str__(self) -> str:
        return f"{self.invariant_id}: {self.culprit}: {self.message}"


def violation(culprit: str, message: str, **values: Any) -> Violation:
    """A violation for the invariant being evaluated (:meth:`Invariant.violations` fills in the id)."""
    return Violation("", str(culprit), message, values)


def _check_id(_inst, _attr, value: str) -> None:
    if not _ID.match(value):
        raise ValueError(f"invariant id {value!r} must look like AREA-WORD[-WORD...] in capitals, e.g. LAYOUT-NO-OVERLAP")


@attrs.frozen
class Invariant:
    """A declarative claim; see the module doc. ``predicate(obs)`` and ``precondition(obs)`` are pure."""

    id: str = attrs.field(validator=_check_id)
    title: str
    statement: str
    rationale: str
    ge_source: str
    applies_to: AppliesTo = attrs.field(validator=attrs.validators.in_(APPLIES_TO))
    concern: str
    predicate: Callable[[Any], Iterable[Violation]] = attrs.field(repr=False)
    precondition: Callable[[Any], bool] | None = attrs.field(default=None, repr=False)
    # A claim about one of GE's own rules (its granularities, its zero-copy region, its continuous
    # groups): it applies only to plans in GE's terms (PlanObservation.ge_shaped), not to a plan in
    # another planner's arenas.
    ge_only: bool = False
    # Optional facts of the observation (field names) the claim judges: when it gives none of them,
    # the claim is "not judged" (the plan gives no consumers, say), never counted as exercised.
    needs: tuple[str, ...] = ()

    def not_judged(self, observation: Any) -> str | None:
        """Why ``observation`` cannot put this claim to the test (it lacks every fact in ``needs``), or None."""
        if not self.needs or any(getattr(observation, fact, None) for fact in self.needs):
            return None
        return f"the {type(observation).__name__.removesuffix('Observation').lower()} gives no " + \
            " or ".join(self.needs)

    def applies(self, observation: Any) -> bool:
        """Whether this claim says anything about ``observation`` (a GE-only claim: only about GE's plans)."""
        return not self.ge_only or getattr(observation, "ge_shaped", True)

    def violations(self, observation: Any) -> tuple[Violation, ...]:
        """Every violation of this claim in ``observation``, each carrying this invariant's id."""
        if not self.applies(observation):
            return ()
        return tuple(attrs.evolve(v, invariant_id=self.id) for v in self.predicate(observation))

    def exercised(self, observation: Any) -> bool:
        """Whether ``observation`` puts this claim to the test (True when there is no precondition)."""
        if not self.applies(observation) or self.not_judged(observation):
            return False
        return True if self.precondition is None else bool(self.precondition(observation))
