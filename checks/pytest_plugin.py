"""The ``zcspec`` pytest plugin: check your own graphs, plans and runs against the spec in your suite.

Installed with zcspec (entry point ``pytest11: zcspec``), so any suite gets:

- the fixture ``zcspec_check``: ``zcspec_check(subject, options=None, *, kinds=None, invariants=None)``
  compiles ``subject`` (a Graph, an .onnx or graph .json path, ``zoo:NAME`` or
  ``builtin:NAME``) with ``options`` (a CompileOptions; default options), observes
  the chosen artefacts, checks every applicable invariant and fails the test with
  a report naming each violated invariant, its culprit and its statement. A spec
  observation (a plan exported by your own planner, say) or a Scenario is checked
  as it is. It returns the spec's reports, so a test can also ask what was exercised.
- ``assert_spec_holds(subject, ...)`` (checks/spec_assertions.py): the same check as a plain
  function, for code that has no fixture at hand. Inside a Hypothesis ``@given`` test use it, or
  ``zcspec.assert_plan_ok`` for a plan file or dict, not the fixture: a function-scoped fixture is
  not reset between the examples Hypothesis draws, and Hypothesis's health check says so.
- ``--zcspec-kinds plan,model_file,execution``: the artefacts the fixture checks
  for the whole session; ``@pytest.mark.zcspec(kinds=(...))`` overrides it for
  one test; a ``kinds=`` argument overrides both.
- ``--zcspec-save DIR``: write each violation found on a graph as a counterexample file, and each
  plan observation that breaks a claim as a plan file (``zcspec replay FILE`` re-runs either).

Failures raise ``SpecViolation`` (an AssertionError), so pytest shows the report
as the test's failure message.

This module holds the hooks only and imports nothing of zcspec at its top: pytest loads it in
every run of an environment where zcspec is installed, and the checker (the compiler, onnx) is
loaded when a test first uses the fixture.
"""
from __future__ import annotations

import importlib

import pytest

_CHECKER = "zcspec.checks.spec_assertions"
DEFAULT_KINDS = "plan,model_file"


# The checker's public names, still importable from here; loaded on first use. Only these: pytest
# looks up every ``pytest_*`` name on a plugin, which must not load the checker.
_FROM_CHECKER = ("SpecViolation", "assert_spec_holds", "format_report", "parse_kinds", "KINDS")


def __getattr__(name: str):
    if name not in _FROM_CHECKER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_CHECKER), name)


# --- pytest hooks ---------------------------------------------------------------------------------

def pytest_addoption(parser) -> None:
    group = parser.getgroup("zcspec", "check graphs, plans and runs against the zcspec specification")
    group.addoption("--zcspec-kinds", default=None, metavar="KINDS",
                    help="artefacts zcspec_check observes, comma-separated from plan,model_file,execution "
                         "(default plan,model_file)")
    group.addoption("--zcspec-save", default=None, metavar="DIR",
                    help="write a counterexample file for each violation zcspec_check finds on a graph, and a "
                         "plan file for each plan observation that breaks a claim (zcspec replay re-checks both)")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "zcspec(kinds=('plan', 'model_file', 'execution')): the artefacts "
                                       "zcspec_check observes in this test")
    text = config.getoption("--zcspec-kinds", None)
    if text is not None:
        try:
            importlib.import_module(_CHECKER).parse_kinds(text)
        except ValueError as e:
            raise pytest.UsageError(f"--zcspec-kinds: {e}") from e


@pytest.fixture
def zcspec_check(request):
    """``zcspec_check(subject, options=None, *, kinds=None, invariants=None)``: see the module doc."""
    marker = request.node.get_closest_marker("zcspec")
    default = request.config.getoption("--zcspec-kinds") or DEFAULT_KINDS
    if marker is not None and "kinds" in marker.kwargs:
        default = marker.kwargs["kinds"]
    save = request.config.getoption("--zcspec-save")

    def check(subject, options=None, *, kinds=None, invariants=None) -> list:
        __tracebackhide__ = True   # the report is the message; the plugin's frames are noise
        checker = importlib.import_module(_CHECKER)
        return checker.assert_spec_holds(subject, options, kinds=kinds or default, invariants=invariants, save=save)

    return check
