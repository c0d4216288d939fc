"""The judge of a packing: an independent check of the offsets the packer gives its buffers.

As MiniMalloc validates its ``Solution`` with code apart from its solver, this
module shares no code with the packer (impl/compiler/memory/packing: greedy, sweep, search, the
stages, the lower bound) and lives with the checker, not in impl/: the packer carries no judge of
its own output. It reads only the buffers' fields (``id``, ``lower``,
``upper``, ``size``, ``align``) and the packing's ``offsets`` and ``arena``, and
recomputes which buffers are live together by its own sweep, so a bug in the
packer's sections or overlaps cannot hide itself here. The rules:

- ``duplicate``: every buffer of the problem has its own id;
- ``unplaced`` / ``unknown``: every buffer has exactly one offset, and no
  offset names a buffer the problem lacks;
- ``offset``: an offset is a non-negative ``int``;
- ``align``: an offset is a multiple of its buffer's ``align``;
- ``arena``: every buffer ends within the arena, and the arena is what they
  need (``max(offset + size)``, 0 when empty);
- ``capacity`` (only when a capacity is given): every buffer ends within it;
- ``overlap``: two buffers whose half-open lifetimes intersect share no byte.

``optimal`` is not checked: certifying it needs a proof, not a check.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import Counter

import attrs


class InvalidPackingError(AssertionError):
    """A packing breaks a rule of its problem: ``violations`` (:class:`PackingFinding` s) name the buffers.
    An ``AssertionError``: a broken promise of the packer (a bug), not bad input."""

    SHOWN = 5  # violations quoted in the message; the rest are counted

    def __init__(self, violations):
        self.violations = tuple(violations)
        lines = [str(v) for v in self.violations[:self.SHOWN]]
        more = len(self.violations) - self.SHOWN
        if more > 0:
            lines.append(f"... and {more} more")
        super().__init__(f"invalid packing ({len(self.violations)} violation(s)): " + "; ".join(lines))


RULES = ("duplicate", "unplaced", "unknown", "offset", "align", "arena", "capacity", "overlap")


@attrs.frozen
class PackingFinding:
    """One broken rule (one of :data:`RULES`), the ids of the buffers that break it, and why. (Not the
    spec's ``Violation``, which names an invariant: these are the packing problem's own rules.)"""

    rule: str
    buffers: tuple[str, ...]
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


def validate(buffers, packing, *, capacity: int | None = None) -> tuple[PackingFinding, ...]:
    """Every rule ``packing`` breaks for ``buffers`` (empty when it is a valid packing).

    ``buffers``: any iterable of buffers; ``packing``: anything with ``offsets``
    (id to offset) and ``arena``. With ``capacity``, buffers ending past it
    are violations too. Violations come rule by rule, each naming its buffers.
    """
    buffers = list(buffers)
    offsets = packing.offsets
    found = _ids(buffers, offsets)
    seen, placed = set(), []
    for b in buffers:
        if b.id in offsets and b.id not in seen and _offset_ok(b, offsets[b.id], found):
            placed.append(b)
        seen.add(b.id)
    complete = len(placed) == len(buffers) == len(offsets)  # the arena needed is known
    found += _ends(placed, offsets, packing.arena, capacity, complete)
    found += _overlaps(placed, offsets)
    return tuple(found)


def check(buffers, packing, *, capacity: int | None = None) -> None:
    """Raise :class:`InvalidPackingError` listing the violations :func:`validate` finds, if any."""
    found = validate(buffers, packing, capacity=capacity)
    if found:
        raise InvalidPackingError(found)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _ids(buffers, offsets) -> list[PackingFinding]:
    counts = Counter(b.id for b in buffers)
    found = [PackingFinding("duplicate", (i,), f"buffer {i!r} appears {n} times: every buffer needs its own id")
             for i, n in counts.items() if n > 1]
    found += [PackingFinding("unplaced", (i,), f"buffer {i!r} has no offset: every buffer must be placed once")
              for i in counts if i not in offsets]
    found += [PackingFinding("unknown", (i,), f"an offset is given for {i!r}, which is not a buffer of the problem")
              for i in offsets if i not in counts]
    return found


def _offset_ok(b, offset, found: list[PackingFinding]) -> bool:
    """Whether ``offset`` is a usable offset for ``b``; appends the violation when not."""
    if not _is_int(offset) or offset < 0:
        found.append(PackingFinding("offset", (b.id,), f"buffer {b.id!r}: offset={offset!r} must be a non-negative int"))
        return False
    if offset % b.align:
        found.append(PackingFinding("align", (b.id,),
                               f"buffer {b.id!r}: offset={offset!r} is not a multiple of align={b.align!r}"))
    return True


def _ends(placed, offsets, arena, capacity, complete: bool) -> list[PackingFinding]:
    """Buffers past the arena or the capacity, and an arena that is not what the buffers need."""
    if not _is_int(arena) or arena < 0:
        return [PackingFinding("arena", (), f"arena={arena!r} must be a non-negative int")]
    found, top, highest = [], 0, ()
    for b in placed:
        start, end = offsets[b.id], offsets[b.id] + b.size
        if end > arena:
            found.append(PackingFinding("arena", (b.id,), f"buffer {b.id!r} at [{start}, {end}) ends past arena={arena!r}"))
        if capacity is not None and end > capacity:
            found.append(PackingFinding("capacity", (b.id,),
                                   f"buffer {b.id!r} at [{start}, {end}) ends past capacity={capacity!r}"))
        if end > top:
            top, highest = end, (b.id,)
    if complete and arena > top:
        who = f" (the highest, {highest[0]!r}, ends there)" if highest else ""
        found.append(PackingFinding("arena", highest, f"arena={arena!r} but the buffers need {top}{who}: "
                                                 "the arena is max(offset + size)"))
    return found


def _overlaps(placed, offsets) -> list[PackingFinding]:
    """Pairs live at a common step whose bytes intersect, by a sweep over buffers sorted by start.

    When a buffer starts, the ones still live are those that started no later
    and end after its start (half-open: ending at its start is not live). Listing
    every pair costs the number of time-overlapping pairs (180 million on the largest
    real trace), so :func:`_first_overlap` first asks in O(n log n) whether any pair
    shares bytes; only then are they listed.
    """
    if not _first_overlap(placed, offsets):
        return []
    found, live = [], []
    for b in sorted(placed, key=lambda b: b.lower):
        live = [a for a in live if a.upper > b.lower]
        ob = offsets[b.id]
        for a in live:
            oa = offsets[a.id]
            if oa < ob + b.size and ob < oa + a.size:
                found.append(PackingFinding(
                    "overlap", (a.id, b.id),
                    f"buffers {a.id!r} at [{oa}, {oa + a.size}) and {b.id!r} at [{ob}, {ob + b.size}) share bytes "
                    f"while both live over steps [{b.lower}, {min(a.upper, b.upper)})"))
        live.append(b)
    return found


def _first_overlap(placed, offsets) -> bool:
    """Whether two buffers live at a common step share bytes, by a sweep over time.

    The buffers live at a step, while none of them share bytes, are disjoint ranges of memory, kept
    sorted by offset; a buffer that starts overlaps one of them exactly when it overlaps the range
    just below its offset or the one just above it (any other range lies beyond those). At equal
    times ends come first (half-open lifetimes). The first overlap found ends the sweep.
    """
    events = sorted([(b.upper, 0, offsets[b.id], b.size) for b in placed]
                    + [(b.lower, 1, offsets[b.id], b.size) for b in placed])
    starts: list[int] = []  # offsets of the live ranges, ascending
    ends: list[int] = []  # their ends, in the same order
    for _, kind, offset, size in events:
        i = bisect_left(starts, offset)
        if kind == 0:  # disjoint live ranges have distinct offsets: i is this buffer's range
            del starts[i], ends[i]
            continue
        if (i and ends[i - 1] > offset) or (i < len(starts) and starts[i] < offset + size):
            return True
        starts.insert(i, offset)
        ends.insert(i, offset + size)
    return False
