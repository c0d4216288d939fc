"""Independent oracles for the packer tests: they share no code with the packer."""
from __future__ import annotations

import itertools


def overlapping_pairs(buffers):
    """Pairs (i, j) whose half-open lifetimes intersect, by a sweep sorted by start."""
    order = sorted(range(len(buffers)), key=lambda i: buffers[i].lower)
    live, pairs = [], []
    for i in order:
        live = [j for j in live if buffers[j].upper > buffers[i].lower]
        pairs += [(j, i) for j in live]
        live.append(i)
    return pairs


def layout_errors(buffers, offsets) -> list[str]:
    """Every rule a packing breaks: memory overlap of time-overlapping buffers, alignment, sign."""
    errors = []
    for b in buffers:
        o = offsets[b.id]
        if o < 0 or o % b.align:
            errors.append(f"{b.id} at {o} (align {b.align})")
    for i, j in overlapping_pairs(buffers):
        a, b = buffers[i], buffers[j]
        oa, ob = offsets[a.id], offsets[b.id]
        if oa < ob + b.size and ob < oa + a.size:
            errors.append(f"{a.id}@{oa}+{a.size} overlaps {b.id}@{ob}+{b.size}")
    return errors


def max_live(buffers) -> int:
    """The lower bound by brute force over every step."""
    steps = {b.lower for b in buffers}
    return max((sum(b.size for b in buffers if b.lower <= t < b.upper) for t in steps), default=0)


def optimum(buffers) -> int:
    """The smallest arena, by trying every order with lowest-feasible placement.

    Complete: place the buffers of an optimal packing in offset order, each at
    the lowest aligned offset free of the ones already placed; by induction no
    buffer ends up higher than in the optimal packing.
    """
    best = None
    for perm in itertools.permutations(buffers):
        placed, top = [], 0
        for b in perm:
            o = _lowest(b, placed)
            placed.append((b, o))
            top = max(top, o + b.size)
            if best is not None and top >= best:
                break
        else:
            best = top if best is None else min(best, top)
    return best or 0


def _lowest(b, placed) -> int:
    near = [(o, o + p.size) for p, o in placed if p.lower < b.upper and b.lower < p.upper]
    for start in sorted({0} | {-(-end // b.align) * b.align for _, end in near}):
        if all(start + b.size <= lo or hi <= start for lo, hi in near):
            return start
    raise AssertionError("unreachable: the top is always free")
