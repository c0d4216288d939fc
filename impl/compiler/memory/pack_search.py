"""Exact search for a packing that fits a capacity (MiniMalloc's ideas, M. D. Moffitt, ASPLOS '23).

The search only builds *canonical* solutions (planning-facts.md): buffers are
placed in non-decreasing offset order, each at the lowest offset its
already-placed time-overlapping neighbours allow (its "min offset"). Any
feasible packing can be pushed down into such a form, so searching them only
loses nothing. At each node:

- the candidates are the unplaced buffers ordered by (min offset, static
  rank); canonical order skips those below the last placed offset (or at it
  with a smaller rank);
- dominance: a candidate whose min offset is at or above the lowest possible
  top (min offset + size) of any unplaced buffer is skipped: that buffer
  could always be slid into the gap below, so the branch has no canonical
  solution;
- section inference: time is cut into sections (between consecutive lifetime
  ends); in each, everything still unplaced must stack above both the
  section's current top and the last placed offset; beyond the capacity the
  branch is pruned;
- dynamic decomposition: once every buffer crossing a section boundary is
  placed, the two sides are independent and solved one after the other;
- the static rank is tried with several heuristics in round robin with a node
  limit that doubles each round, so one bad ordering cannot stall the search.

Time is spent in numpy on arrays indexed by buffer (min offsets) and by
section (tops and remaining sizes), so one node costs a few dozen vector ops.
"""
from __future__ import annotations

import sys
import time

import attrs
import numpy as np


@attrs.frozen(eq=False)
class SearchResult:
    """``offsets`` when a packing within the capacity was found, else None.

    ``exhausted``: the search space was fully explored, so no packing fits
    (a proof of infeasibility). ``nodes``: search nodes expanded.
    """

    offsets: np.ndarray | None
    exhausted: bool
    nodes: int


class _Abort(Exception):
    """Node limit or deadline reached: unwind the recursion."""


def default_budget(n: int) -> int:
    """Node budget of the default (no capacity) improvement stage: small, and deterministic."""
    return 2000 + 40 * n


# Static orderings (MiniMalloc's "WAT", "TAW", "TWA"): W lifetime length, A area,
# T the largest total size live in any of the buffer's sections; all descending.
HEURISTICS = ("WAT", "TAW", "TWA")


class _Sections:
    """The sweep: sections between consecutive lifetime boundaries, and who overlaps whom."""

    def __init__(self, inst):
        times = np.unique(np.concatenate([inst.lower, inst.upper]))
        self.first = np.searchsorted(times, inst.lower)  # first section of each buffer
        self.end = np.searchsorted(times, inst.upper)  # one past its last section
        self.count = max(len(times) - 1, 0)
        cover = np.zeros(self.count + 1, np.int64)
        np.add.at(cover, self.first, inst.size)
        np.add.at(cover, self.end, -inst.size)
        self.total = np.cumsum(cover)[:-1]  # bytes live in each section
        crossing = np.zeros(self.count + 1, np.int64)
        np.add.at(crossing, self.first, 1)
        np.add.at(crossing, self.end - 1, -1)
        self.cuts = np.cumsum(crossing)[:-1]  # buffers spanning boundary s | s+1
        self.twins = _twins(inst)
        # Sections just before a lifetime end hold maximal sets of live buffers.
        self.cliques = np.unique(self.end - 1)
        self.overlaps = [None] * len(inst)
        for b in range(len(inst)):
            self.overlaps[b] = np.flatnonzero((inst.lower < inst.upper[b]) & (inst.lower[b] < inst.upper)
                                              & (np.arange(len(inst)) != b))

    def peak(self, b) -> int:
        return int(self.total[self.first[b]:self.end[b]].max())


def _twins(inst) -> list:
    """Per buffer, the other buffers with the same lifetime (None if none or if aligned)."""
    groups: dict = {}
    for b, key in enumerate(zip(inst.lower.tolist(), inst.upper.tolist())):
        groups.setdefault(key, []).append(b)
    twins = [None] * len(inst)
    if len(inst) and int(inst.align.max()) > 1:
        return twins  # swapping twins could break an alignment
    for members in groups.values():
        for b in members if len(members) > 1 else ():
            twins[b] = np.array([m for m in members if m != b], np.int64)
    return twins


