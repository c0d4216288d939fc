"""ExecuTorch's plan read from the kept .pte files (checks/foreign/programs/executorch), checked by the spec."""
from __future__ import annotations

import json
import random
import subprocess
import sys

import attrs
import pytest

from zcspec.checks.cli.main import main
from zcspec.checks.foreign.programs import PROGRAMS, foreign_cases, problems
from zcspec.checks.foreign.pte import PteError, _in_place, methods, read_pte
from zcspec.spec.check import check
from zcspec.spec.observables.plan import PlacedTensor
from tests.helpers.foreign_faults import assert_seeded_faults_caught

ET = PROGRAMS / "executorch"


def _paths(name):
    return read_pte(ET / name / "program.pte")[1]


def _plan(name):
    (label, plan), = _paths(name)
    assert label == ""
    return plan


def _ids(plan) -> set[str]:
    return set(check(plan).violated())


def test_the_two_cond_bug_is_found_from_the_file_alone_on_every_path():
    paths = _paths("two-conds")
    assert [label for label, _ in paths] == [f"cond at 2: {a}, cond at 12: {b}"
                                             for a in ("true", "false") for b in ("true", "false")]
    for label, plan in paths:
        report = check(plan)
        assert set(report.violated()) == {"LAYOUT-NO-OVERLAP"}, label
        # Each finding pairs the first cond's result (moved out by MoveCall, alive until the final add)
        # with a tensor the second cond's branch writes, in the same bytes.
        for v in report.violations:
            moved = [t for t in plan.tensors if t.name.startswith("v7@")]
            assert moved and any(plan.root(m.name) in v.values["tensors"] for m in moved), label


def test_each_path_is_a_plan_of_its_own_and_one_linear_plan_would_be_wrong():
    (t, f) = _paths("one-cond")
    assert t[0] == "cond at 2: true" and f[0] == "cond at 2: false"
    # On each path the moved result is an alias of that path's branch result, alive after the cond
    # until the kernel that reads it.
    for _, plan in (t, f):
        (moved,) = [x for x in plan.tensors if "@" in x.name]
        assert moved.alias_of is not None and moved.last > moved.first
        assert moved.last == max(s for name, steps in plan.consumers.items() if name == moved.name for s in steps)
        assert check(plan).ok
    # Both branches in one linear plan: their results share bytes while the first's moved value lives.
    both = {x.name: x for plan in (t[1], f[1]) for x in plan.tensors}
    merged = attrs.evolve(t[1], tensors=tuple(both.values()), consumers={}, writes={}, graph_outputs=())
    assert "LAYOUT-NO-OVERLAP" in _ids(merged)


def test_faults_seeded_into_a_real_plan_are_caught_each_by_its_claim():
    assert_seeded_faults_caught(_plan("mlp"))


def test_import_and_check_on_the_command_line(tmp_path, capsys):
    assert main(["import", "executorch", str(ET / "two-conds" / "program.pte"), "--check"]) == 1
    assert "LAYOUT-NO-OVERLAP" in capsys.readouterr().out
    out = tmp_path / "mlp.json"
    assert main(["import", "executorch", str(ET / "mlp" / "program.pte"), "-o", str(out)]) == 0
    assert main(["check", str(out)]) == 0
    assert "executorch mlp" in capsys.readouterr().out
    assert main(["import", "executorch", str(ET / "mlp" / "program.pte"), "--module", "nope"]) == 2
    assert "no method 'nope'" in capsys.readouterr().err
    assert methods(str(ET / "mlp" / "program.pte")) == ["forward"]


