"""GE tensor and block sizes (ge-facts.md 1.1-1.3).

- a tensor's size (GE's "real size") is ``align(bytes, size_align) + size_padding``;
- a block's size is that rounded up to ``block_align``, and 0 stays 0 (1.2);
- workspaces are sized by the kernel, so their byte count is taken as is.
"""
from __future__ import annotations

import functools
import math

from zcspec.impl.platform import dtypes



@functools.lru_cache(maxsize=None)
def _bits(dtype: str) -> int:
    return dtypes.get(dtype).bits


def raw_bytes(desc) -> int:
    """``desc.nbytes`` for a validated desc, without re-checking overflow (the planner asks 100k times)."""
    return (math.prod(desc.shape) * _bits(desc.dtype) + 7) // 8


def align(x: int, to: int) -> int:
    """``x`` rounded up to a multiple of ``to``; 0 stays 0 (ge-facts.md 1.2 AlignMemOffset)."""
    return -(-x // to) * to if x > 0 else 0


def tensor_size(nbytes: int, options) -> int:
    """GE's padded tensor size: ``align32(bytes) + 32`` by default; an empty tensor gets the padding (1.3)."""
    return align(nbytes, options.size_align) + options.size_padding if nbytes > 0 else max(options.size_padding, 1)


def block_size(size: int, options) -> int:
    """The block a tensor of ``size`` bytes asks for: rounded to ``block_align`` (2.1.4, binary planner)."""
    return align(size, options.block_align)
