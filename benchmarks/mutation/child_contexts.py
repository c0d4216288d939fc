"""A pytest plugin for the baseline's coverage run (selection.py): every line a test makes run is recorded
under that test's id, even when it runs in another process or after a cache was filled by another test.

Loaded only in that run (``-p zcspec_mutation_contexts``: selection.py copies this file under that name
into a folder of its own, on PYTHONPATH with a ``sitecustomize`` that calls ``label_child``). Three things
would otherwise hide a test's dependence on a line:

- a child process (the CLI tests' ``zcspec ...``, checks/parallel.py's forked workers): coverage measures
  it (``patch = subprocess, fork, _exit``) but under no test. A child inherits ``PYTEST_CURRENT_TEST``
  from the test that started it; ``label_child`` switches the child's coverage to that test's context
  (at start-up for a new interpreter, after coverage's own restart for a fork).
- a memoised function (``functools.lru_cache`` in impl/ and checks/): the second test asking for the
  same value does not run its lines. ``pytest_runtest_setup`` empties every such cache of the zcspec and
  tests modules before each test, so each test runs every line its values come from.
- a module-scoped fixture: its lines run in the first test's setup only; selection.py widens a
  ``|setup``/``|teardown`` context to the whole test file.

The ``sitecustomize`` imports this module before pytest registers it as a plugin, too late for assertion
rewriting (it has no asserts): PYTEST_DONT_REWRITE keeps pytest from warning about it.
"""
from __future__ import annotations

import os
import sys

CHILD_PHASE = "child"
_PREFIXES = ("zcspec", "tests")


def label_child() -> None:
    """In a process a test started, record under that test's id (``<nodeid>|child``); else nothing."""
    test = os.environ.get("PYTEST_CURRENT_TEST")
    coverage = sys.modules.get("coverage")
    if not test or coverage is None:
        return
    cov = coverage.Coverage.current()
    if cov is not None:
        cov.switch_context(f"{test.rsplit(' (', 1)[0]}|{CHILD_PHASE}")


def clear_caches() -> int:
    """Empty the memo of every ``functools`` cache defined at module or class level in zcspec and tests."""
    cleared = 0
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(_PREFIXES):
            continue
        for value in list(vars(module).values()):
            for owner in (value, *(vars(value).values() if isinstance(value, type) else ())):
                clear = getattr(owner, "cache_clear", None)
                if callable(clear) and hasattr(owner, "cache_info"):
                    clear()
                    cleared += 1
    return cleared


def pytest_sessionstart(session) -> None:
    # After pytest-cov started this worker's coverage, so after coverage's own fork hook (``patch = fork``),
    # which restarts coverage in the child: ours then labels the restarted one.
    os.register_at_fork(after_in_child=label_child)


def pytest_runtest_setup(item) -> None:
    clear_caches()
