"""pytest plugin: ``-p checks.faults.pytest_plugin`` runs the session with ``$ZCSPEC_FAULT`` installed.

Used to show that an exported counterexample test fails on its faulty variant
and passes on the real code, without editing the exported file.
"""
from __future__ import annotations

from zcspec.checks.faults.registry import activate_from_env, deactivate


def pytest_configure(config):
    activate_from_env()


def pytest_unconfigure(config):
    deactivate()
