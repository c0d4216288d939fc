"""XLA's buffer assignment read from the kept dumps (checks/foreign/programs/xla), checked by the spec."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys

import attrs
import pytest

from zcspec.checks.cli.main import main
from zcspec.checks.foreign import plan_file
from zcspec.checks.foreign.programs import PROGRAMS, foreign_cases, problems
from zcspec.checks.foreign.xla_dump import XlaDumpError, find_modules, read_module
from zcspec.spec.check import check
from tests.helpers.foreign_faults import assert_seeded_faults_caught

XLA = PROGRAMS / "xla"
CASES = [c for c in foreign_cases() if c.planner == "xla"]


def _plan(name):
    return read_module(find_modules(XLA / name)[0])


def _violated(plan) -> set[str]:
    return set(check(plan).violated())


def test_the_kept_programs_cover_loops_conditionals_in_place_updates_and_a_known_bug():
    names = {c.name for c in CASES}
    assert {"mlp-train-step", "scan-carry", "two-conds", "donated-update", "shift-rows-in-place"} <= names
    assert [c.issue for c in CASES if c.expect != "clean"] == ["openxla/xla#49176"]


def test_xla_49176_is_found_from_the_dump_alone_with_the_bytes_it_reads_and_writes():
    plan = _plan("shift-rows-in-place")
    (v,) = check(plan).violations
    assert v.invariant_id == "LAYOUT-IN-PLACE-READS"
    # base = [1, 2, 3, 4] (int32); base[:3] (bytes 0..12) is written one row down (bytes 4..16)
    assert v.values["read"] == [0, 12] and v.values["to"] == 4 and v.values["written"] == [4, 16]
    # The same copy with rows that do not overlap is exercised and clean.
    apart = check(_plan("copy-rows-apart"))
    assert "LAYOUT-IN-PLACE-READS" in apart.exercised and apart.ok


def test_in_place_outputs_are_aliases_and_hand_overs_through_loops_are_not_conflicts():
    plan = _plan("scan-carry")
    assert sum(t.alias_of is not None for t in plan.tensors) >= 5
    assert check(plan).ok
    donated = _plan("donated-update")
    (param,) = [t for t in donated.tensors if t.name == "buf.1"]
    assert any(t.alias_of == "buf.1" for t in donated.tensors) and "buf.1" in donated.graph_inputs
    assert donated.arena(param.region).kind == "user_io"


def _temps(plan):
    temp = max((r for r in plan.regions if plan.arena(r).kind == "activations"), key=lambda r: plan.regions[r])
    return [t for t in plan.tensors if t.region == temp and t.alias_of is None]


def _with(plan, name, **changes):
    return attrs.evolve(plan, tensors=tuple(attrs.evolve(t, **changes) if t.name == name else t for t in plan.tensors))


def test_faults_seeded_into_a_real_plan_are_caught_each_by_its_claim():
    assert_seeded_faults_caught(_plan("mlp-train-step"))


def test_the_plan_file_round_trips(tmp_path):
    case = next(c for c in CASES if c.name == "two-conds")
    (imported,) = case.imported()
    plan_file.write(imported, str(tmp_path / "p.json"))
    again = plan_file.read(str(tmp_path / "p.json"))
    assert again.plan == imported.plan and again.planner == "xla" and again.program == "two-conds"


def test_import_and_check_on_the_command_line(tmp_path, capsys):
    out = tmp_path / "plan.json"
    assert main(["import", "xla", str(XLA / "mlp-train-step"), "-o", str(out)]) == 0
    assert main(["check", str(out), "--picture", str(tmp_path / "p.svg")]) == 0
    text = capsys.readouterr().out
    assert "0 violation(s)" in text and "lower bound" in text and (tmp_path / "p.svg").read_text().startswith("<svg")
    assert main(["import", "xla", str(XLA / "shift-rows-in-place"), "--check"]) == 1
    assert "LAYOUT-IN-PLACE-READS" in capsys.readouterr().out


def test_a_dump_of_several_modules_needs_a_choice(tmp_path, capsys):
    for name in ("two-conds", "scan-carry"):
        for f in (XLA / name).glob("*.txt"):
            shutil.copy(f, tmp_path / f"{name}.{f.name}")
    assert len(find_modules(tmp_path)) == 2
    assert main(["import", "xla", str(tmp_path)]) == 2
    assert "2 modules" in capsys.readouterr().err
    assert main(["import", "xla", str(tmp_path), "--module", "scan", "--check"]) == 0
    assert main(["import", "xla", str(tmp_path), "-o", str(tmp_path / "plans")]) == 0
    assert len(list((tmp_path / "plans").glob("*.json"))) == 2


def test_bad_dumps_are_refused_naming_the_file_and_line(tmp_path, capsys):
    with pytest.raises(XlaDumpError, match="no such file"):
        find_modules(tmp_path / "missing")
    with pytest.raises(XlaDumpError, match="no module"):
        find_modules(tmp_path)
    for f in (XLA / "two-conds").glob("*.txt"):
        shutil.copy(f, tmp_path / f.name)
    assignment = next(tmp_path.glob("*-buffer-assignment.txt"))
    lines = assignment.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(" value:"))
    lines[at] = " value: <garbled"
    assignment.write_text("\n".join(lines))
    with pytest.raises(XlaDumpError, match=rf"{assignment.name}: line {at + 1}: a value line"):
        read_module(find_modules(tmp_path)[0])
    next(tmp_path.glob("*-live-range.txt")).unlink()
    assert main(["import", "xla", str(tmp_path)]) == 2
    assert "lacks" in capsys.readouterr().err


def test_a_plan_file_that_is_not_a_plan_is_refused(tmp_path, capsys):
    (tmp_path / "x.json").write_text("[1, 2]")
    assert main(["check", str(tmp_path / "x.json")]) == 2
    assert "x.json" in capsys.readouterr().err
    (tmp_path / "y.json").write_text('{"order": ["a"], "tensors": [], "regions": {"r": 8}, "arenas": {}}')
    assert main(["check", str(tmp_path / "y.json")]) == 2
    err = capsys.readouterr().err
    assert "y.json" in err and "region 'r'" in err


def test_freshly_exported_programs_read_as_the_kept_ones(tmp_path):
    pytest.importorskip("jax")
    from zcspec.checks.foreign.xla_programs import write_dumps
    lines = write_dumps(tmp_path, only=("shift-rows-in-place", "copy-rows-apart"))
    assert len(lines) == 2
    for case in foreign_cases(tmp_path):
        assert problems(case, [check(p.plan) for p in case.imported()]) == [], case.name


def test_the_program_maker_runs_as_a_script_only_with_jax():
    pytest.importorskip("jax")
    run = subprocess.run([sys.executable, "-m", "zcspec.checks.foreign.xla_programs", "--help"],
                         capture_output=True, text=True)
    assert run.returncode == 0 and "--only" in run.stdout


# -- the dumps of older jaxlib releases ------------------------------------------------------------

def _combined(tmp_path, name):
    """The kept split dump ``name`` as jaxlib 0.7 and older print it: the values and the live ranges
    as sections of the buffer-assignment file."""
    files = {f.name.removeprefix("jit_f.cpu_after_optimizations"): f.read_text() for f in (XLA / name).glob("*.txt")}
    combined = "\n".join([files["-buffer-assignment.txt"], files["-buffer-assignment-values.txt"],
                          files["-live-range.txt"]])
    (tmp_path / "jit_f.cpu_after_optimizations-buffer-assignment.txt").write_text(combined)
    (tmp_path / "jit_f.cpu_after_optimizations.txt").write_text(files[".txt"])
    return tmp_path / "jit_f.cpu_after_optimizations-buffer-assignment.txt"


@pytest.mark.parametrize("name", ["scan-carry", "shift-rows-in-place", "two-conds"])
def test_a_dump_with_every_section_in_the_buffer_assignment_file_reads_as_the_split_one(tmp_path, name):
    _combined(tmp_path, name)
    (module,) = find_modules(tmp_path)
    assert module.files[0] == module.files[1] == module.files[2]
    assert read_module(module) == _plan(name)


def test_a_combined_dump_is_refused_naming_the_line_of_the_combined_file(tmp_path, capsys):
    path = _combined(tmp_path, "two-conds")
    lines = path.read_text().splitlines()
    at = lines.index("  InstructionSequence:") + 2
    lines[at] = "    7:garbled step"
    path.write_text("\n".join(lines))
    with pytest.raises(XlaDumpError, match=rf"{path.name}: line {at + 1}: expected step 1 of the instruction sequence"):
        read_module(find_modules(tmp_path)[0])
    head = next(i for i, line in enumerate(lines) if line.startswith("HloLiveRange"))
    path.write_text("\n".join(lines[:head]))
    assert main(["import", "xla", str(tmp_path)]) == 2
    assert "lacks ['jit_f.cpu_after_optimizations-live-range.txt']" in capsys.readouterr().err


def test_the_short_hlo_text_of_jaxlib_0_4_reads_as_the_text_with_percent_signs(tmp_path):
    """jaxlib 0.4 prints ``name {`` ... ``} // name`` and bare operand names; the in-place fusion of
    openxla/xla#49176 must read the same from either spelling."""
    for f in (XLA / "shift-rows-in-place").glob("*.txt"):
        text = f.read_text()
        if f.name.endswith("optimizations.txt"):
            text = re.sub(r"^(ENTRY )?%(\S+) \(.*\) -> .* \{$", r"\1\2 {", text, flags=re.M).replace("%", "")
            assert "%" not in text and "ENTRY main" in text
        (tmp_path / f.name).write_text(text)
    short = read_module(find_modules(tmp_path)[0])
    assert short == _plan("shift-rows-in-place") and short.in_place and short.graph_inputs



def test_only_the_entry_computations_parameters_are_graph_inputs():
    """jaxlib 0.7.2 keeps a loop counter in the donated parameter's allocation once the parameter is
    dead; the loop body's parameter is not the caller's buffer (read as one, it broke
    LAYOUT-LIFETIME-COVERS-USES: 'a graph input kept only from step 5')."""
    plan = _plan("donated-loop-reads-intermediate-jax0.7.2")
    assert plan.graph_inputs == ("x_initial.1",)
    assert {t.name for t in plan.tensors if t.region == "allocation 0"} >= {"arg_tuple.5{0}", "copy.9"}
    assert check(plan).ok
