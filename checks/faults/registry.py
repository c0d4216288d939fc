"""The catalogue of fault variants, and how to switch one on.

``variants()`` lists every variant (planner, compiler, runtime v1, runtime v2);
``get(name)`` finds one; ``active(name)`` is the context manager that installs
it. ``activate_from_env()`` installs the variant named by ``ZCSPEC_FAULT`` for
the rest of the process: the hook ``zcspec.checks.faults.pytest_plugin`` uses it so an
exported counterexample test can be run against a faulty variant
(``ZCSPEC_FAULT=zc-block-merged pytest -p checks.faults.pytest_plugin FILE``).
"""
from __future__ import annotations

import contextlib
import os

from zcspec.checks.errors import UnknownVariant
from zcspec.checks.faults import compiler, planner, proof_only, runtime_v1, runtime_v2
from zcspec.checks.faults.variant import Variant, preload

ENV = "ZCSPEC_FAULT"


def variants() -> tuple[Variant, ...]:
    return planner.VARIANTS + compiler.VARIANTS + runtime_v1.VARIANTS + runtime_v2.VARIANTS + proof_only.VARIANTS


def names() -> tuple[str, ...]:
    return tuple(v.name for v in variants())


def get(name: str) -> Variant:
    for v in variants():
        if v.name == name:
            return v
    raise UnknownVariant(name, names())


@contextlib.contextmanager
def active(variant: Variant | str):
    """The variant installed for the ``with`` block, removed afterwards (also on error)."""
    v = get(variant) if isinstance(variant, str) else variant
    preload()
    with v.patch():
        yield v


_installed = contextlib.ExitStack()


def activate_from_env() -> Variant | None:
    """Install the variant ``$ZCSPEC_FAULT`` names until the process ends (or ``deactivate()``); None if unset."""
    name = os.environ.get(ENV, "").strip()
    if not name:
        return None
    return _installed.enter_context(active(name))


def deactivate() -> None:
    _installed.close()
