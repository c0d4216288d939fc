"""DynamicBatchMemAssigner: per-batch branches share one region (GE:
dynamic_batch_mem_assigner.cc ``ResizeDynamicBatchBlocks``).

Only one batch branch runs per execution, so blocks of different batch labels
may overlap. Input: top-level, non-zero-copy blocks with a batch label that
are reusable or need one offset in all batches (SizeIndependentOfBatch). Three maps per label:

- continuous and same-offset blocks: each batch's blocks are wrapped in one
  virtual parent; the largest batch's wrapper adopts the others' as batch
  children, all starting at its head (ResizeDynamicBatchBlocks);
- ordinary blocks: the largest batch (by summed sizes) is wrapped into
  virtual parents, a new one whenever the next block would pass
  ``batch_split_size`` (GE's 400 MiB in extend-size memory mode; None: one
  parent). Each other batch, largest blocks first, fills the parents
  (largest first) while blocks fit, moving to the next parent at the first
  block that does not; blocks never placed stay top level (ResizeDynamicBatchBlocks).

Wrappers are appended after all other blocks (the batch region comes last), in GE's order
(``dynamic_batch_mem_assigner.cc`` ``ResizeDynamicBatchBlocks``): the ordinary blocks' parents, then
the same-offset wrapper, then the continuous one.
"""
from __future__ import annotations

from collections import defaultdict

from zcspec.impl.compiler.memory.layout import resize
from zcspec.impl.compiler.memory.memory_block import Block


def _eligible(b: Block) -> bool:
    return (b.parent is None and not b.virtual and b.zero_copy is None and b.batch != ""
            and (b.reusable or b.same_offset))


def _wrap(children: list[Block], next_id, batch: str, options) -> Block:
    w = Block(next_id(), None, options, virtual=True)
    w.batch = batch
    for c in children:
        c.parent = w
    w.children = list(children)
    return w


def _max_label(by_label: dict, options, memo) -> str:
    totals = {lab: sum(resize(b, options, memo) for b in bs) for lab, bs in by_label.items()}
    return max(sorted(totals), key=lambda lab: totals[lab])


def _wrap_all(by_label: dict, next_id, options, memo) -> list[Block]:
    if not by_label:
        return []
    top = _max_label(by_label, options, memo)
    main = _wrap(by_label[top], next_id, top, options)
    for lab in sorted(by_label):
        if lab != top:
            other = _wrap(by_label[lab], next_id, lab, options)
            other.parent = main
            main.batch_children[lab] = [other]
    return [main]


def _split_parents(blocks: list[Block], next_id, label: str, options, memo) -> list[Block]:
    parents, current, total = [], [], 0
    limit = options.batch_split_size
    for b in blocks:
        size = resize(b, options, memo)
        if current and limit is not None and total + size > limit:
            parents.append(_wrap(current, next_id, label, options))
            current, total = [], 0
        current.append(b)
        total += size
    if current:
        parents.append(_wrap(current, next_id, label, options))
    return parents


def _fill(parents: list[Block], blocks: list[Block], label: str, options, memo) -> None:
    pending = sorted(blocks, key=lambda b: -resize(b, options, memo))
    for p in sorted(parents, key=lambda p: -resize(p, options, memo)):
        room, fill, placed = resize(p, options, memo), 0, []
        for b in pending:
            size = resize(b, options, memo)
            if fill + size > room:
                break
            placed.append(b)
            fill += size
        if placed:
            p.batch_children[label] = placed
            for b in placed:
                b.parent = p
            pending = pending[len(placed):]


def assign_batches(blocks: list[Block], options) -> list[Block]:
    """ResizeDynamicBatchBlocks: the block list with batch wrappers appended (unchanged if no batches)."""
    memo: dict = {}
    counter = iter(range(len(blocks) + 10**9, 2 * (len(blocks) + 10**9)))
    next_id = counter.__next__
    maps = {"same": defaultdict(list), "continuous": defaultdict(list), "ordinary": defaultdict(list)}
    for b in blocks:
        if _eligible(b):
            kind = "same" if b.same_offset else "continuous" if b.continuous else "ordinary"
            maps[kind][b.batch].append(b)
    if not any(maps.values()):
        return blocks
    wrappers = []
    ordinary = maps["ordinary"]
    if ordinary:
        top = _max_label(ordinary, options, memo)
        parents = _split_parents(ordinary[top], next_id, top, options, memo)
        for lab in sorted(ordinary):
            if lab != top:
                _fill(parents, ordinary[lab], lab, options, memo)
        wrappers += parents
    wrappers += _wrap_all(maps["same"], next_id, options, memo) + _wrap_all(maps["continuous"], next_id, options, memo)
    return [b for b in blocks if b.parent is None] + wrappers
