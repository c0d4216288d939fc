"""The whole catalogue of GE's ported unit tests: importing this module declares every case.

One case module per GE test file (the module's docstring names the file); ``CASES`` lists the records in
module order, each module's in the order it declares them. tests/ge and verify's phase "GE's unit-test
cases" both start here.
"""
from __future__ import annotations

from zcspec.checks.cases.ge import (  # noqa: F401 - imported to declare their cases
    block_mem_assigner,
    davinci_model,
    davinci_model_execute,
    fm_memory_refresh,
    graph_mem_assigner,
    hybrid_mem_assigner,
    mem_assigner_continuous,
    mem_assigner_single_stream,
    mem_assigner_stream,
    memcpy_addr_async_pass,
    memcpy_addr_async_task_info,
    model_out_tensor_zero_copy,
    trust_output_tensor,
    zero_copy_system,
)
from zcspec.checks.cases.ge.catalogue import GeCase, declared

CASES: tuple[GeCase, ...] = declared()


def cases_of(module: str) -> tuple[GeCase, ...]:
    """The cases of one case module (``"block_mem_assigner"``...), in declaration order."""
    found = tuple(c for c in CASES if c.module == module)
    if not found:
        raise ValueError(f"no GE case module {module!r}; the modules: {sorted({c.module for c in CASES})}")
    return found
