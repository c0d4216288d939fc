"""Interval packing: give every buffer an offset in one arena, arena as small as possible.

The problem (Dynamic Storage Allocation, planning-facts.md): a :class:`Buffer`
must stay intact over the half-open steps ``[lower, upper)`` (MiniMalloc's
convention); two buffers whose lifetimes intersect must not overlap in memory.
:func:`pack` returns a :class:`Packing`; :func:`lower_bound` is the max-live
bound every packing is at least as large as.

:func:`pack` runs, in order, each stage only while the arena is above its
target, the lower bound (``arena == lower_bound`` certifies optimality,
planning-facts.md) or ``capacity`` when given:

1. greedy by size with best fit (TFLite ``GreedyBySizeAssignment``);
2. more orders, best fit each, keep the best (XLA
   ``GlobalDecreasingSizeBestFitHeap``): lifetime length, area, start;
3. the canonical exact search (MiniMalloc, :mod:`pack_search`) with the
   target as capacity and a node budget (it reaches the lower bound on
   DenseNet-121's 911 feature maps in under a thousand nodes);
4. a hill climb over the order of the best packing (TVM USMP style), fixed
   seed and evaluation budget;
5. when the search proved the lower bound unreachable (small instances), a
   descent one byte below the best that proves optimality once exhausted.

Stages 2-5 use budgets counted in evaluations and nodes, so the result is
deterministic when ``time_limit`` is None.

With ``capacity`` the exact search runs until a packing fits in it (or
``time_limit`` runs out, or the search proves none exists) and the best
packing found is returned either way.
"""
from __future__ import annotations

import operator
import time

import attrs

from zcspec.impl.compiler.memory import pack_greedy, pack_search
from zcspec.impl.compiler.memory.pack_errors import InvalidBufferError


def _integer(value):
    """Integers of any integral type (numpy's too) become ``int``; anything else is
    left as is for the validation to reject by name."""
    if isinstance(value, bool):
        return value
    try:
        return operator.index(value)
    except TypeError:
        return value


