"""The greedy fit written plainly: the reference the compiled passes of packing/fit.py are held to."""
from __future__ import annotations


def plain_fit(buffers, order, first):
    """Greedy placement written plainly, for reference: every placed time neighbour, by offset."""
    offsets, placed = {}, []
    for k in order:
        b = buffers[k]
        near = sorted((offsets[p.id], offsets[p.id] + p.size) for p in placed if p.lower < b.upper and b.lower < p.upper)
        top, choice = 0, None
        for off, end in near:
            start = -(-top // b.align) * b.align
            if off - start >= b.size and (choice is None or (not first and off - start < choice[0])):
                choice = (off - start, start)
                if first:
                    break
            top = max(top, end)
        offsets[b.id] = choice[1] if choice else -(-top // b.align) * b.align
        placed.append(b)
    return [offsets[b.id] for b in buffers]
