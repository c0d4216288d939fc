"""IREE's transient plan read from the kept stream dumps (checks/foreign/programs/iree), checked by the spec."""
from __future__ import annotations

import pytest

from zcspec.checks.cli.main import main
from zcspec.checks.foreign.iree_mlir import IreeDumpError, read_iree_dump
from zcspec.checks.foreign.programs import PROGRAMS
from zcspec.spec.check import check
from tests.helpers.foreign_faults import assert_seeded_faults_caught
from zcspec.spec.invariants.layout_bound import arena_peak

IREE = PROGRAMS / "iree"


def _plan(name, **kw):
    (_, plan), = read_iree_dump(IREE / name / "layout.txt", **kw)
    return plan


def _ids(plan) -> set[str]:
    return set(check(plan).violated())


def test_squeezenet_is_packed_at_its_lower_bound():
    plan = _plan("squeezenet")
    assert check(plan).ok
    assert plan.regions["transient"] == arena_peak(plan, "transient")
    # Every access was mapped to a slice: each slice is read or written, and written before it is read.
    for t in plan.tensors:
        assert t.name in plan.writes and min(plan.writes[t.name]) <= min(plan.consumers.get(t.name, (t.last,)))


def test_a_concurrent_block_is_one_step():
    text = (IREE / "squeezenet" / "layout.txt").read_text()
    plan = _plan("squeezenet")
    body = text[text.index("stream.cmd.execute"):]
    body = body[: body.index("IR Dump")]
    commands = body.count("stream.cmd.dispatch") + body.count("stream.cmd.fill") + body.count("stream.cmd.copy")
    assert body.count("stream.cmd.concurrent") > 0 and len(plan.order) < commands


def test_faults_seeded_into_a_real_plan_are_caught_each_by_its_claim():
    assert_seeded_faults_caught(_plan("resnet50", alignment=64), misalign=16)


def test_bad_dumps_are_refused_naming_the_file(tmp_path, capsys):
    text = (IREE / "squeezenet" / "layout.txt").read_text()
    only_before = tmp_path / "before.txt"
    only_before.write_text("\n".join(line for line in text.splitlines() if "IR Dump After" not in line))
    with pytest.raises(IreeDumpError, match="do not pair up"):
        read_iree_dump(only_before)
    nothing = tmp_path / "empty.txt"
    nothing.write_text("no dump here\n")
    assert main(["import", "iree", str(nothing)]) == 2
    assert "empty.txt" in capsys.readouterr().err


def test_import_on_the_command_line(tmp_path, capsys):
    assert main(["import", "iree", str(IREE / "inception_v1" / "layout.txt"), "--check"]) == 0
    out = capsys.readouterr().out
    assert "iree inception_v1" in out and "transient" in out
    assert main(["import", "iree", str(IREE / "squeezenet" / "layout.txt"), "-o", str(tmp_path / "p.json")]) == 0
    assert main(["check", str(tmp_path / "p.json")]) == 0


def test_freshly_compiled_programs_read_as_the_kept_ones(tmp_path):
    pytest.importorskip("iree.compiler")
    from zcspec.checks.foreign.iree_programs import write_programs
    write_programs(tmp_path / "iree", only=("squeezenet",))
    (_, plan), = read_iree_dump(tmp_path / "iree" / "squeezenet" / "layout.txt")
    assert check(plan).ok and plan.regions == _plan("squeezenet").regions


def test_mangled_dumps_are_refused_naming_the_file_never_crash(tmp_path):
    import random
    lines = (IREE / "squeezenet" / "layout.txt").read_text().splitlines()
    rng = random.Random(3)
    for k in range(60):
        mangled = list(lines)
        for _ in range(rng.randint(1, 5)):
            i = rng.randrange(len(mangled))
            choice = rng.random()
            if choice < 0.4:
                del mangled[i]
            elif choice < 0.7:
                mangled[i] = mangled[i].replace("%c", "%d", 1)
            else:
                mangled[i] = mangled[i][: rng.randrange(len(mangled[i]) + 1)]
        path = tmp_path / f"m{k}.txt"
        path.write_text("\n".join(mangled))
        try:
            read_iree_dump(path)
        except IreeDumpError as e:
            assert str(path) in str(e)