def _positive(instance, attribute, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise InvalidBufferError(instance.id, f"{attribute.name}={value!r} must be a positive integer")


@attrs.frozen
class Buffer:
    """A buffer of ``size`` bytes that must stay intact over steps ``[lower, upper)``.

    ``align``: the offset must be a multiple of it. Construction validates:
    integer fields, ``0 <= lower < upper``, ``size > 0``, ``align > 0``.
    """

    id: str
    lower: int = attrs.field(converter=_integer)
    upper: int = attrs.field(converter=_integer)
    size: int = attrs.field(converter=_integer, validator=_positive)
    align: int = attrs.field(default=1, converter=_integer, validator=_positive)

    def __attrs_post_init__(self) -> None:
        for name in ("lower", "upper"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InvalidBufferError(self.id, f"{name}={value!r} must be a non-negative integer")
        if self.lower >= self.upper:
            raise InvalidBufferError(
                self.id, f"lower={self.lower!r} >= upper={self.upper!r}: lifetimes are half-open "
                "[lower, upper), so upper must be at least lower + 1")


@attrs.frozen
class Packing:
    """Offsets by buffer id and the arena they need (``max(offset + size)``, 0 when empty).

    ``optimal`` is True only when certified: ``arena == lower_bound`` or an
    exhaustive search proved no smaller arena exists. ``method`` names the stage
    that produced the offsets.
    """

    offsets: dict[str, int]
    arena: int
    optimal: bool
    method: str


def lower_bound(buffers) -> int:
    """Max over steps of the summed sizes live at that step (one sorted sweep).

    With half-open lifetimes a buffer ending at ``t`` and one starting at ``t``
    are never live together, so at equal times the ends are applied first.
    For intervals this equals the heaviest clique (planning-facts.md).
    """
    events = sorted([(b.lower, 1, b.size) for b in buffers] + [(b.upper, 0, -b.size) for b in buffers])
    live = best = 0
    for _, _, delta in events:
        live += delta
        best = max(best, live)
    return best


def check_unique(buffers) -> None:
    """Raise :class:`InvalidBufferError` naming the first duplicated buffer id."""
    seen: set[str] = set()
    for b in buffers:
        if b.id in seen:
            raise InvalidBufferError(b.id, "duplicate buffer id: every buffer needs its own id")
        seen.add(b.id)


def _packing(buffers, offsets, lb: int, method: str) -> Packing:
    """A Packing from offsets by position; optimal when the arena meets the lower bound."""
    arena = int(max((o + b.size for b, o in zip(buffers, offsets)), default=0))
    return Packing({b.id: int(o) for b, o in zip(buffers, offsets)}, arena, arena == lb, method)


def pack(buffers, *, time_limit: float | None = None, capacity: int | None = None) -> Packing:
    """Pack ``buffers`` (any iterable of :class:`Buffer`) into one arena.

    Deterministic for the same input when ``time_limit`` is None (the
    improvement stages then use fixed budgets counted in evaluations and search
    nodes, not seconds). ``time_limit`` (seconds) bounds the whole call apart
    from the first greedy pass. ``capacity``: search until the arena fits in it
    (with no ``time_limit``, until found or proved impossible); when no
    packing fits, the best one found is returned (its arena then exceeds
    ``capacity``; callers check).
    """
    buffers = list(buffers)
    check_unique(buffers)
    if capacity is not None and (not isinstance(capacity, int) or capacity < 0):
        raise InvalidBufferError("<capacity>", f"capacity={capacity!r} must be a non-negative integer")
    deadline = None if time_limit is None else time.monotonic() + time_limit
    lb = lower_bound(buffers)
    target = lb if capacity is None else max(lb, capacity)
    inst = pack_greedy.Instance.of(buffers)
    started = time.monotonic()
    best = _packing(buffers, pack_greedy.best_fit(inst, pack_greedy.order_by_size(inst)), lb, "greedy-size")
    one_pass = time.monotonic() - started
    # One best-fit pass costs O(n^2) element steps: beyond this size the extra orders are skipped.
    orders = pack_greedy.orders(inst) if len(buffers) <= MAX_ORDERS_SIZE else []
    for method, order in orders:
        if best.arena <= target or _late(deadline):
            break
        best = min(best, _packing(buffers, pack_greedy.best_fit(inst, order), lb, method), key=_arena)
    if best.arena <= target:
        return best
    if capacity is None and len(buffers) > MAX_SEARCH_SIZE:
        # A search node costs O(buffers x sections) here: on instances this large the hill
        # climb alone improves the greedy packing, if the time limit leaves room for one pass.
        if deadline is not None and deadline - time.monotonic() < one_pass:
            return best
        offsets = pack_greedy.climb(inst, _order_of(best, buffers), target, deadline)
        return min(best, _packing(buffers, offsets, lb, "hill-climb"), key=_arena)
    # With a capacity the search runs until it fits (or the deadline); without,
    # it is one improvement stage among others and gets a node budget.
    budget = None if capacity is not None else pack_search.default_budget(len(buffers))
    found = pack_search.search(inst, target, deadline=_share(deadline, RELAX_SHARE if capacity else 1.0),
                               node_budget=budget)
    if found.offsets is not None:
        return _packing(buffers, found.offsets, lb, "search")
    if capacity is not None and deadline is not None and not found.exhausted:
        return _relax(buffers, inst, best, lb, target, deadline)
    if not _late(deadline):
        offsets = pack_greedy.climb(inst, _order_of(best, buffers), target, deadline)
        best = min(best, _packing(buffers, offsets, lb, "hill-climb"), key=_arena)
    if capacity is None and found.exhausted and best.arena > lb:
        best = _descend(buffers, inst, best, lb, deadline)
    return best


MAX_ORDERS_SIZE = 20_000
MAX_SEARCH_SIZE = 4_096

# With a capacity and a time limit, the share of the time the search at the
# capacity itself gets; the rest bisects relaxed capacities for a best effort.
RELAX_SHARE = 0.8


def _share(deadline, share: float):
    return None if deadline is None else time.monotonic() + share * (deadline - time.monotonic())


def _relax(buffers, inst, best: Packing, lb: int, missed: int, deadline) -> Packing:
    """Bisect between a capacity the search missed and the best arena while time remains."""
    while best.arena - missed > 1 and not _late(deadline):
        mid = (missed + best.arena) // 2
        found = pack_search.search(inst, mid, deadline=_share(deadline, 0.5))
        if found.offsets is not None:
            best = _packing(buffers, found.offsets, lb, "search-relaxed")
        else:
            missed = mid
    return best


def _late(deadline) -> bool:
    return deadline is not None and time.monotonic() > deadline


def _arena(p: Packing) -> int:
    return p.arena


def _order_of(p: Packing, buffers) -> list[int]:
    """An order that rebuilds ``p`` by best fit: buffers by offset (lowest first), larger first."""
    return sorted(range(len(buffers)), key=lambda i: (p.offsets[buffers[i].id], -buffers[i].size, i))


def _descend(buffers, inst, best: Packing, lb: int, deadline) -> Packing:
    """The lower bound is out of reach: search one byte below the best until that is
    proved impossible (then the best is optimal) or the node budget runs out."""
    budget = pack_search.default_budget(len(buffers))
    while True:
        found = pack_search.search(inst, best.arena - 1, deadline=deadline, node_budget=budget)
        if found.offsets is None:
            return attrs.evolve(best, optimal=found.exhausted)
        best = _packing(buffers, found.offsets, lb, "search")
