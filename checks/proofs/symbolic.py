"""Symbolic device addresses: run a pure address computation of impl on Z3 bit-vectors.

A :class:`SymAddr` stands for a 64-bit address the caller chooses (a user buffer's base).
It supports the integer operations address arithmetic uses (``+ - & | ^ ~ << >>``, and
``% //`` as unsigned bit-vector operations), each giving a new SymAddr over the same
variables, so a function such as runtime v1's refresh, given SymAddrs where it expects
ints, returns the addresses it would write *as formulas of the bases*.

Branching on a symbolic value is what symbolic execution has to decide:

- ``==`` / ``!=`` against another value answer from the structure (the same formula or
  not) and record the answer as a *path condition* in the shared :class:`PathLog`
  (``b != 0x1000`` when the code found a fresh base unequal to the one it held); the
  proof then quantifies over the placements on that path only, and says so;
- any other use as a truth value or a concrete number (``<``, ``bool()``, ``int()``,
  ``hash`` aside) raises :class:`SymbolicBranch`: the code decides something from the
  address that this module cannot follow, and the proof reports "unknown".

64-bit wrap-around is the bit-vector semantics, as on the device (addresses are uint64).
"""
from __future__ import annotations

import attrs
import z3

WIDTH = 64


class SymbolicBranch(Exception):
    """The code under proof branched on a symbolic address in a way that cannot be followed."""


@attrs.define
class PathLog:
    """The path conditions recorded while the code ran (Z3 booleans over the bases)."""

    conditions: list = attrs.Factory(list)


def as_bv(value) -> z3.BitVecRef:
    """A SymAddr's formula, or a concrete int as a 64-bit constant."""
    if isinstance(value, SymAddr):
        return value.expr
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an address (int or SymAddr), got {value!r}")
    return z3.BitVecVal(value, WIDTH)


class SymAddr:
    """A 64-bit address given as a Z3 bit-vector formula (see the module docstring)."""

    __slots__ = ("expr", "log")

    def __init__(self, expr: z3.BitVecRef, log: PathLog):
        if not z3.is_bv(expr) or expr.size() != WIDTH:
            raise TypeError(f"SymAddr needs a {WIDTH}-bit bit-vector, got {expr!r}")
        self.expr, self.log = expr, log

    @classmethod
    def variable(cls, name: str, log: PathLog) -> "SymAddr":
        return cls(z3.BitVec(name, WIDTH), log)

    def _new(self, expr) -> "SymAddr":
        return SymAddr(z3.simplify(expr), self.log)

    def _other(self, other):
        if isinstance(other, SymAddr) or (isinstance(other, int) and not isinstance(other, bool)):
            return as_bv(other)
        return None

    def _binary(op):
        def method(self, other):
            o = self._other(other)
            return NotImplemented if o is None else self._new(op(self.expr, o))
        return method

    def _reflected(op):
        def method(self, other):
            o = self._other(other)
            return NotImplemented if o is None else self._new(op(o, self.expr))
        return method

    __add__, __radd__ = _binary(lambda a, b: a + b), _reflected(lambda a, b: a + b)
    __sub__, __rsub__ = _binary(lambda a, b: a - b), _reflected(lambda a, b: a - b)
    __and__, __rand__ = _binary(lambda a, b: a & b), _reflected(lambda a, b: a & b)
    __or__, __ror__ = _binary(lambda a, b: a | b), _reflected(lambda a, b: a | b)
    __xor__, __rxor__ = _binary(lambda a, b: a ^ b), _reflected(lambda a, b: a ^ b)
    __lshift__ = _binary(lambda a, b: a << b)
    __rshift__ = _binary(z3.LShR)
    __mod__, __rmod__ = _binary(z3.URem), _reflected(z3.URem)
    __floordiv__, __rfloordiv__ = _binary(z3.UDiv), _reflected(z3.UDiv)
    del _binary, _reflected

    def __invert__(self) -> "SymAddr":
        return self._new(~self.expr)

    def __eq__(self, other) -> bool:
        o = self._other(other)
        if o is None:
            return False   # None, a string, ...: an address is never one
        same = bool(z3.simplify(self.expr == o) == z3.BoolVal(True)) or self.expr.eq(o)
        self.log.conditions.append(self.expr == o if same else self.expr != o)
        return same

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self.expr.hash()

    def _refuse(self, *args):
        raise SymbolicBranch(f"the code compared or converted the symbolic address {self.expr} "
                             "(only ==, != and arithmetic can be followed)")

    __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __int__ = __index__ = __float__ = _refuse

    def __repr__(self) -> str:
        return f"SymAddr({self.expr})"
