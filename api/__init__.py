"""zcspec: check that zero-copy I/O and static memory plans are right.

The package's public entry points for a planner of your own (docs/your-planner.md):

- :func:`check_plan` judges a plan (a file path, the JSON dict, or a ``PlanObservation``) by every
  claim that applies and returns a report;
- :func:`assert_plan_ok` does the same and raises :class:`PlanViolation` (an AssertionError whose
  message is the report) when a claim is broken;
- :func:`planning_problems`, a Hypothesis strategy drawing planning problems in a plain form any
  planner reads, and :class:`PlanningProblem`, whose ``plan_json`` turns your planner's answer into
  a plan to check ("draw with zcspec, plan with yours, check with zcspec");
- ``__version__``, the installed version.

Nothing is imported until it is used: ``import zcspec.spec`` (or the pytest plugin) must not pay for
the checker, and the spec must stay importable without impl/ (tests/spec/test_spec_independence.py).
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

# name -> the module that defines it; loaded on first use (PEP 562).
_LAZY = {
    "check_plan": "zcspec.checks.plan_api",
    "assert_plan_ok": "zcspec.checks.plan_api",
    "read_plan": "zcspec.checks.plan_api",
    "PlanReport": "zcspec.checks.plan_api",
    "PlanViolation": "zcspec.checks.plan_api",
    "planning_problems": "zcspec.checks.strategies.planning_problems",
    "PlanningProblem": "zcspec.checks.strategies.planning_problems",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'zcspec' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
