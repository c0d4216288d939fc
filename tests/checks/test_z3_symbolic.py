"""SymAddr: integer address arithmetic on Z3 bit-vectors, with path conditions for == and !=."""
from __future__ import annotations

import pytest
import z3

from zcspec.checks.proofs.symbolic import PathLog, SymAddr, SymbolicBranch, as_bv


def _value(expr, **values) -> int:
    pairs = [(z3.BitVec(k, 64), z3.BitVecVal(v, 64)) for k, v in values.items()]
    return z3.simplify(z3.substitute(expr, *pairs)).as_long()


def test_arithmetic_gives_the_formula_python_ints_would_compute():
    log = PathLog()
    b = SymAddr.variable("b", log)
    for make, expect in [(lambda x: x + 320, lambda x: x + 320), (lambda x: 8 + x, lambda x: x + 8),
                         (lambda x: (x & ~31) + 4, lambda x: (x & ~31) + 4), (lambda x: x | 64, lambda x: x | 64),
                         (lambda x: x - 1, lambda x: x - 1), (lambda x: x % 512, lambda x: x % 512),
                         (lambda x: x >> 3, lambda x: x >> 3), (lambda x: x ^ 5, lambda x: x ^ 5)]:
        for concrete in (0x1000, 0x1234_5678, 0x7FFF_FFFF_FFFF_FFF0):
            assert _value(make(b).expr, b=concrete) == expect(concrete) % (1 << 64)


def test_equality_answers_from_structure_and_records_the_path_condition():
    log = PathLog()
    b, c = SymAddr.variable("b", log), SymAddr.variable("c", log)
    assert b != 0x1000 and not (b == c) and (b + 0) == b
    assert b is not None and b != "a string"
    bv, cv = z3.BitVec("b", 64), z3.BitVec("c", 64)
    expected = [bv != 0x1000, bv != cv, bv == bv]
    assert len(log.conditions) == 3
    for got, want in zip(log.conditions, expected):
        assert z3.Solver().check(got != want) == z3.unsat, (got, want)
    assert {b: 1}[b] == 1   # hashable, so it can key a dict as an address does


@pytest.mark.parametrize("use", [lambda b: b < 5, lambda b: bool(b), lambda b: int(b), lambda b: [0][b]])
def test_a_decision_it_cannot_follow_is_refused(use):
    b = SymAddr.variable("b", PathLog())
    with pytest.raises(SymbolicBranch, match="symbolic address"):
        use(b)


def test_bad_operands_are_refused():
    with pytest.raises(TypeError, match="64-bit"):
        SymAddr(z3.BitVec("x", 32), PathLog())
    with pytest.raises(TypeError, match="expected an address"):
        as_bv(1.5)
