"""The packer's entry point: :func:`pack` gives every buffer an offset in one arena, as small as it can.

The problem (Dynamic Storage Allocation; Buchsbaum et al., "OPT versus LOAD in
dynamic storage allocation", SIAM J. Comput. 33(3), 2004) is :mod:`.problem`'s:
a :class:`~.problem.Buffer` must stay intact over the half-open steps
``[lower, upper)``; two buffers whose lifetimes intersect must not overlap in
memory. :func:`pack` returns a :class:`~.problem.Packing`;
:func:`~.bound.lower_bound` is the max-live bound every packing is at least as
large as.

:func:`pack` runs, in order, each stage only while the arena is above its
target, the lower bound (``arena == lower_bound`` certifies optimality) or ``capacity`` when given:

1. greedy by size with best fit (TFLite ``GreedyBySizeAssignment``);
2. more orders, best fit each, keep the best (XLA
   ``GlobalDecreasingSizeBestFitHeap``): lifetime length, area, start,
   MiniMalloc's static "TWA" order and the fullest step's buffers first
   (only these two above MAX_ORDERS_SIZE buffers);
3. the canonical exact search (MiniMalloc, :mod:`.search`) with the
   target as capacity and a node budget (it reaches the lower bound on
   DenseNet-121's 911 feature maps in under a thousand nodes);
4. a hill climb over the order of the best packing (TVM USMP style), fixed
   seed and evaluation budget; above MAX_SEARCH_SIZE buffers with a time limit,
   then a squeaky-wheel loop (buffers ending above the target first) until it;
5. when the search proved the lower bound unreachable (small instances), a
   descent one byte below the best that proves optimality once exhausted.

Stages 2-5 use budgets counted in evaluations and nodes, so the result is
deterministic when ``time_limit`` is None.

With ``capacity`` the exact search runs until a packing fits in it (or
``time_limit`` runs out, or the search proves none exists) and the best
packing found is returned either way.
"""
from __future__ import annotations

import time

import attrs

from zcspec.impl.compiler.memory.packing import greedy, search
from zcspec.impl.compiler.memory.packing.bound import lower_bound
from zcspec.impl.compiler.memory.packing.errors import InvalidBufferError
from zcspec.impl.compiler.memory.packing.problem import Packing, check_unique



def _packing(buffers, offsets, lb: int, method: str) -> Packing:
    return Packing.placed(buffers, offsets, lower_bound=lb, method=method)


def pack(buffers, *, time_limit: float | None = None, capacity: int | None = None) -> Packing:
    """Pack ``buffers`` (any iterable of :class:`Buffer`) into one arena.

    Deterministic for the same input when ``time_limit`` is None (the
    improvement stages then use fixed budgets counted in evaluations and search
    nodes, not seconds). ``time_limit`` (seconds) bounds the whole call apart
    from the first greedy pass. ``capacity``: search until the arena fits in it
    (with no ``time_limit``, until found or proved impossible); when no
    packing fits, the best one found is returned (its arena then exceeds
    ``capacity``; callers check).

    The packer does not judge its own result: ``zcspec.checks.packing_check``
    does, with code it shares nothing with (``zcspec plan --buffers`` runs it).
    """
    buffers = list(buffers)
    check_unique(buffers)
    if capacity is not None and (not isinstance(capacity, int) or capacity < 0):
        raise InvalidBufferError("<capacity>", f"capacity={capacity!r} must be a non-negative integer")
    deadline = None if time_limit is None else time.monotonic() + time_limit
    return _stages(buffers, capacity, deadline)


