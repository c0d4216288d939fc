"""A fact changed in impl's own tables is judged by the spec, not believed (issue 35).

Before the compiler's observer took op facts and byte counts from the spec's tables, it read the op
table and dtype table the planner decides by: a continuous input dropped from impl's op table left
MEM-CONT-INPUT with nothing to check (the observation had no group), and a dtype width changed there
shrank the raw bytes LAYOUT-TENSOR-SIZE compares the sizes with, so both passed verify. The plan cases
verify runs on the zoo now report them. (ReduceSum's atomic flag: tests/spec/test_atomic_clean.py.)"""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks.scenario import observe
from zcspec.checks.verify import VerifyConfig
from zcspec.checks.verify_cases import zoo_cases
from zcspec.impl.compiler import ops
from zcspec.impl.compiler.memory import sizes
from zcspec.impl.platform import dtypes
from zcspec.spec.check import check


def _plan_case(model: str):
    """The plan case ``zcspec verify`` builds for ``model`` (ge strategy, default SoC)."""
    config = VerifyConfig(models=(model,), kinds=("plan",), strategies=("ge",))
    return next(s for label, s in zoo_cases(config) if label == f"{model} [plan, ge]")


def _no_continuous_input(op_type):
    return lambda mp: mp.setitem(ops.OPS, op_type, attrs.evolve(ops.OPS[op_type], continuous_input=None))


def _float32_bits(bits):
    def plant(mp):
        mp.setitem(dtypes.DTYPES, "float32", attrs.evolve(dtypes.DTYPES["float32"], bits=bits))
        sizes._bits.cache_clear()   # the planner keeps each dtype's width once read
    return plant


@pytest.mark.parametrize("model, plant, claim", [
    ("builtin:phony_concat", _no_continuous_input("PhonyConcat"), "MEM-CONT-INPUT"),
    ("builtin:collectives", _no_continuous_input("HcomAllReduce"), "MEM-CONT-INPUT"),
    ("builtin:sized_inputs", _float32_bits(16), "LAYOUT-TENSOR-SIZE"),
])
def test_a_table_changed_in_impl_fails_the_zoo_plan_case(model, plant, claim, monkeypatch, request):
    request.addfinalizer(sizes._bits.cache_clear)
    (before,) = observe(_plan_case(model))
    assert check(before).ok and claim in check(before).exercised
    plant(monkeypatch)
    (after,) = observe(_plan_case(model))
    assert claim in check(after).violated(), str(check(after))