def _ranks(inst, sections: _Sections, heuristic: str) -> np.ndarray:
    """Rank of each buffer in the static order (0 first); ties by position."""
    keys = {
        "W": inst.upper - inst.lower,
        "A": (inst.upper - inst.lower) * inst.size,
        "T": np.array([sections.peak(b) for b in range(len(inst))], np.int64),
        "Z": inst.size,
        "L": inst.lower,
        "U": inst.upper,
    }
    cols = [np.arange(len(inst))] + [-keys[c] for c in reversed(heuristic)]
    order = np.lexsort(cols)
    ranks = np.empty(len(inst), np.int64)
    ranks[order] = np.arange(len(inst))
    return ranks


def search(inst, capacity: int, *, deadline: float | None = None, node_budget: int | None = None) -> SearchResult:
    """Find offsets with every ``offset + size <= capacity``, or prove there are none.

    ``node_budget`` bounds the nodes over all rounds and ``deadline`` (a
    ``time.monotonic()`` value) the time; when either runs out the result has
    ``offsets=None, exhausted=False``. Deterministic for a given budget.
    """
    n = len(inst)
    if n == 0:
        return SearchResult(np.zeros(0, np.int64), True, 0)
    if int(inst.size.max()) > capacity:
        return SearchResult(None, True, 0)
    sections = _Sections(inst)
    if int(sections.total.max()) > capacity:
        return SearchResult(None, True, 0)
    nodes, limit = 0, 2 * n
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20 * n + 1000))
    try:
        while True:
            for heuristic in HEURISTICS:
                cap_nodes = limit if node_budget is None else min(limit, node_budget - nodes)
                if cap_nodes <= 0:
                    return SearchResult(None, False, nodes)
                run = _Run(inst, sections, _ranks(inst, sections, heuristic), capacity, cap_nodes, deadline)
                found = run.solve()
                nodes += run.nodes
                if found is not None:  # solved, or proved infeasible
                    return SearchResult(run.solution if found else None, not found, nodes)
                if deadline is not None and time.monotonic() > deadline:
                    return SearchResult(None, False, nodes)
            limit *= 2
    finally:
        sys.setrecursionlimit(old)


