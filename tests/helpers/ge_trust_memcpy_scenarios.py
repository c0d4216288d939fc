"""Scenarios of the ports of GE's trust-output and memcpy-addr-async tests: they moved to zcspec.checks.cases.ge.trust_memcpy_scenarios (the GE case catalogue); re-exported for the tests."""
from __future__ import annotations

from zcspec.checks.cases.ge.trust_memcpy_scenarios import (  # noqa: F401 - re-exported for the tests
    N, IN_BYTES, STORAGE, faked_size, fake_tensors_size, two_add_nodes,
    two_output_node_and_add, device_inputs, memcpy_addr_async_in_feature_map,
)

__all__ = ['N', 'IN_BYTES', 'STORAGE', 'faked_size', 'fake_tensors_size', 'two_add_nodes', 'two_output_node_and_add', 'device_inputs', 'memcpy_addr_async_in_feature_map']
