"""Exact search for a packing that fits a capacity (MiniMalloc's ideas, M. D. Moffitt, ASPLOS '23).

The search only builds *canonical* solutions (planning-facts.md): buffers are
placed in non-decreasing offset order, each at the lowest offset its
already-placed time-overlapping neighbours allow (its "min offset"). Any
feasible packing can be pushed down into such a form, so searching them only
loses nothing. At each node:

- the candidates are the unplaced buffers ordered by (min offset, rank);
  canonical order skips those below the last placed offset (or at it with a
  smaller rank);
- dominance: a candidate whose min offset is at or above the lowest possible
  top (min offset + size) of any unplaced buffer is skipped: that buffer
  could always slide into the gap below, so the branch has no canonical
  solution;
- section inference: a candidate is tried only if the fullest section still
  fits above its offset; after a placement, in each changed maximal-clique
  section the unplaced buffers, sorted by min offset, must stack within the
  capacity (every buffer at or above offset m lies above m);
- an orphan (min offset below the last offset, no unplaced neighbour left to
  lift it) fails the node; a failed candidate with no unplaced neighbour
  ("hatless") fails its siblings too; twins (same lifetime) stacked directly
  are searched in one order only;
- dynamic decomposition: once every buffer crossing a section boundary is
  placed, the two sides are independent and solved one after the other.

:func:`search` restarts such runs as a portfolio (see its docstring). Time
goes to numpy on arrays indexed by buffer (min offsets) and by section
(remaining bytes), so one node costs a few dozen vector operations.
All rules are checked against a brute-force optimum in
tests/memory/test_pack_props.py.
"""
from __future__ import annotations

import sys
import time

import attrs
import numpy as np

from zcspec.impl.compiler.memory.packing.sweep import Sections, ranks, ranks_within, weighted_ranks