def _stages(buffers: list, capacity: int | None, deadline: float | None) -> Packing:
    """The stages of :func:`pack` in order, on validated ``buffers``."""
    lb = lower_bound(buffers)
    target = lb if capacity is None else max(lb, capacity)
    inst = greedy.Instance.of(buffers)
    started = time.monotonic()
    best = _packing(buffers, greedy.best_fit(inst, greedy.order_by_size(inst)), lb, "greedy-size")
    one_pass = time.monotonic() - started
    if best.arena <= target:   # the usual case on planner traces; the extra orders cost a quarter second at 100k
        return best
    # Beyond MAX_ORDERS_SIZE buffers only LARGE_ORDERS are tried of the extra orders: the ones that
    # help on large real traces, where each pass costs seconds (long-lived buffers are every other
    # buffer's time neighbours).
    orders = [o for o in greedy.orders(inst) if len(buffers) <= MAX_ORDERS_SIZE or o[0] in LARGE_ORDERS]
    best_order = greedy.order_by_size(inst)  # the order that gave ``best`` (the squeaky wheel starts there)
    for method, order in orders:
        if best.arena <= target or _late(deadline):
            break
        tried = _packing(buffers, greedy.best_fit(inst, order), lb, method)
        if tried.arena < best.arena:
            best, best_order = tried, order
    order_method = best.method   # the climb below may rename best; the wheel starts from best_order
    if best.arena <= target:
        return best
    if capacity is None and len(buffers) > MAX_SEARCH_SIZE:
        # A search node costs O(buffers x sections) here: on instances this large the hill
        # climb alone improves the greedy packing, if the time limit leaves room for one pass.
        if deadline is not None and deadline - time.monotonic() < one_pass:
            return best
        offsets = greedy.climb(inst, _order_of(best, buffers), target, deadline)
        best = min(best, _packing(buffers, offsets, lb, "hill-climb"), key=_arena)
        # The climb affords few passes at this size. Past the deadline the squeaky wheel would only
        # repeat the best greedy order's pass, which the climb's result is never worse than: skipped.
        if deadline is not None and best.arena > target and time.monotonic() < deadline:
            # from the peak order, the wheel keeps its stack of the fullest step first
            keep = len(greedy.fullest_group(inst)) if order_method == "greedy-peak" else 0
            offsets = greedy.squeaky(inst, best_order, target, deadline, keep)
            best = min(best, _packing(buffers, offsets, lb, "squeaky-wheel"), key=_arena)
        return best
    if capacity is None and deadline is not None:
        return _minimise(buffers, inst, best, lb, deadline)
    searcher = search.Searcher(inst)
    if capacity is not None and capacity > lb:
        # The search is much faster at a tight target than at a loose one: try the lower bound first,
        # with a small node budget (and at most a tenth of the time), before the capacity itself, which
        # then starts from the sections the try found hard.
        tight = searcher.search(lb, deadline=_share(deadline, TIGHT_FIRST_SHARE), node_budget=TIGHT_FIRST_NODES)
        if tight.offsets is not None:
            return _packing(buffers, tight.offsets, lb, "search")
    # With a capacity the search runs until it fits (or the deadline); without one
    # or a time limit, it is one improvement stage among others and gets a node budget.
    budget = None if capacity is not None else search.default_budget(len(buffers))
    found = searcher.search(target, deadline=_share(deadline, RELAX_SHARE if capacity else 1.0), node_budget=budget)
    if found.offsets is not None:
        return _packing(buffers, found.offsets, lb, "search")
    if capacity is not None and deadline is not None and not found.exhausted:
        return _relax(buffers, inst, best, lb, target, deadline)
    if not _late(deadline):
        offsets = greedy.climb(inst, _order_of(best, buffers), target, deadline)
        best = min(best, _packing(buffers, offsets, lb, "hill-climb"), key=_arena)
    if capacity is None and found.exhausted and best.arena > lb:
        best = _descend(buffers, inst, best, lb, deadline)
    return best


MAX_ORDERS_SIZE = 20_000
LARGE_ORDERS = ("greedy-TWA", "greedy-peak")   # MiniMalloc's static order (Y_1), the fullest step first (S_1)
MAX_SEARCH_SIZE = 4_096