def test_crafted_files_are_refused_with_the_file_named_never_crash_or_hang(tmp_path):
    good = (ET / "two-conds" / "program.pte").read_bytes()
    cases = {"empty": b"", "short": good[:6], "identifier": good[:4] + b"XXXX" + good[8:], "half": good[: len(good) // 2]}
    rng = random.Random(0)
    for k in range(300):
        data = bytearray(good)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        cases[f"mutant{k}"] = bytes(data)
    for name, data in cases.items():
        path = tmp_path / f"{name}.pte"
        path.write_bytes(data)
        try:
            read_pte(path)
        except PteError as e:
            assert str(path) in str(e), name
    for name in ("empty", "short", "identifier"):
        with pytest.raises(PteError, match="not a well-formed ExecuTorch program"):
            read_pte(tmp_path / f"{name}.pte")


def test_freshly_exported_programs_read_as_the_kept_ones(tmp_path):
    """With a Python that has torch and ExecuTorch ($ZCSPEC_EXECUTORCH_PYTHON, or this one)."""
    import importlib.util
    import os
    python = os.environ.get("ZCSPEC_EXECUTORCH_PYTHON")
    if not python and importlib.util.find_spec("executorch") is None:
        pytest.skip("needs ExecuTorch: install the executorch extra or set ZCSPEC_EXECUTORCH_PYTHON")
    from zcspec.checks.foreign.executorch_programs import write_programs
    write_programs(tmp_path / "executorch", only=("one-cond", "two-conds", "shared-alloc-lifetime",
                                                  "shared-alloc-lifetime-fixed"), python=python or sys.executable)
    cases = foreign_cases(tmp_path)
    assert len(cases) == 3          # one of the shared-alloc pair: the one this release makes
    for case in cases:
        assert problems(case, [check(p.plan) for p in case.imported()]) == [], case.name


def test_the_program_maker_has_help():
    run = subprocess.run([sys.executable, "-m", "zcspec.checks.foreign.executorch_programs", "--help"],
                         capture_output=True, text=True)
    assert run.returncode == 0 and "--python" in run.stdout


def test_a_map_loop_keeps_carried_tensors_through_the_body_and_body_temporaries_per_iteration():
    plan = _plan("map-rows")
    assert check(plan).ok
    loop = [k for k, name in enumerate(plan.order) if name.split(":", 1)[1] == "jump"]
    assert loop, "the map is a loop: a jump back to the body's start"
    offsets = {t.offset for t in plan.tensors}
    spans = sorted(t.last - t.first for t in plan.tensors)
    # Some tensors live one or two steps (made anew in each iteration), others across the whole body.
    assert spans[0] <= 2 and spans[-1] >= 5 and len(offsets) < len(plan.tensors)


def test_the_loop_rule_finds_the_cond_then_map_overlaps_and_keeps_map_rows_clean(monkeypatch):
    import zcspec.checks.foreign.pte as pte_module
    from zcspec.checks.foreign.finding import ForeignFinding, replay_finding
    from pathlib import Path
    finding = ForeignFinding.load(str(Path(__file__).parent / "findings" / "executorch-cond-then-map.json"))
    carried = replay_finding(finding)
    assert carried.still_fails
    # Without carrying the map's input through the body, only the overlaps at the step that reads
    # it remain; those through the later iterations' steps are missed ...
    monkeypatch.setattr(pte_module, "_carried", lambda *a: set())
    assert len(replay_finding(finding).violations) < len(carried.violations)
    # ... and carrying every tensor the body touches makes the clean map-rows look broken.
    monkeypatch.setattr(pte_module, "_carried", lambda steps, r, w, loops: {
        s for f, last in loops if any(f <= x <= last for x in steps) for s in range(f, last + 1)})
    assert "LAYOUT-NO-OVERLAP" in _ids(_plan("map-rows"))


def _meta(name) -> dict:
    return json.loads((ET / name / "program.json").read_text())


def test_pytorch_executorch_21840_a_tensor_takes_the_bytes_of_a_shared_allocation_still_live():
    plan = _plan("shared-alloc-lifetime")
    report = check(plan)
    assert set(report.violated()) == {"LAYOUT-NO-OVERLAP"}
    (v,) = report.violations
    # maximum's result v3 is planned in the bytes of x * 2 (v2), which die there: an in-place step by
    # design. sin's result v4 is planned there too while maximum's result is still read (b * c at step 3).
    assert plan.tensor["v3"].alias_of == "v2" and [s.step for s in plan.in_place] == [1]
    assert set(v.values["tensors"]) == {"v2", "v4"}
    assert plan.order[2] == "2:aten::sin.out"
    meta = _meta("shared-alloc-lifetime")
    assert meta["executorch"].startswith("1.4.") and not meta["matches_eager"]


def test_the_release_with_the_fix_plans_the_same_program_clean():
    plan = _plan("shared-alloc-lifetime-fixed")
    assert check(plan).ok
    assert plan.tensor["v3"].alias_of == "v2" and [s.step for s in plan.in_place] == [1]
    # Read as two tensors, the pair the planner shares by design looks like an overlap.
    plain = attrs.evolve(plan, tensors=tuple(attrs.evolve(t, alias_of=None) for t in plan.tensors), in_place=())
    assert "LAYOUT-NO-OVERLAP" in _ids(plain)
    meta = _meta("shared-alloc-lifetime-fixed")
    assert meta["executorch"] == "1.5.1" and meta["matches_eager"]


def _placed(name, offset, first, last, alias_of=None):
    return PlacedTensor(name=name, region="mem 1", offset=offset, size=16, aligned_size=16, first=first, last=last,
                        block=None, zero_copy=False, alias_of=alias_of)


def test_an_element_wise_result_shares_its_input_only_when_no_tensor_of_that_memory_is_used_later():
    dying = [_placed("a", 0, 0, 1), _placed("b", 0, 1, 2)]
    tensors, steps = _in_place(dying, [(1, ["a"], ["b"])])
    assert [t.alias_of for t in tensors] == [None, "a"] and [s.step for s in steps] == [1]
    # The input dies at the kernel but an alias of its memory (a moved value) is read at step 3.
    moved = dying + [_placed("a@0", 0, 0, 3, alias_of="a")]
    tensors, steps = _in_place(moved, [(1, ["a"], ["b"])])
    assert all(t.alias_of is None for t in tensors[:2]) and steps == ()
    # Another offset or size is no sharing at all.
    tensors, steps = _in_place([_placed("a", 0, 0, 1), _placed("b", 16, 1, 2)], [(1, ["a"], ["b"])])
    assert steps == ()


def test_an_element_wise_result_in_the_bytes_of_a_method_output_overwrites_it():
    # maximum's result m is returned and sin(m) is planned in m's bytes at the last step: the caller
    # reads m after it, so sin's result is not in place but a tensor sharing m's bytes (what
    # ExecuTorch 1.4.1 planned for a drawn program, pytorch/executorch#21840).
    tensors = [_placed("m", 0, 0, 1), _placed("s", 0, 1, 1)]
    _, steps = _in_place(tensors, [(1, ["m"], ["s"])], {"m", "s"})
    assert steps == ()
    assert [s.step for s in _in_place(tensors, [(1, ["m"], ["s"])], {"s"})[1]] == [1]