FLOORS_CELLS = 4_000_000  # largest rows x cliques block _floors_fit builds at once
NONE = np.zeros(0, np.int64)  # no clique overflows


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
    """Node budget of the default (no capacity) improvement stage: deterministic, and
    shrinking on large instances where one node costs O(n)."""
    return int(max(200, min(2000 + 40 * n, 2e7 // max(n, 1))))


def search(inst, capacity: int, *, deadline: float | None = None, node_budget: int | None = None) -> SearchResult:
    """Find offsets with every ``offset + size <= capacity``, or prove there are none.

    A portfolio of restarted depth-first runs, two streams taking turns (the
    one that has spent fewer nodes goes next), because the hard instances
    split between them:

    - MiniMalloc's round robin: static orders "TWA", "WAT", "TAW" in turn,
      the node limit doubling after each round (from 2n);
    - weighted degree: short runs (RESTART_UNIT nodes, growing by one unit
      every 100 runs) that rank first the buffers living in the sections where
      its earlier runs failed most (learned from section-inference failures),
      ties by "TWA".

    Limits grow without end, so the search stays complete: a run that ends
    within its limit either found a packing or proved there is none.
    ``node_budget`` bounds the nodes over all runs and ``deadline`` (a
    ``time.monotonic()`` value) the time; when either runs out the result has
    ``offsets=None, exhausted=False``. Deterministic for a given budget.
    """
    n = len(inst)
    if n == 0:
        return SearchResult(np.zeros(0, np.int64), True, 0)
    if int(inst.size.max()) > capacity:
        return SearchResult(None, True, 0)
    sections = Sections(inst)
    if int(sections.total.max()) > capacity:
        return SearchResult(None, True, 0)
    statics = {h: ranks(inst, sections, h) for h in ("WAT", "TAW", "TWA")}
    weights = np.zeros(sections.count)
    spent = {"robin": 0, "weighted": 0}
    runs = {"robin": 0, "weighted": 0}
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20 * n + 1000))
    try:
        while True:
            stream = min(spent, key=lambda s: (spent[s], s))
            k = runs[stream]
            heuristic = None
            if stream == "robin":
                heuristic = ("TWA", "WAT", "TAW")[k % 3]
                order, limit = statics[heuristic], 2 * n << (k // 3)
            else:
                order, limit = weighted_ranks(sections, weights, statics["TWA"]), RESTART_UNIT * (1 + k // 100)
            nodes = sum(spent.values())
            if node_budget is not None:
                limit = min(limit, node_budget - nodes)
            if limit <= 0:
                return SearchResult(None, False, nodes)
            run = _Run(inst, sections, order, capacity, limit, deadline, heuristic)
            found = run.solve()
            spent[stream] += run.nodes
            runs[stream] += 1
            if found is not None:  # solved, or proved infeasible
                return SearchResult(run.solution if found else None, not found, sum(spent.values()))
            if deadline is not None and time.monotonic() > deadline:
                return SearchResult(None, False, sum(spent.values()))
            if stream == "weighted":
                weights += run.failures / max(run.failures.sum(), 1.0)
    finally:
        sys.setrecursionlimit(old)


# Nodes of one weighted-degree run (the first 100; then one unit more per 100 runs).
RESTART_UNIT = 3000


class _Run:
    """One depth-first search with one static rank and a node limit."""

    def __init__(self, inst, sections: Sections, rank, capacity, node_limit, deadline, heuristic=None):
        self.inst, self.sec, self.rank = inst, sections, rank.copy()
        self.heuristic = heuristic  # re-rank split-off sub-problems by it (None: keep ``rank``)
        self.cap, self.limit, self.deadline = capacity, node_limit, deadline
        n = len(inst)
        self.mo = np.zeros(n, np.int64)  # lowest offset each unplaced buffer can take
        self.placed = np.zeros(n, bool)
        self.left = sections.total.copy()  # unplaced bytes per section
        self.cuts = sections.cuts.copy()
        self.solution = np.zeros(n, np.int64)
        self.nodes = 0
        self.off = np.zeros(n, np.int64)  # offsets of placed buffers
        self.free_nb = np.array([len(o) for o in sections.overlaps], np.int64)  # unplaced neighbours
        self.twins = sections.twins
        self.failures = np.zeros(sections.count)  # section-inference failures per section
        self.cliques = sections.cliques

    def solve(self):
        """True: solved; None: limit or deadline hit (not a proof); False: infeasible."""
        try:
            return self._partition(np.arange(len(self.inst)), 0, self.sec.count, top=True)
        except _Abort:
            return None

    def _partition(self, part, s_lo, s_hi, top=False) -> bool:
        """Solve the independent sub-problems of ``part`` split at boundaries nobody crosses.

        Below the root each sub-problem is re-ranked by the run's heuristic with
        the totals left now (MiniMalloc's SubSolve); the ranks are restored after.
        """
        first, end = self.sec.first[part], self.sec.end[part]
        bounds = [s_lo] + [int(s) + 1 for s in np.flatnonzero(self.cuts[s_lo:s_hi - 1] == 0) + s_lo] + [s_hi]
        for a, b in zip(bounds, bounds[1:]):
            sub = part[(first < b) & (end > a)]
            sub = sub[~self.placed[sub]]
            if len(sub) and not self._sub(sub, a, b, top):
                return False
        return True

    def _sub(self, sub, a, b, top) -> bool:
        if top or self.heuristic is None or len(sub) < 2:
            return self._dfs(sub, a, b, -1, -1)
        saved = self.rank[sub]
        self.rank[sub] = ranks_within(self.inst, self.sec, sub, self.heuristic, self.left)
        try:
            return self._dfs(sub, a, b, -1, -1)
        finally:
            self.rank[sub] = saved

    def _dfs(self, part, s_lo, s_hi, last_off, last_rank) -> bool:
        self.nodes += 1
        if self.nodes > self.limit or (self.deadline is not None and self.nodes % 256 == 0
                                       and time.monotonic() > self.deadline):
            raise _Abort
        un = part[~self.placed[part]]
        if not len(un):
            return True
        mo, rank = self.mo[un], self.rank[un]
        if ((mo < last_off) & (self.free_nb[un] == 0)).any():
            # An orphan: offsets never decrease, so it lands at or above last_off,
            # higher than its min offset, and nothing left can lift it there.
            return False
        left = self.left[s_lo:s_hi]
        lowest_top = int((mo + self.inst.size[un]).min())
        # Placing c at mo[c] leaves every section's remaining bytes to stack above
        # mo[c] (offsets never decrease): the fullest section decides.
        ok = (mo < lowest_top) & (mo <= self.cap - int(left.max()))
        ok &= (mo > last_off) | ((mo == last_off) & (rank > last_rank))
        cands = un[ok]
        cands = cands[np.lexsort((self.rank[cands], self.mo[cands]))]
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
        un = un[(self.sec.first[un] < hi) & (self.sec.end[un] > lo)]
        if a == b or not len(un):
            return True
        mo = self.mo[un]
        order = np.argsort(-mo, kind="stable")
        rows = un[order]
        floor = np.maximum(mo[order], last_off)[:, None]
        over = self._over(rows, floor, a, b)
        if len(over):
            self.failures[self.cliques[over]] += 1.0 / len(over)
        return not len(over)

    def _over(self, rows, floor, a, b) -> np.ndarray:
        """Indices in ``cliques[a:b]`` where the stack of ``rows`` (sorted by floor,
        highest first) overflows the capacity."""
        if self.sec.clique_sizes is not None:
            # Small instances: index the precomputed buffers x cliques sizes (a few
            # vector operations, the bulk of a node's time).
            sizes = self.sec.clique_sizes[rows, a:b]
            stacked = np.cumsum(sizes, axis=0)
            stacked += floor
            bad = (stacked > self.cap) & (sizes > 0)
            return a + np.flatnonzero(bad.any(axis=0)) if bad.any() else NONE
        # Columns (cliques) are independent: take them in chunks so the rows x cliques
        # matrices stay within FLOORS_CELLS entries however large the instance.
        step = max(1, FLOORS_CELLS // len(rows))
        over = []
        for c0 in range(a, b, step):
            cliques = self.cliques[c0:min(b, c0 + step)]
            cover = (self.sec.first[rows, None] <= cliques) & (cliques < self.sec.end[rows, None])
            sizes = np.where(cover, self.inst.size[rows, None], 0)
            stacked = np.cumsum(sizes, axis=0) + floor
            over.extend(c0 + np.flatnonzero(np.where(sizes > 0, stacked, 0).max(axis=0) > self.cap))
        return np.asarray(over, np.int64)

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
        self.free_nb[ov] -= 1
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
        self.free_nb[ov] += 1
        self.placed[c] = False
        self.mo[ov] = old_mo
        if found:
            self.solution[c] = off
        return found, not len(ov)
