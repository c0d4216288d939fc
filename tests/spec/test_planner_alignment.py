"""Foreign plans are held to the offset alignment their planner documents (spec/capabilities.py PLANNERS),
not to the alignment they declare: IREE's dumps name none (the reader declares 1), yet IREE packs every
slice at 64 bytes, so an IREE plan with a misaligned slice breaks LAYOUT-ARENA-ALIGN."""
from __future__ import annotations

import json

import attrs
import pytest

from zcspec.checks.foreign import plan_file, pte, tflite, xla_dump
from zcspec.checks.foreign.programs import PROGRAMS, foreign_case
from zcspec.spec.capabilities import PLANNERS, arena_alignment
from zcspec.spec.check import check
from zcspec.spec.examples.build import plan
from zcspec.spec.observables.plan import Alignment, Arena
from zcspec.spec.registry import get

ARENA_ALIGN = get("LAYOUT-ARENA-ALIGN")


def _iree_plan():
    (imported,) = foreign_case(PROGRAMS / "iree" / "squeezenet" / "program.json").imported()
    return imported.plan


def _shifted(p, by: int):
    """``p`` with the first tensor that owns memory moved ``by`` bytes (its arena grown to hold it)."""
    t = next(t for t in p.tensors if t.alias_of is None and t.size > 0)
    moved = attrs.evolve(t, offset=t.offset + by)
    regions = {**p.regions, t.region: max(p.regions[t.region], moved.end)}
    return attrs.evolve(p, tensors=tuple(moved if x is t else x for x in p.tensors), regions=regions), t.name


def test_every_foreign_planner_has_a_documented_alignment_with_its_source():
    assert set(PLANNERS) == {"xla", "executorch", "litert", "iree", "tvm"}
    for p in PLANNERS.values():
        assert p.alignment >= 1 and p.alignment & (p.alignment - 1) == 0, p
        assert ".h" in p.source or ".cpp" in p.source or ".py" in p.source, p
    assert PLANNERS["tvm"].alignment == 1   # TVM aligns its storages, and places tensors at any offset in them
    # The readers' defaults are the table's, not constants of their own.
    assert (xla_dump.CPU_ALIGNMENT, pte.ALIGNMENT, tflite.ALIGNMENT) == (
        PLANNERS["xla"].alignment, PLANNERS["executorch"].alignment, PLANNERS["litert"].alignment)


def test_an_iree_plan_is_held_to_iree_s_alignment_though_it_declares_none():
    p = _iree_plan()
    assert p.planner == "iree" and {a.alignment for a in p.arenas.values()} == {1}
    assert arena_alignment(p, "transient") == 64
    report = check(p)
    assert "LAYOUT-ARENA-ALIGN" in report.exercised and report.ok, str(report)


def test_a_misaligned_iree_slice_breaks_arena_align():
    bad, name = _shifted(_iree_plan(), 16)
    (v,) = ARENA_ALIGN.violations(bad)
    assert v.culprit == f"tensor {name!r}" and v.values["alignment"] == 64
    # Before the table the same plan was judged against the 1 it declares: the claim did not apply.
    anonymous = attrs.evolve(bad, planner=None)
    assert ARENA_ALIGN.violations(anonymous) == () and not ARENA_ALIGN.exercised(anonymous)


@pytest.mark.parametrize("planner, by", [("xla", 32), ("executorch", 8), ("litert", 32), ("iree", 16)])
def test_each_planner_s_alignment_is_applied_over_a_smaller_declared_one(planner, by):
    p = plan([("a", "arena", 0, 64, 0, 1), ("b", "arena", 64 + by, 64, 1, 2)], regions={"arena": 256},
             arenas={"arena": Arena("activations", 1)})
    assert ARENA_ALIGN.violations(attrs.evolve(p, planner=planner)) != ()
    assert ARENA_ALIGN.violations(p) == ()


def test_the_plan_file_keeps_the_planner(tmp_path):
    imported = plan_file.ImportedPlan("iree", "layout.txt", "squeezenet", _iree_plan())
    path = tmp_path / "plan.json"
    plan_file.write(imported, str(path))
    data = json.loads(path.read_text())
    assert data["planner"] == "iree" and list(data).count("planner") == 1
    again = plan_file.read(str(path))
    assert again.planner == "iree" and again.plan.planner == "iree"
    # A hand-written file that names IREE and declares alignment 1 is still held to 64.
    bad, _ = _shifted(again.plan, 16)
    assert "LAYOUT-ARENA-ALIGN" in check(bad).violated()


def test_a_ge_plan_naming_no_soc_is_held_to_ge_s_granularities_when_it_names_ge():
    rs = [("y", "zero_copy", 0, 32, 0, 1), ("x", "zero_copy", 32, 32, 0, 1)]
    p = plan(rs, alignment=Alignment(block={"feature_map": 512, "zero_copy": 32}))
    p = attrs.evolve(p, tensors=tuple(attrs.evolve(t, aligned_size=32) for t in p.tensors),
                     blocks=tuple(attrs.evolve(b, size=32) for b in p.blocks))
    assert get("LAYOUT-ALIGN").violations(p) == ()                             # its own claim, no planner named
    assert get("LAYOUT-ALIGN").violations(attrs.evolve(p, planner="ge")) != ()  # GE's 512
