"""A fault variant: a deliberately wrong version of one piece of impl, injected at run time.

A ``Variant`` names the bug, says what it models, and carries two lazy
callables: ``patch()`` returns a context manager that installs the bug (and
removes it on exit, even on error), ``strategy(max_nodes)`` returns the
scenario strategy its hunt uses, over graphs of at most that many nodes. impl/ is never edited: the bug is a module attribute
swapped for the duration of the ``with`` block.

``swap(module, name, new)`` replaces ``module.name`` *and* every binding of
the same object that another loaded ``impl`` module, or a module of the checker's
execution runners (``zcspec.checks.execution``), made with ``from module import
name`` (a function imported by name is a separate reference; patching only its
home would leave those callers on the real code).
"""
from __future__ import annotations

import contextlib
import importlib
import sys
from typing import Callable, ContextManager

import attrs

AREAS = ("planner", "compiler", "runtime_v1", "runtime_v2")


@attrs.frozen
class Variant:
    """One seeded bug.

    - ``name``: unique, kebab-case; recorded as the counterexample's ``found_with``;
    - ``area``: which part of impl it breaks (one of ``AREAS``);
    - ``bug``: one sentence on what is wrong, and where such a bug was seen if known;
    - ``patch``: ``() -> context manager`` installing the bug;
    - ``strategy``: ``(max_nodes) -> SearchStrategy[Scenario]`` the hunt draws from;
    - ``expected``: the invariants we expect to catch it (documentation; the hunt
      accepts a detection by any invariant, since any violation is the spec's);
    - ``known_gap``: non-empty when the checker is known to miss this variant: why, and
      the fix (outside checks/). The benchmark still hunts it and reports the miss,
      but does not count it against the targets.
    """

    name: str
    area: str = attrs.field(validator=attrs.validators.in_(AREAS))
    bug: str
    patch: Callable[[], ContextManager]
    strategy: Callable[[int], object]
    expected: tuple[str, ...] = ()
    known_gap: str = ""


# Where by-name bindings of a patched object are looked for: impl/, and the checker's runners that
# drive it (they import impl functions by name, as impl's own callers do).
_BOUND_IN = ("zcspec.impl.", "zcspec.checks.execution")


def _bindings(module, name: str) -> list[tuple[object, str]]:
    """Every (module, name) under ``_BOUND_IN`` bound to the same object as ``module.name``."""
    original = getattr(module, name)
    found = [(module, name)]
    for mod_name, mod in list(sys.modules.items()):
        if mod is module or mod is None or not mod_name.startswith(_BOUND_IN):
            continue
        for attr, value in list(vars(mod).items()):
            if value is original and callable(value):
                found.append((mod, attr))
    return found


@contextlib.contextmanager
def swap(module_name: str, name: str, make_new: Callable[[object], object]):
    """Replace ``module_name.name`` by ``make_new(original)`` everywhere it is bound; restore on exit."""
    module = importlib.import_module(module_name)
    original = getattr(module, name)
    places = _bindings(module, name) if callable(original) else [(module, name)]
    new = make_new(original)
    for mod, attr in places:
        setattr(mod, attr, new)
    try:
        yield
    finally:
        for mod, attr in places:
            setattr(mod, attr, original)


def preload() -> None:
    """Import every impl module a variant patches, so by-name bindings exist before ``swap`` looks
    (a module imported later, inside the patch, would bind the already-patched object and keep
    it after the patch ends)."""
    for m in ("zcspec.impl.compiler.compile", "zcspec.impl.compiler.memory.plan", "zcspec.impl.compiler.memory.compact",
              "zcspec.impl.compiler.memory.bounds", "zcspec.impl.compiler.tasks.taskgen", "zcspec.impl.runtime.v1.load",
              "zcspec.impl.runtime.v1.execute", "zcspec.impl.runtime.v2.executor", "zcspec.checks.execution",
              "zcspec.checks.execution.v1", "zcspec.checks.execution.v2", "zcspec.checks.execution.differential",
              "zcspec.checks.scenario"):
        importlib.import_module(m)
