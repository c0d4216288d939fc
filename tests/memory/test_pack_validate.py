"""The independent judge of packings (checks/packing_check.py): each rule caught on a planted fault, its
independence from the packer, and the places that run it (the memory tests, ``zcspec plan --buffers``)."""
from __future__ import annotations

import ast
import argparse
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from zcspec.checks.strategies.buffers import buffer_lists
from zcspec.checks import packing_check
from zcspec.checks.cli import plan_buffers
from zcspec.checks.packing_check import InvalidPackingError, check, validate
from zcspec.impl.compiler.memory.packing import Buffer, Packing, greedy, pack

A, B = Buffer("a", 0, 3, 8), Buffer("b", 2, 5, 8)  # live together at step 2


def rules(found) -> list[tuple[str, tuple[str, ...]]]:
    return [(v.rule, v.buffers) for v in found]


def test_a_valid_packing_has_no_violations():
    assert validate([A, B], Packing({"a": 0, "b": 8}, 16, True, "by hand")) == ()
    assert validate([], Packing({}, 0, True, "empty")) == ()


def test_planted_overlap_names_both_buffers_and_the_steps():
    (v,) = validate([A, B], Packing({"a": 0, "b": 4}, 12, False, "by hand"))
    assert (v.rule, v.buffers) == ("overlap", ("a", "b"))
    assert "'a' at [0, 8)" in v.message and "'b' at [4, 12)" in v.message and "steps [2, 3)" in v.message


def test_half_open_lifetimes_that_touch_may_share_memory():
    assert validate([Buffer("a", 0, 3, 8), Buffer("c", 3, 5, 8)], Packing({"a": 0, "c": 0}, 8, True, "by hand")) == ()


def test_buffer_past_the_capacity_is_named():
    p = Packing({"a": 0, "b": 8}, 16, True, "by hand")
    assert validate([A, B], p, capacity=16) == ()
    (v,) = validate([A, B], p, capacity=12)
    assert (v.rule, v.buffers) == ("capacity", ("b",)) and "capacity=12" in v.message


def test_misaligned_offset_is_named():
    (v,) = validate([A, Buffer("b", 2, 5, 8, align=16)], Packing({"a": 0, "b": 8}, 16, True, "by hand"))
    assert (v.rule, v.buffers) == ("align", ("b",)) and "offset=8" in v.message and "align=16" in v.message


def test_every_buffer_placed_once_and_only_buffers_placed():
    found = validate([A, B, Buffer("a", 6, 7, 4)], Packing({"b": 0, "z": 8}, 8, False, "by hand"))
    assert rules(found) == [("duplicate", ("a",)), ("unplaced", ("a",)), ("unknown", ("z",))]


@pytest.mark.parametrize("offset", [-8, 8.0, True, np.int64(8)])
def test_offsets_are_non_negative_ints(offset):
    (v,) = validate([A, B], Packing({"a": 0, "b": offset}, 16, False, "by hand"))
    assert (v.rule, v.buffers) == ("offset", ("b",)) and f"offset={offset!r}" in v.message


def test_the_arena_holds_every_buffer_and_is_what_they_need():
    assert rules(validate([A, B], Packing({"a": 0, "b": 8}, 12, False, "by hand"))) == [("arena", ("b",))]
    (v,) = validate([A, B], Packing({"a": 0, "b": 8}, 20, False, "by hand"))
    assert (v.rule, v.buffers) == ("arena", ("b",)) and "arena=20 but the buffers need 16" in v.message
    assert rules(validate([A], Packing({"a": 0}, -1, False, "by hand"))) == [("arena", ())]


def test_check_raises_with_the_violations_in_the_message():
    with pytest.raises(InvalidPackingError) as info:
        check([A, B], Packing({"a": 0, "b": 4}, 12, False, "by hand"))
    assert [v.rule for v in info.value.violations] == ["overlap"]
    assert "'a'" in str(info.value) and "'b'" in str(info.value)
    check([A, B], Packing({"a": 0, "b": 8}, 16, True, "by hand"))  # valid: no error


@given(buffer_lists(min_buffers=2, max_buffers=10), st.data())
def test_a_buffer_moved_onto_a_live_neighbour_is_caught(buffers, data):
    result = pack(buffers)
    pairs = [(a, b) for a in buffers for b in buffers
             if a.id < b.id and a.lower < b.upper and b.lower < a.upper]
    assume(pairs)
    a, b = data.draw(st.sampled_from(pairs))
    offsets = dict(result.offsets, **{b.id: result.offsets[a.id]})
    moved = Packing(offsets, max(offsets[x.id] + x.size for x in buffers), False, "planted")
    found = [v for v in validate(buffers, moved) if v.rule == "overlap"]
    assert any(set(v.buffers) == {a.id, b.id} for v in found)


@given(buffer_lists(min_buffers=1, max_buffers=12), st.data())
def test_the_fast_overlap_sweep_agrees_with_the_pair_by_pair_one(buffers, data):
    """The judge lists overlapping pairs only once its O(n log n) sweep says there is one: on any
    offsets (mostly overlapping ones, drawn in a small range) the sweep must say so exactly when a
    pair live together shares bytes, recounted here pair by pair."""
    offsets = {b.id: data.draw(st.integers(0, 40)) for b in buffers}
    pairs = [(a, b) for a in buffers for b in buffers if a.id < b.id and a.lower < b.upper and b.lower < a.upper
             and offsets[a.id] < offsets[b.id] + b.size and offsets[b.id] < offsets[a.id] + a.size]
    assert packing_check._first_overlap(buffers, offsets) == bool(pairs)


def _broken_greedy(monkeypatch):
    """Every greedy stage puts everything at 0 (the a/b pair then overlaps)."""
    monkeypatch.setattr(greedy, "best_fit", lambda inst, order, first=False: np.zeros(len(inst), np.int64))
    monkeypatch.setattr(greedy, "first_fit", lambda inst, order: np.zeros(len(inst), np.int64))


def test_every_packing_of_the_memory_tests_is_judged(monkeypatch):
    # tests/memory/conftest.py wraps pack(): a broken greedy stage fails the test that packs.
    _broken_greedy(monkeypatch)
    with pytest.raises(InvalidPackingError, match="'a'.*'b'"):
        pack([A, B])


@pytest.mark.parametrize("strategy", ["ge", "compact"])
def test_plan_buffers_judges_what_it_would_print(monkeypatch, tmp_path, capsys, strategy):
    csv = tmp_path / "two.csv"
    csv.write_text("id,lower,upper,size\na,0,3,8\nb,2,5,8\n")
    args = argparse.Namespace(buffers=str(csv), strategy=strategy, json=True, capacity=None, time_limit=None)
    assert plan_buffers.run(args) == 0
    capsys.readouterr()
    _broken_greedy(monkeypatch)
    with pytest.raises(InvalidPackingError, match="overlap"):
        plan_buffers.run(args)
    assert capsys.readouterr().out == ""   # nothing printed: a broken packing never reaches the caller


def test_the_judge_shares_no_code_with_the_packer():
    """packing_check.py may import the standard library and attrs, nothing of zcspec."""
    source = Path(packing_check.__file__)
    imported = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
    allowed = {"__future__", "bisect", "collections", "attrs"}
    assert imported <= allowed, f"packing_check.py imports {sorted(imported - allowed)}: it must stay independent"
