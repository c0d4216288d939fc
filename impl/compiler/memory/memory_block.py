"""GE's MemoryBlock (block_mem_assigner.h, block_mem_assigner.cc): one block of the feature map while
BlockMemAssigner builds it.

A block holds its members (the units that take it, in the order they take it), the size it asks for
(rounded to 512) and the largest member's real size, the stream, batch label and flags of the unit that
created it (reusable, zero-copy, continuous, same offset), its span of steps, and the blocks level 2
nests in it (``AddLifeReuseBlock``) with the offset the next child would take. ge_blocks creates and
fills blocks (the first stage), ge_level2 sorts, splits (``Clone``) and nests them, offsets.py lays them
out (``Resize``). One class shared by those stages, so that level 2 needs nothing of the first stage's.
"""
from __future__ import annotations

from zcspec.impl.compiler.memory.sizes import block_size


class Block:
    """A block under construction (internal; the plan exports frozen copies)."""

    __slots__ = ("id", "units", "request", "real", "stream", "batch", "reusable", "zero_copy", "continuous",
                 "same_offset", "begin", "end", "children", "batch_children", "parent", "child_offset", "virtual",
                 "sorted_align", "timeline")

    def __init__(self, bid: int, unit, options, *, virtual: bool = False):
        self.id = bid
        self.units = [unit] if unit is not None else []
        self.request = block_size(unit.size, options) if unit is not None else 0
        self.real = unit.size if unit is not None else 0
        self.stream = unit.stream if unit is not None else 0
        self.batch = unit.batch if unit is not None else ""
        self.reusable = unit.reusable if unit is not None else False
        self.zero_copy = unit.zero_copy if unit is not None else None
        self.continuous = unit.continuous if unit is not None else False
        self.same_offset = unit.same_offset if unit is not None else False
        self.begin = unit.first if unit is not None else 0
        self.end = unit.last if unit is not None else 0
        self.children: list[Block] = []
        self.batch_children: dict[str, list[Block]] = {}
        self.parent: Block | None = None
        self.child_offset = 0
        self.virtual = virtual
        self.sorted_align: int | None = None
        self.timeline = None  # level 2's ge_level2._Timeline of the members, built when it first reads them

    def align_size(self, options) -> int:
        # GE's MemoryBlock::AlignSize is computed once, when level 2 first sorts (the first stage never
        # asks): a block split by interval reuse keeps the size it was sorted by, while Resize lays it out
        # by the members it kept (``real``).
        if self.sorted_align is None:
            self.sorted_align = block_size(self.real, options)
        return self.sorted_align

    def keep_only(self, units) -> None:
        """Keep ``units`` (a part of the members, in order): the span and real size follow them, the
        aligned size does not (level 2 has sorted by it already; a fresh clone computes its own)."""
        self.units = list(units)
        self.timeline = None
        self.real = max(u.size for u in self.units)
        self.begin = self.units[0].first
        self.end = max(u.last for u in self.units)

    def __repr__(self) -> str:
        return f"Block({self.id}, {[u.id for u in self.units]}, real={self.real})"
