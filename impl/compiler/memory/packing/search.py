"""Exact search for a packing that fits a capacity (MiniMalloc's ideas, M. D. Moffitt, ASPLOS '23).

The search only builds *canonical* solutions (as MiniMalloc does: M. D. Moffitt,
ASPLOS '23): buffers are
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

import time

import attrs
import numpy as np

from zcspec.impl.compiler.memory.packing import dfs
from zcspec.impl.compiler.memory.packing.sweep import Sections, ranks, weighted_ranks


@attrs.frozen(eq=False)
class SearchResult:
    """``offsets`` when a packing within the capacity was found, else None.

    ``exhausted``: the search space was fully explored, so no packing fits
    (a proof of infeasibility). ``nodes``: search nodes expanded.
    """

    offsets: np.ndarray | None
    exhausted: bool
    nodes: int


def default_budget(n: int) -> int:
    """Node budget of the default (no capacity) improvement stage: deterministic, and
    shrinking on large instances where one node costs O(n)."""
    return int(max(200, min(2000 + 40 * n, 2e7 // max(n, 1))))


def search(inst, capacity: int, *, deadline: float | None = None, node_budget: int | None = None) -> SearchResult:
    """:meth:`Searcher.search` on a fresh :class:`Searcher`: one capacity, nothing carried over."""
    return Searcher(inst).search(capacity, deadline=deadline, node_budget=node_budget)


class Searcher:
    """The exact search of one instance, at as many capacities as the caller tries.

    What does not depend on the capacity is built once and shared by every call: the sweep
    (sections, overlaps, twins), the static orders, and the weights the weighted-degree runs learn
    (a section where runs failed at one target is where the next target is hard too), so a
    minimiser bisecting between targets does not start each from nothing.
    """

    def __init__(self, inst):
        self.inst = inst
        self.sections = Sections(inst) if len(inst) else None
        self.statics = {} if self.sections is None else {h: ranks(inst, self.sections, h) for h in ("WAT", "TAW", "TWA")}
        self.weights = np.zeros(0 if self.sections is None else self.sections.count)

    def search(self, capacity: int, *, deadline: float | None = None, node_budget: int | None = None) -> SearchResult:
        """Find offsets with every ``offset + size <= capacity``, or prove there are none.

        A portfolio of restarted depth-first runs, two streams taking turns (the
        one that has spent fewer nodes goes next), because the hard instances
        split between them:

        - MiniMalloc's round robin: static orders "TWA", "WAT", "TAW" in turn,
          the node limit doubling after each round (from 2n);
        - weighted degree: short runs (RESTART_UNIT nodes, growing by one unit
          every 100 runs) that rank first the buffers living in the sections where
          earlier runs (of this call and the searcher's earlier calls) failed most
          (learned from section-inference failures), ties by "TWA".

        Limits grow without end, so the search stays complete: a run that ends
        within its limit either found a packing or proved there is none.
        ``node_budget`` bounds the nodes over all runs and ``deadline`` (a
        ``time.monotonic()`` value) the time; when either runs out the result has
        ``offsets=None, exhausted=False``. Deterministic for a given budget and
        the same earlier calls.
        """
        inst, sections, statics = self.inst, self.sections, self.statics
        n = len(inst)
        if n == 0:
            return SearchResult(np.zeros(0, np.int64), True, 0)
        if int(inst.size.max()) > capacity or int(sections.total.max()) > capacity:
            return SearchResult(None, True, 0)
        spent = {"robin": 0, "weighted": 0}
        runs = {"robin": 0, "weighted": 0}
        while True:
            stream = min(spent, key=lambda s: (spent[s], s))
            k = runs[stream]
            heuristic = None
            if stream == "robin":
                heuristic = ("TWA", "WAT", "TAW")[k % 3]
                order, limit = statics[heuristic], 2 * n << (k // 3)
            else:
                order, limit = weighted_ranks(sections, self.weights, statics["TWA"]), RESTART_UNIT * (1 + k // 100)
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
                return SearchResult(run.solution.copy() if found else None, not found, sum(spent.values()))
            if deadline is not None and time.monotonic() > deadline:
                return SearchResult(None, False, sum(spent.values()))
            if stream == "weighted":
                self.weights += run.failures / max(run.failures.sum(), 1.0)


# Nodes of one weighted-degree run (the first 100; then one unit more per 100 runs).
RESTART_UNIT = 3000


class _Run:
    """One depth-first run (:mod:`.dfs`, compiled) with one static rank and a node limit."""

    def __init__(self, inst, sections: Sections, rank, capacity, node_limit, deadline, heuristic=None):
        n = len(inst)
        self.static = dfs.Static(
            inst.lower, inst.upper, inst.size, inst.align, sections.first, sections.end,
            sections.ov_ptr, sections.ov_idx, sections.tw_ptr, sections.tw_idx, sections.cliques,
            dfs.letter_codes(heuristic or ""), int(capacity), min(int(node_limit), 1 << 62),
            float("inf") if deadline is None else float(deadline))
        self.state = dfs.State(
            rank.astype(np.int64), np.zeros(n, np.int64), np.zeros(n, np.bool_), np.zeros(n, np.int64),
            np.diff(sections.ov_ptr), np.zeros(n, np.int64), sections.total.copy(), sections.cuts.copy(),
            np.zeros(sections.count), np.zeros(1, np.int64))

    @property
    def nodes(self) -> int:
        return int(self.state.nodes[0])

    @property
    def solution(self) -> np.ndarray:
        return self.state.solution

    @property
    def failures(self) -> np.ndarray:
        """Section-inference failures per section."""
        return self.state.failures

    def solve(self):
        """True: solved; None: limit or deadline hit (not a proof); False: infeasible."""
        r = dfs.run(self.static, self.state)
        return None if r == dfs.ABORTED else r == dfs.FOUND
