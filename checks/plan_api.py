"""The Python entry points for a planner of your own: ``zcspec.check_plan`` and ``zcspec.assert_plan_ok``.

Both take a plan as a file path, the parsed JSON (a dict in the ``zcspec-plan`` format,
docs/plan-format.md) or a :class:`PlanObservation`, read it with the one strict reader
(spec/observables/plan_contract.py: malformed input raises the spec's ``SpecError`` or a
``BadInput`` naming the file and JSON path, as ``zcspec check`` exits 2), and judge it by every
claim that applies (or ``claims``). The result is a :class:`PlanReport`: violations naming tensors,
steps and bytes, the claims applied, exercised and not judged, and each activation arena against
the lower bound and the compact strategy's arena. ``assert_plan_ok`` raises :class:`PlanViolation`
(an AssertionError: pytest shows the report as the failure) and can keep the failing plan in a
folder, from which ``zcspec replay FILE`` re-checks it.
"""
from __future__ import annotations

import hashlib
import os
import re
from typing import Iterable

import attrs

from zcspec.checks.foreign import plan_file
from zcspec.checks.foreign.plan_report import PlanReport, plan_report
from zcspec.spec.capabilities import capabilities
from zcspec.spec.observables.plan import PlanObservation
from zcspec.spec.observables.plan_contract import plan_from_contract
from zcspec.spec.registry import get

__all__ = ["PlanReport", "PlanViolation", "assert_plan_ok", "check_plan", "read_plan", "save_plan"]


class PlanViolation(AssertionError):
    """The plan breaks a claim (or an arena exceeds ``max_ratio``); ``report`` is the PlanReport and
    the message its text (plus where the plan was saved, when it was)."""

    def __init__(self, report: PlanReport, saved: str | None = None):
        self.report, self.saved = report, saved
        note = f"\nplan saved to {saved}; re-check it with: zcspec replay {saved}" if saved else ""
        super().__init__(str(report) + note)


def read_plan(plan) -> tuple[PlanObservation, str]:
    """(the plan, a title) from a path, parsed JSON or a PlanObservation; TypeError for anything else."""
    if isinstance(plan, PlanObservation):
        return plan, "plan"
    if isinstance(plan, dict):
        return plan_from_contract(plan), str(plan.get("program") or "plan")
    if isinstance(plan, (str, os.PathLike)):
        kept = plan_file.read(os.fspath(plan))
        return kept.plan, kept.title
    raise TypeError(f"cannot read a plan from a {type(plan).__name__}: give a file path, the plan's JSON "
                    "as a dict, or a PlanObservation")


def check_plan(plan, *, claims: Iterable[str] | None = None, soc: str | None = None,
               max_ratio: float | None = None, compact: bool = True, title: str | None = None) -> PlanReport:
    """Judge ``plan`` (see the module doc). ``claims``: only these claim ids (default every one that
    applies). ``soc``: judge it as made for this SoC (spec/capabilities.py), whatever it names itself.
    ``max_ratio``: an activation arena above ``max_ratio`` x its lower bound fails the report.
    ``compact=False`` skips packing each arena with the compact strategy (faster on large plans)."""
    observation, default_title = read_plan(plan)
    if soc is not None:
        capabilities(soc)   # an unknown name is bad input naming the known ones
        observation = attrs.evolve(observation, soc=soc)
    chosen = None if claims is None else tuple(get(c) for c in claims)
    if max_ratio is not None and not max_ratio >= 1:
        raise ValueError(f"max_ratio={max_ratio!r} must be at least 1 (an arena is never below its lower bound)")
    return plan_report(observation, title=title or default_title, compact=compact, invariants=chosen,
                       max_ratio=max_ratio)


def assert_plan_ok(plan, *, claims: Iterable[str] | None = None, soc: str | None = None,
                   max_ratio: float | None = None, compact: bool = False, save: str | None = None,
                   title: str | None = None) -> PlanReport:
    """:func:`check_plan`, raising :class:`PlanViolation` when the report is not ok. ``save``: a folder
    in which a failing plan is written as a plan file (``zcspec replay`` re-checks it). Returns the
    report when the plan is ok. ``compact`` defaults to False here: a test asserts claims, not quality."""
    __tracebackhide__ = True
    report = check_plan(plan, claims=claims, soc=soc, max_ratio=max_ratio, compact=compact, title=title)
    if report.ok:
        return report
    raise PlanViolation(report, save_plan(report.plan, save, report.title) if save else None)


def save_plan(plan: PlanObservation, folder: str, title: str = "plan") -> str:
    """Write ``plan`` into ``folder`` as a plan file; returns the path.

    Inside a pytest test the file is named by the test and overwritten by each later failure of the
    same test: Hypothesis runs the shrunk example last, so the file ends up holding the smallest
    failing plan, not one file per shrinking step. Elsewhere it is named by title and content."""
    text = plan_file.to_json(plan_file.ImportedPlan("", "", title, plan))
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    name = _slug(test) if test else f"{_slug(title)}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"
    path = os.path.join(folder, f"{name}.json")
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    return path


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")[-80:] or "plan"
