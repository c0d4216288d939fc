"""GE's BlockMemAssigner: units -> blocks, by first-stage reuse and the level-2 merge.

Follows ge-facts.md 2 for GE's two default planners (2.1.2, 2.1.4): the
binary-block planner (a block asks for its size rounded to 512 and
first-stage reuse needs an exact match) and the max-block planner (every
request asks for the largest size, so any free block is taken; ``Resize``
then shrinks blocks to their real contents). offsets.py keeps the smaller.

1. the walk (2.2.1): per step, free the previous step's workspaces (2.2.5),
   give each output unit a block, then the step's workspaces, then release the
   units whose life ends here (2.2.3; an unconsumed output is released one step
   later). A request takes the most recently released free block of the same
   stream, batch label and block size (LIFO, 2.4.1-2.4.2; FIFO with
   ``mem_release_first_reuse_first``) when the unit may reuse (2.4.3): reuse
   on, unit reusable, not zero-copy, continuous or atomic. Otherwise a new
   block is appended to the block list (2.4.4).
2. level 2 (2.7, reuse on, binary planner only: 2.7.6): blocks sorted by aligned size descending, ties
   fewer members then earlier begin (2.7.1); each top-level block adopts later
   blocks whose span lies wholly before or after its own, offered to its
   children first, while they fit (+512 slack, 2.7.3). Both must be reusable,
   of one stream and batch label; zero-copy and atomic blocks never merge
   (2.5.10); a continuous block may only be the parent (2.7.5).
3. continuous blocks move to the end of the list (2.5.6, 2.8.1).

Atomic units get no block here: offsets.py places them after the feature map
(2.5.4, 3.3). Children hold no offset yet: offsets.py lays them out.

Scale: the level-2 candidate scan skips blocks already adopted (a next-alive
pointer array) and starts at the first block small enough to fit, so it
stays near-linear per parent when sizes repeat; the decisions are GE's.
"""
from __future__ import annotations

import bisect
from collections import defaultdict, deque

from zcspec.impl.compiler.memory.sizes import block_size

MAX_DEPTH = 100  # ge-facts.md 2.11: kMaxDepthNum


class Block:
    """A block under construction (internal; the plan exports frozen copies)."""

    __slots__ = ("id", "units", "request", "real", "stream", "batch", "reusable", "zero_copy", "continuous",
                 "same_offset", "begin", "end", "children", "batch_children", "parent", "child_offset", "virtual")

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

    def align_size(self, options) -> int:
        return block_size(self.real, options)

    def __repr__(self) -> str:
        return f"Block({self.id}, {[u.id for u in self.units]}, real={self.real})"


def _pool_key(unit, options, max_block: bool):
    # 2.1.4: the binary planner asks for the 512-rounded size and needs an exact match; the max-block
    # planner's only range is the largest size, so every request is the same and any free block fits.
    return unit.stream, unit.batch, 0 if max_block else block_size(unit.size, options)


def _may_reuse(unit, options) -> bool:
    return options.reuse and unit.reusable and unit.zero_copy is None and not unit.continuous and not unit.atomic


def first_stage(units, steps: int, options, max_block: bool = False) -> tuple[list[Block], dict[str, Block]]:
    """The topological walk (2.2, 2.4): returns the block list in creation order and unit id -> block."""
    allocs = defaultdict(list)
    releases = defaultdict(list)
    for u in units:
        if u.atomic:
            continue
        allocs[(u.alloc_step, u.kind == "workspace")].append(u)
        if _may_reuse(u, options):
            # 2.2.3: an output nobody reads is released at the next node; workspaces at the next step's start.
            release = u.last + 1 if u.unconsumed or u.kind == "workspace" else u.last
            releases[(release, u.kind != "workspace")].append(u)
    pool: dict = defaultdict(deque)
    blocks: list[Block] = []
    block_of: dict[str, Block] = {}
    take = (lambda q: q.popleft()) if options.mem_release_first_reuse_first else (lambda q: q.pop())
    for step in range(steps + 1):
        for u in releases.get((step, False), ()):  # workspaces of the previous step
            pool[_pool_key(u, options, max_block)].append(block_of[u.id])
        for phase in (False, True):  # outputs, then workspaces
            for u in allocs.get((step, phase), ()):
                queue = pool.get(_pool_key(u, options, max_block)) if _may_reuse(u, options) else None
                if queue:
                    block = take(queue)
                    block.units.append(u)
                    block.real = max(block.real, u.size)
                    block.end = max(block.end, u.last)
                else:
                    block = Block(len(blocks), u, options)
                    blocks.append(block)
                block_of[u.id] = block
        for u in releases.get((step, True), ()):
            pool[_pool_key(u, options, max_block)].append(block_of[u.id])
    return blocks, block_of


def _sort_key(block: Block, options):
    # 2.7.1, ascending mode: aligned size descending, then fewer members, then earlier begin.
    return -block.align_size(options), len(block.units), block.begin


