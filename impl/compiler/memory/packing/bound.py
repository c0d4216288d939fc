"""The lower bound of a packing problem: no packing of the buffers needs less.

This is the one home of the bare-buffer bound (XLA's
``NoFragmentationStatsHeap``, TVM USMP's ``memory_pressure``); ``arena == lower_bound`` certifies a packing optimal.
"""
from __future__ import annotations


def lower_bound(buffers) -> int:
    """Max over steps of the summed sizes live at that step (one sorted sweep).

    With half-open lifetimes a buffer ending at ``t`` and one starting at ``t``
    are never live together, so at equal times the ends are applied first.
    For intervals this equals the heaviest clique (intervals have the Helly property).
    """
    events = sorted([(b.lower, 1, b.size) for b in buffers] + [(b.upper, 0, -b.size) for b in buffers])
    live = best = 0
    for _, _, delta in events:
        live += delta
        best = max(best, live)
    return best