# With a capacity and a time limit, the share of the time the search at the
# capacity itself gets; the rest bisects relaxed capacities for a best effort.
RELAX_SHARE = 0.8
# Minimising with a time limit: the share the first search, at the lower bound itself, gets.
TIGHT_SHARE = 0.5
# With a capacity above the lower bound: the share of the time the first try at the lower bound gets.
TIGHT_FIRST_SHARE = 0.1
# ... and its node budget: where the lower bound is reachable the search meets it in a few thousand nodes
# (MiniMalloc's C: 4,018 at about 0.1 ms a node); where it is not, this is what the try costs.
TIGHT_FIRST_NODES = 6_000


def _share(deadline, share: float):
    return None if deadline is None else time.monotonic() + share * (deadline - time.monotonic())


def _relax(buffers, inst, best: Packing, lb: int, missed: int, deadline) -> Packing:
    """Bisect between a capacity the search missed and the best arena while time remains (one
    searcher for every target: what its runs learn carries over)."""
    searcher = search.Searcher(inst)
    while best.arena - missed > 1 and not _late(deadline):
        mid = (missed + best.arena) // 2
        found = searcher.search(mid, deadline=_share(deadline, 0.5))
        if found.offsets is not None:
            best = _packing(buffers, found.offsets, lb, "search-relaxed")
        else:
            missed = mid
    return best


def _minimise(buffers, inst, best: Packing, lb: int, deadline: float) -> Packing:
    """Minimise with the time given: aim at the lower bound first (the search is fastest at a tight
    target, and reaching it proves optimality), then bisect between the best arena and the tightest
    target not yet refuted. A target the search explores exhaustively is proved infeasible and raises
    the proved bound; one it only runs out of time on is skipped, not proved. The result carries the
    proved bound: ``optimal`` when it meets the arena. One searcher serves every target, so the sweep,
    the static orders and the sections its runs learned are hard carry over from target to target."""
    proved, lo = lb, lb
    searcher = search.Searcher(inst)
    first = searcher.search(lb, deadline=_share(deadline, TIGHT_SHARE))
    if first.offsets is not None:
        return _packing(buffers, first.offsets, lb, "search")
    if first.exhausted:
        proved = lo = lb + 1
    while best.arena > lo and not _late(deadline):
        mid = (lo + best.arena - 1) // 2 if best.arena - lo > 1 else lo
        found = searcher.search(mid, deadline=_share(deadline, 0.5))
        if found.offsets is not None:
            best = _packing(buffers, found.offsets, lb, "search")
        else:
            lo = mid + 1
            if found.exhausted:   # no packing fits in mid bytes, so none fits in fewer
                proved = max(proved, mid + 1)
    if lo >= best.arena and proved < best.arena and not _late(deadline):
        best = _descend(buffers, inst, best, lb, deadline, searcher)
        proved = best.arena if best.optimal else proved
    proved = max(proved, lb)
    return attrs.evolve(best, optimal=proved >= best.arena, bound=min(proved, best.arena))


def _late(deadline) -> bool:
    return deadline is not None and time.monotonic() > deadline


def _arena(p: Packing) -> int:
    return p.arena


def _order_of(p: Packing, buffers) -> list[int]:
    """An order that rebuilds ``p`` by best fit: buffers by offset (lowest first), larger first."""
    return sorted(range(len(buffers)), key=lambda i: (p.offsets[buffers[i].id], -buffers[i].size, i))


def _descend(buffers, inst, best: Packing, lb: int, deadline, searcher=None) -> Packing:
    """The lower bound is out of reach: search one byte below the best until that is
    proved impossible (then the best is optimal, and its proved bound is its arena) or the
    node budget runs out. Without a ``searcher`` each step starts afresh (the deterministic
    default stage keeps its results independent of what ran before)."""
    budget = search.default_budget(len(buffers))
    while True:
        step = searcher or search.Searcher(inst)
        found = step.search(best.arena - 1, deadline=deadline, node_budget=budget)
        if found.offsets is None:
            return attrs.evolve(best, optimal=found.exhausted, bound=best.arena if found.exhausted else best.bound)
        best = _packing(buffers, found.offsets, lb, "search")