def _mergeable(block: Block) -> bool:
    return block.reusable and block.zero_copy is None and not block.virtual


def _disjoint(a: Block, b: Block) -> bool:
    """``CanBlockLifeReuse`` either way round (2.7.3): on one stream the spans of steps do not meet; on
    two, one block's last use is known to be over where the other begins (:func:`_follows`)."""
    if a.stream == b.stream:
        return b.end < a.begin or b.begin > a.end
    return _follows(a, b) or _follows(b, a)


def _follows(a: Block, b: Block) -> bool:
    """Whether ``b`` (on another stream) may reuse ``a``'s memory, as GE's ``CanBlockLifeReuse`` judges it
    (block_mem_assigner.cc, default memory mode): the latest step of ``a``'s stream known to have run
    before ``b`` begins (``GetDependLifeBegin``) is at or after the node of ``a``'s last unit and after
    ``a``'s life end (``GetLifeEnd``): the last read on ``b``'s stream when ``a``'s last unit is read on
    that one other stream only, else ``a``'s end on its own stream, which already reaches the first node
    there known to run after every read on another stream (``GetDiffStreamMaxLifeTime``). In the first
    case the step must also be at or after every use of ``a`` on its own stream (that use has then run
    before ``b``): GE counts the consumers' streams with its own (``out_stream_count_``), a unit's
    ``uses`` keep them apart. And, unlike GE, every step of ``a``'s tensors' own lifetimes (a reader
    without a task too) comes before ``b`` begins: the plan's lifetimes of two tensors sharing bytes
    never meet, so LAYOUT-NO-OVERLAP and the lower bound over steps hold for such plans too."""
    last = a.units[-1]
    depend = dict(b.units[0].known).get(a.stream, -1)
    uses = dict(last.uses)
    own = uses.pop(a.stream, last.alloc_step)
    end = uses[b.stream] if len(uses) == 1 and b.stream in uses else a.end
    return depend >= max(last.alloc_step, own) and depend > end and last.reach < b.begin


def _try_adopt(parent: Block, child: Block, options, depth: int = 0) -> bool:
    """``parent.AddLifeReuseBlock(child)`` (2.7.3): into a child of the parent first, else at its end."""
    if depth > MAX_DEPTH or not _disjoint(parent, child):
        return False
    for c in parent.children:
        if _try_adopt(c, child, options, depth + 1):
            return True
    size, room = child.align_size(options), parent.align_size(options)
    slack = 0 if size == options.block_align else options.block_align
    if parent.child_offset + size > room + slack:
        return False
    parent.children.append(child)
    child.parent = parent
    parent.child_offset += size
    return True


def _capacity(block: Block, options) -> int:
    """The largest child any block of this subtree could still take (sizes only)."""
    room = block.align_size(options) + options.block_align - block.child_offset
    return max([room] + [_capacity(c, options) for c in block.children])


def level_two(blocks: list[Block], options) -> list[Block]:
    """ReuseBlocksByLifeTime (2.7): returns the sorted block list with children adopted."""
    blocks = sorted(blocks, key=lambda b: _sort_key(b, options))
    neg_sizes = [-b.align_size(options) for b in blocks]
    nxt = list(range(1, len(blocks) + 1))  # next candidate not yet adopted (path-compressed)

    def alive(j: int) -> int:
        root = j
        while root < len(blocks) and blocks[root].parent is not None:
            root = nxt[root]
        while j < root and j < len(blocks):
            nxt[j], j = root, nxt[j]
        return root

    for i, parent in enumerate(blocks):
        if parent.parent is not None or not _mergeable(parent):
            continue
        cap, j = _capacity(parent, options), i + 1
        while True:
            # Blocks larger than any room left cannot be adopted: start at the first that may fit.
            j = alive(max(j, bisect.bisect_left(neg_sizes, -cap)))
            if j >= len(blocks):
                break
            child = blocks[j]
            if (_mergeable(child) and not child.continuous and not child.children
                    and child.batch == parent.batch
                    and _try_adopt(parent, child, options)):
                cap = _capacity(parent, options)
            j += 1
    return blocks


def regroup_continuous(blocks: list[Block]) -> list[Block]:
    """AssignContinuousBlocks (2.5.6): continuous blocks move to the end, order kept."""
    return [b for b in blocks if not b.continuous] + [b for b in blocks if b.continuous]


def assign_blocks(units, steps: int, options, max_block: bool = False) -> tuple[list[Block], dict[str, Block]]:
    """Stages 1-3 of one GE planner (binary-block, or max-block with ``max_block``).

    With reuse off, and always for the max-block planner, the order is creation order (2.8.5): GE's
    ``MaxBlockMemAssigner::NeedLevel2Reuse()`` is false, so ``ReuseBlocksByLifeTime`` neither sorts nor
    merges its blocks (2.7.6); only the binary planner runs level 2.
    """
    blocks, block_of = first_stage(units, steps, options, max_block)
    if options.reuse and not max_block:
        blocks = level_two(blocks, options)
    return regroup_continuous(blocks), block_of
