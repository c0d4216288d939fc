"""GE's BlockMemAssigner: units -> blocks, by first-stage reuse, the level-2 merge (ge_level2) and the
move of the continuous inputs' blocks to the end.

Follows GE's two default planners (hybrid_mem_assigner.cc `HybridMemAssigner::Assign`,
binary_block_mem_assigner.cc, max_block_mem_assigner.cc, block_mem_assigner.cc): the
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
2. level 2 (2.7, reuse on, binary planner only: 2.7.6, ``ReuseBlocksByLifeTime``): ge_level2 sorts the
   blocks and nests them into one another.
3. the continuous inputs' blocks move to the end of the list (2.5.6, 2.8.1).

Atomic units get no block here: offsets.py places them after the feature map
(IsAtomicOutputMemory, AssignAtomicOutputMemory). Children hold no offset yet: offsets.py lays
them out. The block itself (GE's MemoryBlock) is memory_block.Block.
"""
from __future__ import annotations

from collections import defaultdict, deque
from operator import itemgetter

from zcspec.impl.compiler.memory.ge_level2 import _feeds_continuous_input, level_two
from zcspec.impl.compiler.memory.memory_block import Block
from zcspec.impl.compiler.memory.sizes import block_size


def _pool_key(unit, options, max_block: bool):
    # GetBlockSize: the binary planner asks for the 512-rounded size and needs an exact match; the max-block
    # planner's only range is the largest size, so every request is the same and any free block fits.
    return unit.stream, unit.batch, 0 if max_block else block_size(unit.size, options)


def _may_reuse(unit, options) -> bool:
    """2.4.3. A continuous input's unit neither takes nor gives a block here (GE's ``ApplyMemory`` with
    ``continuous``, ``ReuseBlock`` refusing a ``continuous_block_``); a continuous output's takes and
    gives one as any output (``ApplyContinuousMemory`` asks without ``continuous``)."""
    return (options.reuse and unit.reusable and unit.zero_copy is None and not unit.atomic
            and not (unit.continuous and unit.kind == "group" and unit.id.endswith("#in")))


def first_stage(units, steps: int, options, max_block: bool = False) -> tuple[list[Block], dict[str, Block]]:
    """The topological walk (AssignMemoryWithReuse, ApplyMemory): returns the block list in creation order
    and unit id -> block.

    Per step, in this order: the previous step's workspaces are released, the step's outputs then its
    workspaces get blocks, the outputs whose life ends here are released. Every unit's events are keyed
    by (step, phase) and sorted stably, so each (step, phase) keeps unit order and one pass over the
    events replays that walk (a sort, not one list per (step, phase): 400k empty lists at 100k steps
    cost half the walk)."""
    events: list[tuple] = []
    for u in units:
        if u.atomic:
            continue
        workspace = u.kind == "workspace"
        reuse = _may_reuse(u, options)
        key = _pool_key(u, options, max_block) if reuse else None
        events.append((4 * u.alloc_step + (2 if workspace else 1), True, u, key))
        if reuse:
            # ReleaseMemory: an output nobody reads is released at the next node; workspaces at the next step's start.
            release = u.last + 1 if u.unconsumed or workspace else u.last
            if release <= steps:  # later than the last step: nothing asks for a block after it
                events.append((4 * release + (0 if workspace else 3), False, u, key))
    events.sort(key=itemgetter(0))   # stable: within one (step, phase), unit order
    pool: dict = defaultdict(deque)
    blocks: list[Block] = []
    block_of: dict[str, Block] = {}
    fifo = options.mem_release_first_reuse_first
    for _, alloc, u, key in events:
        if not alloc:
            pool[key].append(block_of[u.id])
            continue
        queue = pool.get(key) if key is not None else None
        if queue:
            block = queue.popleft() if fifo else queue.pop()
            block.units.append(u)
            if u.size > block.real:
                block.real = u.size
            if u.last > block.end:
                block.end = u.last
        else:
            block = Block(len(blocks), u, options)
            blocks.append(block)
        block_of[u.id] = block
    return blocks, block_of


def regroup_continuous(blocks: list[Block]) -> list[Block]:
    """AssignContinuousBlocks (2.5.6): the continuous inputs' blocks move to the end, order kept (GE moves
    those of ``node_continuous_input_blocks_`` only: a continuous output's block stays where it is)."""
    return ([b for b in blocks if not _feeds_continuous_input(b)]
            + [b for b in blocks if _feeds_continuous_input(b)])


def assign_blocks(units, steps: int, options, max_block: bool = False) -> tuple[list[Block], dict[str, Block]]:
    """Stages 1-3 of one GE planner (binary-block, or max-block with ``max_block``).

    With reuse off, and always for the max-block planner, the order is creation order (AssignMemoryWithReuse): GE's
    ``MaxBlockMemAssigner::NeedLevel2Reuse()`` is false, so ``ReuseBlocksByLifeTime`` neither sorts nor
    merges its blocks (MaxBlockMemAssigner::NeedLevel2Reuse); only the binary planner runs level 2.
    """
    blocks, block_of = first_stage(units, steps, options, max_block)
    if options.reuse and not max_block:
        blocks = level_two(blocks, options)
    return regroup_continuous(blocks), block_of
