"""The op of GE's memory-assignment test fixture, ``some_op`` (moved to zcspec.checks.cases.ge.graph; re-exported here)."""
from __future__ import annotations

from zcspec.checks.cases.ge.graph import some_op  # noqa: F401 - re-exported for the tests

__all__ = ["some_op"]
