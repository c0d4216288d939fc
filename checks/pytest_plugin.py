"""The ``zcspec`` pytest plugin: check your own graphs, plans and runs against the spec in your suite.

Installed with zcspec (entry point ``pytest11: zcspec``), so any suite gets:

- the fixture ``zcspec_check``: ``zcspec_check(subject, options=None, *, kinds=None, invariants=None)``
  compiles ``subject`` (a Graph, an .onnx or graph .json path, ``zoo:NAME`` or
  ``builtin:NAME``) with ``options`` (a CompileOptions; default options), observes
  the chosen artefacts, checks every applicable invariant and fails the test with
  a report naming each violated invariant, its culprit and its statement. A spec
  observation (a plan exported by your own planner, say) or a Scenario is checked
  as it is. It returns the spec's reports, so a test can also ask what was exercised.
- ``assert_spec_holds(subject, ...)``: the same check as a plain function, for
  code that has no fixture at hand (kinds default to ``plan`` and ``model_file``).
- ``--zcspec-kinds plan,model_file,execution``: the artefacts the fixture checks
  for the whole session; ``@pytest.mark.zcspec(kinds=(...))`` overrides it for
  one test; a ``kinds=`` argument overrides both.
- ``--zcspec-save DIR``: write each violation found on a graph as a
  counterexample file (``zcspec replay FILE`` re-runs it).

Failures raise ``SpecViolation`` (an AssertionError), so pytest shows the report
as the test's failure message.
"""
from __future__ import annotations

import os
from typing import Any, Iterable

import pytest

from zcspec.checks.counterexample import Counterexample
from zcspec.checks.execution import default_runtimes
from zcspec.checks.scenario import Scenario, evaluate
from zcspec.checks.zoo import load
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.check import check
from zcspec.spec.observables import OBSERVATION_KINDS
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
    counterexample files of violations found on a graph. Returns the reports.
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
        if save and replayable:
            message += "\n\ncounterexample files: " + ", ".join(_save(replayable, save))
        raise SpecViolation(message, found)
    return reports


# --- pytest hooks ---------------------------------------------------------------------------------

def pytest_addoption(parser) -> None:
    group = parser.getgroup("zcspec", "check graphs, plans and runs against the zcspec specification")
    group.addoption("--zcspec-kinds", default=None, metavar="KINDS",
                    help="artefacts zcspec_check observes, comma-separated from plan,model_file,execution "
                         "(default plan,model_file)")
    group.addoption("--zcspec-save", default=None, metavar="DIR",
                    help="write a counterexample file for each violation zcspec_check finds on a graph")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "zcspec(kinds=('plan', 'model_file', 'execution')): the artefacts "
                                       "zcspec_check observes in this test")
    text = config.getoption("--zcspec-kinds", None)
    if text is not None:
        try:
            parse_kinds(text)
        except ValueError as e:
            raise pytest.UsageError(f"--zcspec-kinds: {e}") from e


@pytest.fixture
def zcspec_check(request):
    """``zcspec_check(subject, options=None, *, kinds=None, invariants=None)``: see the module doc."""
    marker = request.node.get_closest_marker("zcspec")
    default = request.config.getoption("--zcspec-kinds") or ",".join(DEFAULT_KINDS)
    if marker is not None and "kinds" in marker.kwargs:
        default = marker.kwargs["kinds"]
    save = request.config.getoption("--zcspec-save")

    def check(subject, options=None, *, kinds=None, invariants=None) -> list:
        __tracebackhide__ = True   # the report is the message; the plugin's frames are noise
        return assert_spec_holds(subject, options, kinds=kinds or default, invariants=invariants, save=save)

    return check
