"""The interval packer: buffers with half-open lifetimes get offsets in one arena (docs/packing.md).

- :mod:`.problem`: :class:`Buffer` (the input) and :class:`Packing` (the result);
- :mod:`.bound`: :func:`lower_bound`, the max-live bound no packing beats;
- :mod:`.packer`: :func:`pack`, the stages in order (greedy orders, exact search, hill climb, descent);
- :mod:`.greedy`, :mod:`.fit`, :mod:`.sweep`, :mod:`.search`: the algorithms those stages run (:mod:`.fit` and
  :mod:`.dfs` compiled by numba);
- :mod:`.minimalloc_csv`: :func:`read_minimalloc_csv`, MiniMalloc's instance files;
- :mod:`.errors`: the packer's errors.

A packing is judged outside impl/, by ``zcspec.checks.packing_check`` (it shares no code with this package).
"""
from __future__ import annotations

from zcspec.impl.compiler.memory.packing.bound import lower_bound
from zcspec.impl.compiler.memory.packing.errors import BufferFileError, InvalidBufferError
from zcspec.impl.compiler.memory.packing.minimalloc_csv import read_minimalloc_csv
from zcspec.impl.compiler.memory.packing.packer import pack
from zcspec.impl.compiler.memory.packing.problem import Buffer, Packing

__all__ = [
    "Buffer", "BufferFileError", "InvalidBufferError", "Packing", "lower_bound", "pack", "read_minimalloc_csv",
]
