"""The exact optimum of small feature-map instances, and a strategy's gap to it.

Dynamic storage allocation is NP-complete and Z3 is no optimizer at scale
(on MiniMalloc's challenging instances, github google/minimalloc, it did not answer
one bisection probe within 60 s), so this is for small plans, up to about 40 buffers: enough to measure how
far a planning strategy is from the optimum on real subgraphs and on the
golden records.

Method: lower bound ``LB`` = the heaviest step (XLA's ``NoFragmentationStatsHeap``,
TVM USMP's ``memory_pressure``); upper bound = greedy by size with best fit (TFLite's
``GreedyBySizeAssignment``). Then bisection on the arena with one incremental
Z3 solver: offsets ``o_i`` with ``0 <= o_i`` (each a multiple of its alignment when one is given), ``o_i + s_i <= arena`` and, for each
lifetime-overlapping pair (and only those, found by the sweep),
``o_i + s_i <= o_j or o_j + s_j <= o_i``. Sizes (and alignments) are divided by their gcd
first: an optimal layout can always be pushed down until every offset is 0, or the end of
another buffer rounded up to its alignment, so offsets in units of that gcd lose nothing.
"""
from __future__ import annotations

import math
import time
from typing import Mapping, Sequence

import attrs
import z3

from zcspec.checks.proofs.layout import read_layout
from zcspec.checks.proofs.sweep import overlapping_pairs
from zcspec.impl.compiler.memory.packing import Buffer
from zcspec.impl.compiler.memory.packing.bound import lower_bound as packing_bound

OPTIMAL, UNKNOWN = "optimal", "unknown"


@attrs.frozen
class Optimum:
    arena: int                  # the smallest arena found (proved minimal when status is "optimal")
    lower_bound: int            # the largest arena proved infeasible plus one (at least LB)
    status: str                 # "optimal" | "unknown" (time ran out between lower_bound and arena)
    offsets: tuple[int, ...]    # a layout reaching ``arena``


@attrs.frozen
class Gap:
    strategy_arena: int         # the plan's feature-map region size
    optimum: Optimum
    ratio: float                # strategy_arena / optimum.arena (>= 1 when the optimum is proved)


def lower_bound(buffers: Sequence[tuple[int, int, int]]) -> int:
    """Max over steps of the summed sizes alive; ``buffers`` are (size, first, last), inclusive.

    The packer's bound (its one home). Sharing it cannot make a proof wrong: the bound only lets the
    search stop early once a packing reaches it, and no packing can go below the true bound."""
    return packing_bound([Buffer(str(i), f, l + 1, s) for i, (s, f, l) in enumerate(buffers)])


def greedy_by_size(buffers: Sequence[tuple[int, int, int]]) -> tuple[list[int], int]:
    """Largest first, each at the smallest gap among placed time-overlapping buffers that fits
    (best fit), else after the highest one; returns (offsets, arena)."""
    neighbours: list[set[int]] = [set() for _ in buffers]
    for i, j in overlapping_pairs([(f, l) for _, f, l in buffers]):
        neighbours[i].add(j)
        neighbours[j].add(i)
    offsets: list[int | None] = [None] * len(buffers)
    for k in sorted(range(len(buffers)), key=lambda k: (-buffers[k][0], k)):
        size = buffers[k][0]
        placed = sorted((offsets[n], offsets[n] + buffers[n][0]) for n in neighbours[k] if offsets[n] is not None)
        best, at, top = None, 0, 0
        for lo, hi in placed:
            if lo - at >= size and (best is None or lo - at < best[0]):
                best = (lo - at, at)
            at = max(at, hi)
            top = max(top, hi)
        offsets[k] = best[1] if best else top
    return offsets, max((o + s for o, (s, _, _) in zip(offsets, buffers)), default=0)


