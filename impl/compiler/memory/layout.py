"""Block trees -> sizes and offsets (GE: block_mem_assigner.cc ``ResizeMemoryBlocks``,
``MemoryBlock::SetHeadOffset``).

A block's size is ``max(largest member, children stacked, largest batch's
children stacked)`` rounded to the block granularity (``MemoryBlock::Resize``).
Children are laid out back to back from their parent's head; each batch's
children start again at the head, so different batches overlap (ResizeDynamicBatchBlocks).
"""
from __future__ import annotations

from zcspec.impl.compiler.memory.sizes import align


def resize(block, options, memo: dict) -> int:
    """The laid-out size of ``block`` and its subtree (memoised by block id)."""
    if block.id in memo:
        return memo[block.id]
    stacked = sum(resize(c, options, memo) for c in block.children)
    batches = max((sum(resize(c, options, memo) for c in lst) for lst in block.batch_children.values()), default=0)
    memo[block.id] = size = align(max(block.real, stacked, batches), options.block_align)
    return size


def place(block, head: int, options, memo: dict, offsets: dict) -> None:
    """Offsets of ``block`` (at ``head``) and of its subtree into ``offsets`` (block id -> offset)."""
    stack = [(block, head)]
    while stack:
        b, at = stack.pop()
        offsets[b.id] = at
        cursor = at
        for c in b.children:
            stack.append((c, cursor))
            cursor += resize(c, options, memo)
        for lst in b.batch_children.values():
            cursor = at
            for c in lst:
                stack.append((c, cursor))
                cursor += resize(c, options, memo)


def subtree(block):
    """``block`` and every block below it."""
    out, stack = [], [block]
    while stack:
        b = stack.pop()
        out.append(b)
        stack.extend(b.children)
        for lst in b.batch_children.values():
            stack.extend(lst)
    return out
