"""GE tensor and block sizes (GE: mem_assigner.h `MEM_ALIGN_SIZE`, op_tensor_utils.cc
`OpTensorUtils::CalibrateTensorSize`, mem_reuse_strategy.cc `MemReuseUtils::AlignMemOffset`).

- a tensor's size (GE's "real size") is ``align(bytes, size_align) + size_padding``, or the size the
  graph sets for it (``TensorDesc.size``, GE's ``TensorUtils::SetSize``), taken as is;
- a block's size is that rounded up to ``block_align``, and 0 stays 0 (AlignMemOffset);
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
    """``x`` rounded up to a multiple of ``to``; 0 stays 0 (GE: mem_reuse_strategy.cc `AlignMemOffset`)."""
    return -(-x // to) * to if x > 0 else 0


def tensor_size(nbytes: int, options) -> int:
    """GE's padded tensor size: ``align32(bytes) + 32`` by default; an empty tensor gets the padding
    (CalibrateTensorSize)."""
    return align(nbytes, options.size_align) + options.size_padding if nbytes > 0 else max(options.size_padding, 1)


def desc_size(desc, options) -> int:
    """The size GE plans a tensor by: its set size when the graph sets one (``TensorDesc.size``, GE's
    ``TensorUtils::SetSize``, which the block planner reads as is: mem_reuse_strategy.cc
    ``MemReuseUtils::GetTensorSize``), else the padded size of its raw bytes."""
    size = desc.size
    return tensor_size(raw_bytes(desc), options) if size is None else size


def block_size(size: int, options) -> int:
    """The block a tensor of ``size`` bytes asks for: rounded to ``block_align`` (GetBlockSize, binary planner)."""
    return align(size, options.block_align)


def alias_sizes(size: int, offset: int, root_offset: int, root_size: int, root_aligned: int, options) -> tuple[int, int]:
    """(size, aligned size) an alias at ``offset`` reports: it reserves nothing of its own, so both end
    where its root's do. A view at a byte offset (an outer-axis Split piece), padded and rounded like a
    tensor of its own, would otherwise seem to reach past its root. The clipped size still covers the
    piece's raw bytes: a piece of ``b`` bytes at offset ``k`` has ``k + b <= raw(root) <= size(root)``
    (GE: op_tensor_utils.cc `OpTensorUtils::CalibrateTensorSize`). The aligned size is the size rounded to
    blocks, cut at the root's reserved end,
    so it need not be a block multiple. The planner reports this and the model-file loader requires it.
    """
    size = min(size, root_offset + root_size - offset)
    return size, max(size, min(block_size(size, options), root_offset + root_aligned - offset))
