"""Shared helpers for the runtime ports of GE's zero-copy tests: they moved to zcspec.checks.cases.ge.runtime_scenarios (the GE case catalogue); re-exported for the tests."""
from __future__ import annotations

from zcspec.checks.cases.ge.runtime_scenarios import (  # noqa: F401 - re-exported for the tests
    NCHW_512, data_kernel_netoutput, data_to_netoutput, two_input_add, launches, copies,
    written_starts, range_starts, ones,
)

__all__ = ['NCHW_512', 'data_kernel_netoutput', 'data_to_netoutput', 'two_input_add', 'launches', 'copies', 'written_starts', 'range_starts', 'ones']
