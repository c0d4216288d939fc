"""Every packing the packer returns during the memory tests is judged by the checker's independent check."""
from __future__ import annotations

import pytest

from zcspec.checks.packing_check import check
from zcspec.impl.compiler.memory.packing import packer


@pytest.fixture(autouse=True)
def judge_every_packing(monkeypatch):
    """``pack()`` (its stages, which every caller reaches through it) returns only packings that
    ``zcspec.checks.packing_check`` accepts; a violation raises InvalidPackingError in the test.
    Not against the capacity: a best effort above it is a valid return."""
    stages = packer._stages

    def judged(buffers, capacity, deadline):
        result = stages(buffers, capacity, deadline)
        check(buffers, result)
        return result

    monkeypatch.setattr(packer, "_stages", judged)
