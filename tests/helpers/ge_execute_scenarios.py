"""Scenarios of the port of GE's ``test_fm_memory_refresh.cc``: they moved to zcspec.checks.cases.ge.execute_scenarios (the GE case catalogue); re-exported for the tests."""
from __future__ import annotations

from zcspec.checks.cases.ge.execute_scenarios import (  # noqa: F401 - re-exported for the tests
    SHAPE, OUT_BYTES, FILL, switch_merge, atomic_to_netoutput, hcom_graph,
    reshape_graph, netoutput_not_zero_copy, data_to_netoutput, zeros_inputs, filled_outputs, ge_io,
    launch_of, arg_refreshes, copies_into, inside,
)

__all__ = ['SHAPE', 'OUT_BYTES', 'FILL', 'switch_merge', 'atomic_to_netoutput', 'hcom_graph', 'reshape_graph', 'netoutput_not_zero_copy', 'data_to_netoutput', 'zeros_inputs', 'filled_outputs', 'ge_io', 'launch_of', 'arg_refreshes', 'copies_into', 'inside']