def _model(buffers, unit, aligns):
    """Offsets in units of ``unit``, each a multiple of its alignment (``aligns[i] // unit`` units)."""
    ks = [z3.Int(f"k{i}") for i in range(len(buffers))]
    offs = [k * (a // unit) for k, a in zip(ks, aligns)]
    arena = z3.Int("arena")
    solver = z3.Solver()
    for k, o, (s, _, _) in zip(ks, offs, buffers):
        solver.add(k >= 0, o + s // unit <= arena)
    for i, j in overlapping_pairs([(f, l) for _, f, l in buffers]):
        si, sj = buffers[i][0] // unit, buffers[j][0] // unit
        if si and sj:
            solver.add(z3.Or(offs[i] + si <= offs[j], offs[j] + sj <= offs[i]))
    return solver, ks, offs, arena


def _stacked(buffers, aligns) -> tuple[list[int], int]:
    """No reuse at all: each buffer above the previous one, at its alignment."""
    offsets, top = [], 0
    for (s, _, _), a in zip(buffers, aligns):
        offsets.append(-(-top // a) * a)
        top = offsets[-1] + s
    return offsets, top


def optimal_layout(buffers: Sequence[tuple[int, int, int]], *, timeout_ms: int = 10_000,
                   start: str = "greedy", aligns: Sequence[int] | None = None) -> Optimum:
    """The smallest arena for ``buffers`` = (size, first, last), with a layout reaching it.

    ``start``: the first upper bound, "greedy" (greedy by size) or "stacked" (no reuse;
    makes the solver do all the work, which tests use to exercise it). ``aligns``: each offset
    must be a multiple of its buffer's (default 1 each); with any alignment above 1 the start
    is "stacked" (the greedy ignores alignments).
    """
    if any(s < 0 or f > l for s, f, l in buffers):
        raise ValueError("buffers must be (size >= 0, first, last) with first <= last")
    if start not in ("greedy", "stacked"):
        raise ValueError(f"start={start!r}: expected 'greedy' or 'stacked'")
    aligns = [1] * len(buffers) if aligns is None else [int(a) for a in aligns]
    if len(aligns) != len(buffers) or any(a < 1 for a in aligns):
        raise ValueError("aligns must give one alignment >= 1 per buffer")
    aligned = any(a > 1 for a in aligns)
    offsets, hi = greedy_by_size(buffers) if start == "greedy" and not aligned else _stacked(buffers, aligns)
    lo = lower_bound(buffers)
    unit = math.gcd(*(s for s, _, _ in buffers), *aligns) or 1
    solver, ks, offs, arena = _model(buffers, unit, aligns)
    deadline = time.monotonic() + timeout_ms / 1000
    probe = lo   # the lower bound first: it is often the optimum
    while lo < hi:
        left = int((deadline - time.monotonic()) * 1000)
        if left <= 0:
            break
        solver.set("timeout", left)
        solver.push()
        solver.add(arena <= probe // unit)
        answer = solver.check()
        if answer == z3.sat:
            m = solver.model()
            offsets = [m.eval(o, model_completion=True).as_long() * unit for o in offs]
            hi = max((o + s for o, (s, _, _) in zip(offsets, buffers)), default=0)
        elif answer == z3.unsat:
            lo = (probe // unit + 1) * unit
        solver.pop()
        if answer == z3.unknown:
            break
        probe = (lo + hi) // 2 // unit * unit
    return Optimum(hi, min(lo, hi), OPTIMAL if lo >= hi else UNKNOWN, tuple(offsets))


def optimal_arena(buffers: Sequence[tuple[int, int, int]], *, timeout_ms: int = 10_000) -> tuple[int, str]:
    """(smallest arena found, "optimal" | "unknown") for ``buffers`` = (size, first, last)."""
    best = optimal_layout(buffers, timeout_ms=timeout_ms)
    return best.arena, best.status


def feature_map_buffers(plan: Mapping) -> list[tuple[int, int, int]]:
    """The plan's feature-map tensors as (extent, first, last), one per alias root: an alias
    shares its root's memory, which must then stay intact over the union of their lifetimes."""
    groups: dict[str, list] = {}
    for t in read_layout(plan).tensors:
        if t.alloc == "feature_map":
            groups.setdefault(t.root, []).append(t)
    out = []
    for root, ts in groups.items():
        size = next((t.extent for t in ts if t.name == root), max(t.extent for t in ts))
        out.append((size, min(t.first for t in ts), max(t.last for t in ts)))
    return out


def gap(plan: Mapping, *, timeout_ms: int = 10_000) -> Gap:
    """How far the plan's feature-map region is from the optimum of its own tensors."""
    best = optimal_layout(feature_map_buffers(plan), timeout_ms=timeout_ms)
    strategy = int(plan["regions"].get("feature_map", 0))
    return Gap(strategy, best, strategy / best.arena if best.arena else 1.0)
