"""The interval packer: buffers with half-open lifetimes get offsets in one arena (docs/packing.md).

- :mod:`.problem`: :class:`Buffer` (the input) and :class:`Packing` (the result);
- :mod:`.bound`: :func:`lower_bound`, the max-live bound no packing beats;
- :mod:`.packer`: :func:`pack`, the stages in order (greedy orders, exact search, hill climb, descent);
- :mod:`.greedy`, :mod:`.sweep`, :mod:`.search`: the algorithms those stages run;
- :mod:`.validate`: :func:`validate`, an independent check of a packing (shares no code with the packer);
- :mod:`.minimalloc_csv`: :func:`read_minimalloc_csv`, MiniMalloc's instance files;
- :mod:`.errors`: the packer's errors.
"""
from __future__ import annotations

from zcspec.impl.compiler.memory.packing.bound import lower_bound
from zcspec.impl.compiler.memory.packing.errors import BufferFileError, InvalidBufferError, InvalidPackingError
from zcspec.impl.compiler.memory.packing.minimalloc_csv import read_minimalloc_csv
from zcspec.impl.compiler.memory.packing.packer import pack
from zcspec.impl.compiler.memory.packing.problem import Buffer, Packing
from zcspec.impl.compiler.memory.packing.validate import PackingFinding, check, validate

__all__ = [
    "Buffer", "BufferFileError", "InvalidBufferError", "InvalidPackingError", "Packing", "PackingFinding",
    "check", "lower_bound", "pack", "read_minimalloc_csv", "validate",
]
