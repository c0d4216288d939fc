"""Small helpers the claim modules share: rounding, alias families, and interval sweeps.

The sweeps recompute overlaps from the observation itself (first/last and
offsets); they never trust a planner's own bookkeeping.
"""
from __future__ import annotations

import bisect
import heapq
from typing import Iterator

from zcspec.spec.observables.plan import ContinuousGroup, ContinuousOutputs, Family, PlanObservation

# Where GE's memory assignment lives in mirror-cann/ge: the prefix of the plan claims' GE sources.
GE_MEM = "compiler/graph/build/memory/"


def align_up(n: int, granularity: int) -> int:
    """``n`` rounded up to a multiple of ``granularity`` (0 stays 0, as GE's mem_reuse_strategy.cc AlignMemOffset)."""
    return -(-n // granularity) * granularity if n > 0 else 0


def continuous_inputs(plan: PlanObservation) -> tuple[ContinuousGroup, ...]:
    """The continuous-input groups GE plans as such: a node whose op type asks for continuous inputs has
    them only with more than one input; with one it is planned as an ordinary op
    (mem_layout_conflict_util.cc ``MemLayoutConflictUtil::IsContinuousInput`` and
    mem_reuse_strategy.cc ``MemReuseUtils::IsNoPaddingContinuousInput`` ask for more than one input anchor). The observation
    lists every node carrying the attribute; this is the spec's one home for the input-count rule."""
    return tuple(g for g in plan.continuous_groups if len(g.tensors) > 1)


def continuous_outputs(plan: PlanObservation) -> tuple[ContinuousOutputs, ...]:
    """The nodes GE gives continuous outputs: the attribute and two or more outputs
    (``MemLayoutConflictUtil::IsContinuousOutput``); with one output the node is planned as an ordinary op."""
    return tuple(g for g in plan.continuous_outputs if len(g.tensors) > 1)


def families(plan: PlanObservation) -> list[Family]:
    """Tensors grouped by the root of their alias chain: aliases share their root's memory, so a
    family's bytes are the hull of its members' ranges and its life the hull of their lifetimes."""
    return list(plan.families)


def time_overlapping_pairs(items: list[Family]) -> Iterator[tuple[Family, Family]]:
    """Every pair whose inclusive lifetimes intersect, by a sweep sorted by ``first``:
    O(N log N + P) for P such pairs."""
    items = sorted(items, key=lambda f: (f.first, f.root))
    live: list[tuple[int, int, Family]] = []  # heap of (last, seq, family)
    for seq, f in enumerate(items):
        while live and live[0][0] < f.first:
            heapq.heappop(live)
        for _, _, other in live:
            yield other, f
        heapq.heappush(live, (f.last, seq, f))


def space_time_overlaps(items: list[Family]) -> Iterator[tuple[Family, Family]]:
    """Every pair that overlaps both in bytes and in lifetime.

    A sweep over time keeps the live families sorted by offset, so a new one is
    compared only with its neighbours in address order: exact and near-linear
    while the live set is disjoint (a valid plan). Once an overlap has been
    found the live set is no longer disjoint, and the sweep falls back to
    comparing with every live family so no further pair is missed.
    """
    items = sorted((f for f in items if f.end > f.offset), key=lambda f: (f.first, f.root))
    by_last: list[tuple[int, int]] = []      # heap of (last, seq)
    live: list[tuple[int, int]] = []         # sorted (offset, seq)
    fam: dict[int, Family] = {}
    dirty = False
    for seq, f in enumerate(items):
        while by_last and by_last[0][0] < f.first:
            _, old = heapq.heappop(by_last)
            live.pop(bisect.bisect_left(live, (fam[old].offset, old)))
            del fam[old]
        found = list(_all_overlapping(live, fam, f) if dirty else _near_overlapping(live, fam, f))
        dirty = dirty or bool(found)
        yield from ((other, f) for other in found)
        fam[seq] = f
        bisect.insort(live, (f.offset, seq))
        heapq.heappush(by_last, (f.last, seq))


def _all_overlapping(live, fam, f) -> Iterator[Family]:
    for _, s in live:
        if fam[s].offset < f.end and f.offset < fam[s].end:
            yield fam[s]


def _near_overlapping(live, fam, f) -> Iterator[Family]:
    i = bisect.bisect_left(live, (f.end, -1))
    # Live families starting inside f's range overlap it.
    j = bisect.bisect_left(live, (f.offset, -1))
    for _, s in live[j:i]:
        yield fam[s]
    # Those starting before it overlap only if they reach past its start; in a
    # disjoint live set ends grow with offsets, so stop at the first that does not.
    for _, s in reversed(live[:j]):
        if fam[s].end <= f.offset:
            break
        yield fam[s]


def byte_overlaps(items: list[Family], targets: list[Family]) -> Iterator[tuple[Family, Family]]:
    """For each target, every other family in its region whose bytes intersect it, at any time
    (each unordered pair once)."""
    by_region: dict[str, list[Family]] = {}
    for f in items:
        if f.end > f.offset:
            by_region.setdefault(f.region, []).append(f)
    index = {}
    for region, fs in by_region.items():
        fs.sort(key=lambda f: (f.offset, f.root))
        prefix, best = [], -1
        for f in fs:
            best = max(best, f.end)
            prefix.append(best)
        index[region] = (fs, [f.offset for f in fs], prefix)
    seen: set[frozenset] = set()
    for t in targets:
        if t.region not in index or t.end <= t.offset:
            continue
        fs, offsets, prefix = index[t.region]
        hi = bisect.bisect_left(offsets, t.end)
        for k in range(hi - 1, -1, -1):
            if prefix[k] <= t.offset:
                break
            pair = frozenset((t.root, fs[k].root))
            if fs[k].root != t.root and fs[k].end > t.offset and pair not in seen:
                seen.add(pair)  # two targets overlapping each other are one finding, not two
                yield t, fs[k]


def write_steps(plan: PlanObservation) -> dict[str, set[int]]:
    """The steps that write each tensor the plan says anything about: its ``writes`` and the step of its
    producer node (``producers``). A tensor listed in ``writes`` with no steps maps to an empty set."""
    at = {n: i for i, n in enumerate(plan.order)}
    out = {name: set(steps) for name, steps in plan.writes.items()}
    for name, node in plan.producers.items():
        out.setdefault(name, set()).add(at[node])
    return out
