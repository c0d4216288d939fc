"""The packing problem and its solution: :class:`Buffer` in, :class:`Packing` out.

A :class:`Buffer` must stay intact over the half-open steps ``[lower, upper)``
(MiniMalloc's convention); two buffers whose lifetimes intersect must not
overlap in memory. A :class:`Packing` gives every buffer an offset in one
arena. Both are frozen and validated here, once, for every algorithm and
reader (``zcspec.checks.packing_check`` re-checks a packing against its buffers on its own).
"""
from __future__ import annotations

import operator

import attrs

from zcspec.impl.compiler.memory.packing.errors import InvalidBufferError


def _integer(value):
    """Integers of any integral type (numpy's too) become ``int``; anything else is
    left as is for the validation to reject by name."""
    if type(value) is int:   # the common case, first (a planner makes 100k buffers)
        return value
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
        for name, value in (("lower", self.lower), ("upper", self.upper)):
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
    that produced the offsets. ``bound`` is the best proved lower bound on any
    packing's arena: the max-live bound, or more when a search proved a smaller
    arena infeasible (``bound == arena`` exactly when ``optimal``; 0 when unknown).
    """

    offsets: dict[str, int]
    arena: int
    optimal: bool
    method: str
    bound: int = 0

    @classmethod
    def placed(cls, buffers, offsets, *, lower_bound: int, method: str) -> "Packing":
        """The packing of ``buffers`` at ``offsets`` (by position, any integer type):
        plain ``int`` offsets, the arena they need, optimal when it meets ``lower_bound``."""
        arena = int(max((o + b.size for b, o in zip(buffers, offsets)), default=0))
        return cls({b.id: int(o) for b, o in zip(buffers, offsets)}, arena, arena == lower_bound, method,
                   min(lower_bound, arena))


def check_unique(buffers) -> None:
    """Raise :class:`InvalidBufferError` naming the first duplicated buffer id."""
    seen: set[str] = set()
    for b in buffers:
        if b.id in seen:
            raise InvalidBufferError(b.id, "duplicate buffer id: every buffer needs its own id")
        seen.add(b.id)
