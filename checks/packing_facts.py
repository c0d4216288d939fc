"""Facts about a packing problem the checker computes on its own, to judge the packer by.

Nothing here imports the packer (impl/compiler/memory/packing): a bug there cannot hide itself
in the facts it is judged against. Buffers are anything with ``id``, ``lower``, ``upper``
(half-open), ``size`` and ``align``.

- :func:`max_live`: the heaviest step (no packing's arena is smaller; docs/packing.md "lower_bound");
- :func:`greedy_by_size`: the documented stage 1 of ``pack()`` (sizes descending, ties by start
  then position; best fit: the smallest aligned gap among the placed time-neighbours, the lowest
  on ties, else on top) and ``zcspec plan --buffers --strategy ge`` (the same order, first fit:
  the lowest such gap), offsets by id;
- :func:`planted`: an instance cut from a full ``steps x arena`` rectangle (guillotine cuts), so
  every step is full and the optimum is known without a solver: exactly ``arena``.
"""
from __future__ import annotations

import heapq
import random
from typing import NamedTuple


class Piece(NamedTuple):
    """A buffer as the checker writes it (the packer's ``Buffer`` has the same fields)."""

    id: str
    lower: int
    upper: int
    size: int
    align: int = 1


# Alignment puts the optimum (25) out of reach of the max-live bound (15) (tests/memory/test_pack_props.py
# proves 25 by brute force): a search at the bound is exhausted, every target below 25 must be proved.
GAPPED = (Piece("g0", 3, 6, 7, 2), Piece("g1", 0, 6, 1, 8), Piece("g2", 2, 4, 3, 2), Piece("g3", 3, 4, 3, 8),
          Piece("g4", 2, 4, 1, 8))


class Layout(NamedTuple):
    """Offsets by id and the arena they need: what ``packing_check.validate`` reads of a packing."""

    offsets: dict
    arena: int


def max_live(buffers) -> int:
    """Max over steps of the sizes live there; at equal steps ends apply before starts (half-open)."""
    events = sorted([(b.upper, 0, -b.size) for b in buffers] + [(b.lower, 1, b.size) for b in buffers])
    live = best = 0
    for _, _, delta in events:
        live += delta
        best = max(best, live)
    return best


def neighbours(buffers) -> list[list[int]]:
    """Per position, the positions of the buffers whose lifetime intersects its own (a sweep by start)."""
    near: list[list[int]] = [[] for _ in buffers]
    active: list[int] = []
    for i in sorted(range(len(buffers)), key=lambda i: buffers[i].lower):
        b = buffers[i]
        active = [j for j in active if buffers[j].upper > b.lower]
        for j in active:
            near[i].append(j)
            near[j].append(i)
        active.append(i)
    return near


def _ceil(x: int, a: int) -> int:
    return -(-x // a) * a


def greedy_by_size(buffers, *, fit: str) -> dict[str, int]:
    """Offsets by id of greedy by size with ``fit`` "best" or "first" (module doc)."""
    if fit not in ("best", "first"):
        raise ValueError(f"fit={fit!r}: expected 'best' or 'first'")
    buffers = list(buffers)
    near = neighbours(buffers)
    offsets: list[int | None] = [None] * len(buffers)
    for k in sorted(range(len(buffers)), key=lambda i: (-buffers[i].size, buffers[i].lower, i)):
        size, align = buffers[k].size, buffers[k].align
        placed = sorted((offsets[j], offsets[j] + buffers[j].size) for j in near[k] if offsets[j] is not None)
        chosen, top = None, 0   # chosen: (gap, start) of the gap taken so far
        for lo, hi in placed:
            start = _ceil(top, align)
            gap = lo - start
            if gap >= size and (chosen is None or (fit == "best" and gap < chosen[0])):
                chosen = (gap, start)
            top = max(top, hi)
        offsets[k] = chosen[1] if chosen else _ceil(top, align)
    return {b.id: o for b, o in zip(buffers, offsets)}


def arena_of(buffers, offsets) -> int:
    """``max(offset + size)`` over ``buffers`` at ``offsets`` (by id), 0 when empty."""
    return max((offsets[b.id] + b.size for b in buffers), default=0)


def planted(rng: random.Random, count: int, *, steps: int, arena: int, aligned: bool = False,
            prefix: str = "p") -> list[Piece]:
    """``count`` buffers tiling ``[0, steps) x [0, arena)`` exactly, by repeated guillotine cuts
    of the largest piece (in time or in memory, at a random point). Every step holds ``arena``
    bytes, so :func:`max_live` is ``arena`` and the cut layout reaches it: the optimum is
    ``arena``. ``aligned``: each buffer gets the largest of 1, 2, 4, 8, 16 dividing its planted
    offset (half of them keep 1), so the planted layout stays feasible."""
    heap = [(-steps * arena, (0, steps, 0, arena))]   # (-area, (lower, upper, offset, size)): largest first
    pieces = []   # the ones no cut can split (one step, one byte)
    while heap and len(heap) + len(pieces) < count:
        _, piece = heapq.heappop(heap)
        lower, upper, offset, size = piece
        if upper - lower == 1 and size == 1:
            pieces.append(piece)
            continue
        if upper - lower > 1 and (size == 1 or rng.random() < 0.5):
            cut = rng.randrange(lower + 1, upper)
            halves = [(lower, cut, offset, size), (cut, upper, offset, size)]
        else:
            cut = rng.randrange(1, size)
            halves = [(lower, upper, offset, cut), (lower, upper, offset + cut, size - cut)]
        for half in halves:
            heapq.heappush(heap, (-(half[1] - half[0]) * half[3], half))
    pieces += [piece for _, piece in sorted(heap)]
    rng.shuffle(pieces)
    out = []
    for i, (lower, upper, offset, size) in enumerate(pieces):
        align = 1
        if aligned and rng.random() < 0.5:
            align = max(a for a in (1, 2, 4, 8, 16) if offset % a == 0)
        out.append(Piece(f"{prefix}{i}", lower, upper, size, align))
    return out
