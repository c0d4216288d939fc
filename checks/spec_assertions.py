"""What the ``zcspec`` pytest plugin checks: :func:`assert_spec_holds` and its report.

Kept apart from the plugin's hooks (checks/pytest_plugin.py) because it needs the compiler, the zoo
and onnx: the plugin is loaded into every pytest run of an environment where zcspec is installed,
and must not pay for these until a test uses the fixture.

A spec observation given as the subject is checked as it is; a ``PlanObservation`` that breaks a
claim is, with ``save``, written as a plan file (``zcspec replay FILE`` re-checks it), a violation
found on a graph as a counterexample file (``zcspec replay FILE`` re-runs it).
"""
from __future__ import annotations

import os
from typing import Any, Iterable

from zcspec.checks.counterexample import Counterexample
from zcspec.checks.execution import default_runtimes
from zcspec.checks.plan_api import save_plan
from zcspec.checks.scenario import Scenario, evaluate
from zcspec.checks.zoo import load
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.check import check
from zcspec.spec.observables import OBSERVATION_KINDS, PlanObservation
from zcspec.spec.registry import get

KINDS = ("plan", "model_file", "execution")
DEFAULT_KINDS = ("plan", "model_file")


class SpecViolation(AssertionError):
    """The spec does not hold: ``violations`` lists (where, Violation) pairs; the message is the report."""

    def __init__(self, message: str, violations: list):
        super().__init__(message)
        self.violations = violations


def parse_kinds(text: str | Iterable[str]) -> tuple[str, ...]:
    """``"plan,model_file"`` or a sequence of kind names -> a tuple; ValueError naming unknown kinds."""
    kinds = tuple(k.strip() for k in text.split(",") if k.strip()) if isinstance(text, str) else tuple(text)
    if not kinds or set(kinds) - set(KINDS):
        raise ValueError(f"zcspec kinds {text!r}: unknown {sorted(set(kinds) - set(KINDS))}; "
                         f"choose from {','.join(KINDS)}")
    return kinds


def _graph(subject):
    if isinstance(subject, Graph):
        return subject
    if isinstance(subject, (str, os.PathLike)):
        return load(os.fspath(subject))
    return None


def _cases(subject, options, kinds) -> list[tuple[str, Any]]:
    """(where, scenario or observation) for each thing to check."""
    if isinstance(subject, tuple(OBSERVATION_KINDS.values())):
        return [(f"the given {type(subject).__name__}", subject)]
    if isinstance(subject, Scenario):
        return [(_where(subject), subject)]
    graph = _graph(subject)
    if graph is None:
        raise TypeError(f"zcspec: cannot check a {type(subject).__name__}: give a Graph, a model path or zoo name, "
                        f"a Scenario, or a spec observation")
    options = options or CompileOptions()
    cases = []
    for kind in kinds:
        runtime = {}
        if kind == "execution":
            runtime = {"runs": default_runtimes(graph)}
        scenario = Scenario(kind, graph, options, runtime)
        cases.append((_where(scenario), scenario))
    return cases


def _where(s) -> str:
    return f"graph {s.graph.name!r} [{s.kind}, strategy {s.compile.strategy}, soc {s.compile.soc}]"


def _reports(thing, invariants) -> list:
    if isinstance(thing, Scenario):
        return evaluate(thing, None if invariants is None else tuple(invariants))
    chosen = None if invariants is None else [get(i) for i in invariants]
    return [check(thing, invariants=chosen)]


def format_report(found: list) -> str:
    """The failure message: per violation the invariant's id and title, where, the culprit and message,
    the values involved and the statement that was broken."""
    lines = [f"zcspec: {len(found)} violation(s) of the spec"]
    for where, v in found:
        inv = get(v.invariant_id)
        lines += ["", f"{v.invariant_id} ({inv.title}) in {where}", f"  culprit: {v.culprit}",
                  f"  {v.message}"]
        if v.values:
            lines.append(f"  values: {v.values}")
        lines.append(f"  the spec says: {inv.statement}")
    return "\n".join(lines)


def _save(found_cases: list, folder: str) -> list[str]:
    os.makedirs(folder, exist_ok=True)
    paths = []
    for scenario, v in found_cases:
        cx = Counterexample(scenario, v.invariant_id, {"culprit": v.culprit, "message": v.message,
                                                       "values": {k: str(x) for k, x in v.values.items()}},
                            found_with="pytest-plugin")
        path = os.path.join(folder, f"{scenario.graph.name}-{scenario.kind}-{v.invariant_id.lower()}.json")
        cx.save(path)
        paths.append(path)
    return paths


def assert_spec_holds(subject, options=None, *, kinds: Iterable[str] | str = DEFAULT_KINDS,
                      invariants: Iterable[str] | None = None, save: str | None = None) -> list:
    """Check ``subject`` against the spec; raise SpecViolation with a readable report if it does not hold.

    ``subject``: a Graph, a model path / ``zoo:`` / ``builtin:`` name (compiled with
    ``options``, each of ``kinds`` observed), a Scenario, or a spec observation
    (checked as is; ``kinds`` and ``options`` do not apply). ``invariants``: only
    these ids (default: every applicable one). ``save``: a folder for
    counterexample files of violations found on a graph, or the plan file of a PlanObservation that
    breaks a claim. Returns the reports.
    """
    __tracebackhide__ = True
    reports, found, replayable = [], [], []
    for where, thing in _cases(subject, options, parse_kinds(kinds)):
        for report in _reports(thing, invariants):
            reports.append(report)
            found += [(where, v) for v in report.violations]
            if isinstance(thing, Scenario):
                replayable += [(thing, v) for v in report.violations]
    if found:
        message = format_report(found)
        saved = []
        if save and replayable:
            saved += _save(replayable, save)
        if save and isinstance(subject, PlanObservation):
            saved.append(save_plan(subject, save))
        if saved:
            message += "\n\nsaved for zcspec replay: " + ", ".join(saved)
        raise SpecViolation(message, found)
    return reports