class _Run:
    """One depth-first search with one static rank and a node limit."""

    def __init__(self, inst, sections: _Sections, rank, capacity, node_limit, deadline):
        self.inst, self.sec, self.rank = inst, sections, rank
        self.cap, self.limit, self.deadline = capacity, node_limit, deadline
        n = len(inst)
        self.key_scale = n
        self.mo = np.zeros(n, np.int64)  # lowest offset each unplaced buffer can take
        self.placed = np.zeros(n, bool)
        self.left = sections.total.copy()  # unplaced bytes per section
        self.cuts = sections.cuts.copy()
        self.solution = np.zeros(n, np.int64)
        self.nodes = 0
        self.off = np.zeros(n, np.int64)  # offsets of placed buffers
        self.twins = sections.twins
        self.memo: dict = {}
        self.hits = self.misses = 0
        self.floors = True
        self.cliques = sections.cliques
        self.cover = (sections.first[:, None] <= self.cliques) & (self.cliques < sections.end[:, None])

    def solve(self):
        """True: solved; None: limit or deadline hit (not a proof); False: infeasible."""
        try:
            return self._partition(np.arange(len(self.inst)), 0, self.sec.count)
        except _Abort:
            return None

    def _partition(self, part, s_lo, s_hi) -> bool:
        """Solve the independent sub-problems of ``part`` split at boundaries nobody crosses."""
        first, end = self.sec.first[part], self.sec.end[part]
        bounds = [s_lo] + [int(s) + 1 for s in np.flatnonzero(self.cuts[s_lo:s_hi - 1] == 0) + s_lo] + [s_hi]
        for a, b in zip(bounds, bounds[1:]):
            sub = part[(first < b) & (end > a)]
            sub = sub[~self.placed[sub]]
            if len(sub) and not self._solve_sub(sub, a, b):
                return False
        return True

    def _solve_sub(self, sub, a, b) -> bool:
        """One independent sub-problem, memoised: its outcome depends only on who is
        left in it and their min offsets, and backtracking above often meets it again."""
        key = (a, b, sub.tobytes(), self.mo[sub].tobytes())
        hit = self.memo.get(key)
        if hit is None:
            found = self._dfs(sub, a, b, -1, -1)
            hit = self.memo[key] = self.solution[sub].copy() if found else False
            self.misses += 1
        else:
            self.hits += 1
        if hit is False:
            return False
        self.solution[sub] = hit
        return True

    def _dfs(self, part, s_lo, s_hi, last_off, last_rank) -> bool:
        self.nodes += 1
        if self.nodes > self.limit or (self.deadline is not None and self.nodes % 256 == 0
                                       and time.monotonic() > self.deadline):
            raise _Abort
        un = part[~self.placed[part]]
        if not len(un):
            return True
        mo, rank = self.mo[un], self.rank[un]
        left = self.left[s_lo:s_hi]
        lowest_top = int((mo + self.inst.size[un]).min())
        # Placing c at mo[c] leaves every section's remaining bytes to stack above
        # mo[c] (offsets never decrease): the fullest section decides.
        ok = (mo < lowest_top) & (mo <= self.cap - int(left.max()))
        ok &= (mo > last_off) | ((mo == last_off) & (rank > last_rank))
        cands = un[ok]
        cands = cands[np.argsort(self.mo[cands] * self.key_scale + self.rank[cands])]
        for c in cands.tolist():
            if self.twins[c] is not None and self._mirrored(c):
                continue
            found, hatless = self._try(c, part, s_lo, s_hi)
            if found:
                return True
            if hatless:
                # Nothing unplaced sits above c, so placing it changed no other
                # buffer's options: every sibling branch fails the same way.
                return False
        return False

    def _floors_fit(self, un, lo, hi, last_off) -> bool:
        """Stacking bound per clique section: buffers with min offset >= m all lie above m.

        In a section, sort the unplaced buffers by min offset (raised to the
        last placed offset: offsets never decrease); for each, its min offset
        plus the sizes of all those at or above it must fit in the capacity.
        Only maximal cliques (sections just before a lifetime end) are checked:
        a section whose buffers are a subset of another's gives a weaker bound.
        """
        a, b = np.searchsorted(self.cliques, (lo, hi))
        if a == b or not len(un):
            return True
        mo = self.mo[un]
        order = np.argsort(-mo, kind="stable")
        rows = un[order]
        cov = self.cover[rows, a:b]
        stacked = np.cumsum(cov * self.inst.size[rows, None], axis=0)
        stacked += np.maximum(mo[order], last_off)[:, None]
        return int((stacked * cov).max()) <= self.cap

    def _mirrored(self, c) -> bool:
        """Symmetry: c would sit right on a twin (same lifetime) of higher rank.

        Two twins stacked directly can swap places without touching anything
        else, so only the order with ranks increasing upwards is searched.
        """
        twins = self.twins[c]
        twins = twins[self.placed[twins]]
        hit = (self.off[twins] + self.inst.size[twins] == self.mo[c]) & (self.rank[twins] > self.rank[c])
        return bool(hit.any())

    def _still_fits(self, part, c, ov, old_mo, s_lo, s_hi, off) -> bool:
        """Re-check the stacking bound where placing ``c`` changed it: its own
        sections and those of the buffers whose min offset rose. Elsewhere only
        the raised last offset matters, which the candidate filter covered."""
        if not self.floors:
            return True
        sec = self.sec
        changed = ov[self.mo[ov] > old_mo]
        lo, hi = int(sec.first[c]), int(sec.end[c])
        if len(changed):
            lo, hi = min(lo, int(sec.first[changed].min())), max(hi, int(sec.end[changed].max()))
        return self._floors_fit(part[~self.placed[part]], max(lo, s_lo), min(hi, s_hi), off)

    def _try(self, c, part, s_lo, s_hi) -> tuple[bool, bool]:
        inst, sec = self.inst, self.sec
        off = int(self.mo[c])
        height = off + int(inst.size[c])
        s0, s1 = int(sec.first[c]), int(sec.end[c])
        ov = sec.overlaps[c]
        ov = ov[~self.placed[ov]]
        old_mo = self.mo[ov]
        align = inst.align[ov]
        self.mo[ov] = np.maximum(old_mo, -(-height // align) * align)
        self.placed[c] = True
        self.off[c] = off
        self.left[s0:s1] -= inst.size[c]
        found = False
        if self._still_fits(part, c, ov, old_mo, s_lo, s_hi, off):
            self.cuts[s0:s1 - 1] -= 1
            if s1 - 1 > s0 and not self.cuts[s0:s1 - 1].all():
                found = self._partition(part, s_lo, s_hi)
            else:
                found = self._dfs(part, s_lo, s_hi, off, int(self.rank[c]))
            self.cuts[s0:s1 - 1] += 1
        self.left[s0:s1] += inst.size[c]
        self.placed[c] = False
        self.mo[ov] = old_mo
        if found:
            self.solution[c] = off
        return found, not len(ov)
