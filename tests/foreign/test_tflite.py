"""LiteRT's arena read from the kept models (checks/foreign/programs/litert): the op list from the
file, the offsets from the arena record LiteRT's interpreter gave when they were made."""
from __future__ import annotations

import json
import random

import attrs
import pytest

from zcspec.checks.cli.main import main
from zcspec.checks.foreign.programs import PROGRAMS
from zcspec.checks.foreign.tflite import TfliteError, load_record, read_tflite
from zcspec.spec.check import check
from tests.helpers.foreign_faults import assert_seeded_faults_caught

LT = PROGRAMS / "litert"


def _plan(name):
    return read_tflite(LT / name / "model.tflite", load_record(str(LT / name / "arena.json")))


def _ids(plan) -> set[str]:
    return set(check(plan).violated())


def test_in_place_element_wise_outputs_are_aliases_and_the_plan_is_clean():
    plan = _plan("residual-ladder")
    aliases = {t.name: t.alias_of for t in plan.tensors if t.alias_of}
    assert aliases == {"t3:x3": "t2:x2", "t6:x6": "t5:x5"}
    assert all(r.to == r.lo for s in plan.in_place for r in s.reads)     # element by element
    assert check(plan).ok
    # Without the in-place reading, LiteRT's by-design sharing looks like an overlap.
    plain = attrs.evolve(plan, tensors=tuple(attrs.evolve(t, alias_of=None) for t in plan.tensors), in_place=())
    assert "LAYOUT-NO-OVERLAP" in _ids(plain)


def test_faults_seeded_into_a_real_plan_are_caught_each_by_its_claim():
    assert_seeded_faults_caught(_plan("chain-concat"))


def test_import_with_a_saved_record_and_with_the_interpreter(tmp_path, capsys):
    model, record = LT / "two-outputs" / "model.tflite", LT / "two-outputs" / "arena.json"
    assert main(["import", "litert", str(model), "--arena", str(record), "--check"]) == 0
    assert "litert two-outputs" in capsys.readouterr().out
    pytest.importorskip("ai_edge_litert")
    saved = tmp_path / "arena.json"
    assert main(["import", "litert", str(model), "--save-arena", str(saved), "-o", str(tmp_path / "p.json")]) == 0
    assert load_record(str(saved)) == load_record(str(record))     # the interpreter places them the same way


def test_records_and_models_that_do_not_fit_are_refused(tmp_path, capsys):
    model = LT / "chain-concat" / "model.tflite"
    bad = tmp_path / "arena.json"
    bad.write_text('{"format": "zcspec litert arena 1", "offsets": {"99": 0}}')
    assert main(["import", "litert", str(model), "--arena", str(bad)]) == 2
    assert "not arena tensors" in capsys.readouterr().err
    bad.write_text("[]")
    with pytest.raises(TfliteError, match="not an arena record"):
        load_record(str(bad))
    good = model.read_bytes()
    offsets = load_record(str(LT / "chain-concat" / "arena.json"))
    rng = random.Random(1)
    for k in range(200):
        data = bytearray(good)
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        path = tmp_path / f"m{k}.tflite"
        path.write_bytes(bytes(data))
        try:
            read_tflite(path, offsets)
        except TfliteError as e:
            assert str(path) in str(e)


def test_freshly_built_models_read_as_the_kept_ones(tmp_path):
    pytest.importorskip("ai_edge_litert")
    from zcspec.checks.foreign.litert_programs import write_programs
    write_programs(tmp_path, only=("residual-ladder", "fc-view-read-twice"))
    for name in ("residual-ladder", "fc-view-read-twice"):
        plan = read_tflite(tmp_path / name / "model.tflite", load_record(str(tmp_path / name / "arena.json")))
        assert plan == _plan(name), name
        meta = json.loads((tmp_path / name / "program.json").read_text())
        assert meta["matches_reference"] == (name == "residual-ladder"), meta


def test_views_of_the_fc_output_are_aliases_and_its_in_place_add_is_by_design():
    plan = _plan("fc-view-add-in-place")
    aliases = {t.name: t.alias_of for t in plan.tensors if t.alias_of}
    # Both RESHAPEs and the ADD computed over the second one live in the FULLY_CONNECTED output's bytes.
    assert aliases == {"t3:x3": "t2:x2", "t4:x4": "t2:x2", "t5:x5": "t2:x2"}
    assert [s.step for s in plan.in_place] == [3]
    assert check(plan).ok
    # Read as separate tensors, the views LiteRT shares by design look like overlaps.
    plain = attrs.evolve(plan, tensors=tuple(attrs.evolve(t, alias_of=None) for t in plan.tensors), in_place=())
    assert "LAYOUT-NO-OVERLAP" in _ids(plain)


def test_litert_8928_an_in_place_add_over_a_view_still_read_later_is_an_overlap():
    plan = _plan("fc-view-read-twice")
    report = check(plan)
    assert set(report.violated()) == {"LAYOUT-NO-OVERLAP"}
    (v,) = report.violations
    # The ADD's output takes the FULLY_CONNECTED output's bytes while the second view of them (t6,
    # read by the MUL at step 5) is still to be read: not an in-place step, an overwrite.
    assert set(v.values["tensors"]) == {"t2:x2", "t5:x5"}
    assert plan.in_place == () and plan.tensor["t6:x6"].alias_of == "t2:x2"
    meta = json.loads((LT / "fc-view-read-twice" / "program.json").read_text())
    assert not meta["matches_reference"] and meta["max_abs_diff_vs_numpy_preserve_all_tensors"] <= 1e-5



def test_an_element_wise_output_in_the_bytes_of_a_model_output_overwrites_it():
    # The last operator, an ADD, reads model output t1 and writes t2 in its bytes: the caller reads t1
    # after the last operator, so t2 is not computed in place but a tensor sharing t1's bytes.
    from types import SimpleNamespace
    from zcspec.checks.foreign.tflite import _in_place
    from zcspec.spec.observables.plan import PlacedTensor

    def placed(i, first, last):
        return PlacedTensor(name=f"t{i}", region="arena", offset=0 if i else 64, size=16, aligned_size=16,
                            first=first, last=last, block=None, zero_copy=False)

    tensors, name = [placed(0, 0, 1), placed(1, 0, 1), placed(2, 1, 1)], {i: f"t{i}" for i in range(3)}
    for outputs, in_place in (((1, 2), ()), ((2,), (1,))):
        model = SimpleNamespace(operators=[(0, (0, 0), (1,)), (0, (1, 0), (2,))], codes=[0], outputs=outputs)
        _, steps = _in_place(model, tensors, name)
        assert tuple(s.step for s in steps) == in_place, outputs
