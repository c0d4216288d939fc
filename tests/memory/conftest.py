"""Every packing the packer returns during the memory tests is re-checked by its independent validator."""
from __future__ import annotations

import pytest

from zcspec.impl.compiler.memory.packing.packer import CHECK_ENV


@pytest.fixture(scope="package", autouse=True)
def check_every_packing():
    """``pack()`` validates its result (raising InvalidPackingError) while tests/memory runs; the
    variable reaches subprocesses too, such as a ``zcspec plan --buffers`` the tests start."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CHECK_ENV, "1")
        yield
