"""IREE's transient plan read from the kept stream dumps (checks/foreign/programs/iree), checked by the spec."""
from __future__ import annotations

import re

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


# -- the bugs kept: IREE 3.0's headers, execute regions in loop bodies, a function's own slices ----

def _plans(name):
    return read_iree_dump(IREE / name / "layout.txt")


def test_iree_3_0s_headers_name_the_pass_in_parentheses():
    text = (IREE / "emplace-unused-tied-result" / "layout.txt").read_text()
    assert "IR Dump Before LayoutSlicesPass (iree-stream-layout-slices)" in text
    assert [name for name, _ in _plans("emplace-unused-tied-result")] == ["g$async"]


def test_an_unused_tied_result_given_its_own_slice_leaves_the_concatenation_unwritten():
    """iree-org/iree#19355 (IREE 3.0.0): the dispatch writes both results into slice 1, the slice
    ScheduleAllocation gave the unused one; the concatenation, slice 2, is read and never written."""
    (_, plan), = _plans("emplace-unused-tied-result")
    assert plan.writes["slice 2"] == () and plan.consumers["slice 2"] == (1,)
    assert plan.writes["slice 1"] == (0,) and plan.consumers["slice 1"] == (0,)     # bound rw: tied results
    report = check(plan)
    assert report.violated() == ("LAYOUT-READS-SEE-WRITES",)
    assert report.violations[0].culprit == "tensor 'slice 2'"
    (_, fixed), = _plans("emplace-unused-tied-result-fixed")      # 3.1.0: the dispatch writes the concatenation
    assert check(fixed).ok and "LAYOUT-READS-SEE-WRITES" in check(fixed).exercised
    assert [t.name for t in fixed.tensors] == ["slice 1", "slice 2"] and fixed.writes["slice 1"] == (0,)


def test_two_loops_given_one_resource_both_update_it_in_place():
    """iree-org/iree#21053 (IREE 3.5.0): each direction's scf.for carries the same slice in place, so the
    second loop overwrites the first one's result before the final copy reads it."""
    plans = dict(_plans("bidirectional-lstm"))
    host = plans["lstm$async#0"]
    assert {t.name: t.alias_of for t in host.tensors} == {"slice 1": None, "slice 2": None, "%7#0": "slice 2",
                                                          "%8#0": "slice 2"}
    (first,) = [s.step for s in host.in_place if s.tensor == "%7#0"]
    (second,) = [s.step for s in host.in_place if s.tensor == "%8#0"]
    assert first < second < host.consumers["%7#0"][0] == host.consumers["%8#0"][0]
    report = check(host)
    assert report.violated() == ("LAYOUT-READS-SEE-WRITES",)
    (v,) = report.violations
    assert v.culprit == "tensor '%7#0'" and v.values["by"] == "%8#0" and v.values["at"] == second
    assert all(check(p).ok for name, p in plans.items() if name != "lstm$async#0")


def test_the_same_lstm_made_by_3_13_copies_per_trip_and_is_clean():
    plans = _plans("bidirectional-lstm-3.13")
    assert len(plans) == 4 and all(check(p).ok for _, p in plans)
    host = dict(plans)["lstm$async#0"]
    assert [t.name for t in host.tensors] == ["slice 1", "slice 2"] and host.in_place == ()


def test_each_loop_bodys_execute_reads_its_own_pack():
    # both bodies print %result_24 and reuse names such as %15: each plan is its own body's pack
    plans = dict(_plans("bidirectional-lstm"))
    assert [len(plans[f"lstm$async#{k}"].tensors) for k in (1, 2)] == [15, 16]


_HOST = """// -----// IR Dump {when} LayoutSlicesPass: iree-stream-layout-slices //----- //
util.func public @f(%arg0: !hal.buffer_view) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
{pack}
  %result, %result_timepoint = stream.resource.alloca uninitialized : !stream.resource<transient>{{{size}}} => !stream.timepoint
  %1 = stream.resource.subview %result[{first}] : !stream.resource<transient>{{{size}}} -> !stream.resource<transient>{{%c16}}
  %2 = stream.resource.subview %result[{second}] : !stream.resource<transient>{{{size}}} -> !stream.resource<transient>{{%c16}}
  %3 = stream.cmd.execute await(%result_timepoint) => with(%1 as %arg1: !stream.resource<transient>{{%c16}}, %2 as %arg2: !stream.resource<transient>{{%c16}}) {{
    stream.cmd.fill %c0_i8, %arg1[%c0 for %c16] : i8 -> !stream.resource<transient>{{%c16}}
    stream.cmd.fill %c0_i8, %arg2[%c0 for %c16] : i8 -> !stream.resource<transient>{{%c16}}
  }} => !stream.timepoint
  %4:2 = stream.timepoint.await %3 => %1, %2 : !stream.resource<transient>{{%c16}}, !stream.resource<transient>{{%c16}}
{loops}
  util.return
}}
"""
_LOOP = """  %{r} = scf.for %arg5 = %c0 to %c4 step %c1 iter_args(%arg6 = %4#0) -> (!stream.resource<transient>) {{
    %6 = stream.cmd.execute with(%arg6 as %arg7: !stream.resource<transient>{{%c16}}, %4#1 as %arg8: !stream.resource<transient>{{%c16}}) {{
      stream.cmd.dispatch @ex::@step {{
        ro %arg8[%c0 for %c16] : !stream.resource<transient>{{%c16}},
        rw %arg7[%c0 for %c16] : !stream.resource<transient>{{%c16}}
      }}
    }} => !stream.timepoint
    %7 = stream.timepoint.await %6 => %arg6 : !stream.resource<transient>{{%c16}}
    scf.yield %7 : !stream.resource<transient>
  }}
"""
_READ = """  %9 = stream.cmd.execute with({values}) {{
    stream.cmd.dispatch @ex::@last {{
{reads}
    }}
  }} => !stream.timepoint
"""


def _host_dump(tmp_path, loops=("5",), extra=""):
    """A function that fills two slices, runs a loop per name in ``loops`` carrying slice 1 in place, then
    reads every loop's result; ``extra`` is put after the loops."""
    names = [f"%{r}" for r in loops]
    values = ", ".join(f"{n} as %arg{20 + i}: !stream.resource<transient>{{%c16}}" for i, n in enumerate(names))
    reads = ",\n".join(f"      ro %arg{20 + i}[%c0 for %c16] : !stream.resource<transient>{{%c16}}" for i in range(len(names)))
    body = "".join(_LOOP.format(r=r) for r in loops) + _READ.format(values=values, reads=reads) + extra
    pack = "  %0:3 = stream.resource.pack slices({\n    [0, 0] = %c16,\n    [0, 0] = %c16\n  }) : index"
    consts = "  %c64 = arith.constant 64 : index\n  %c128 = arith.constant 128 : index"
    text = (_HOST.format(when="Before", pack=pack, size="%0#0", first="%0#1", second="%0#2", loops=body)
            + _HOST.format(when="After", pack=consts, size="%c128", first="%c0", second="%c64", loops=body))
    path = tmp_path / "host.txt"
    path.write_text(text)
    return path


def test_a_loop_carrying_a_slice_in_place_makes_its_result_an_in_place_tensor_over_it(tmp_path):
    (name, plan), = read_iree_dump(_host_dump(tmp_path))
    assert name == "f" and check(plan).ok
    assert {t.name: (t.offset, t.alias_of) for t in plan.tensors} == {"slice 1": (0, None), "slice 2": (64, None),
                                                                      "%5": (0, "slice 1")}
    # steps: the two fills, the loop body's dispatch (one trip stands for all), the last read
    assert [(s.step, s.tensor, s.writes[0].lo, s.writes[0].hi) for s in plan.in_place] == [(2, "%5", 0, 16)]
    assert plan.consumers == {"slice 2": (2,), "%5": (2, 3)} and plan.regions == {"transient": 128}


def test_two_loops_carrying_one_slice_in_place_are_found(tmp_path):
    (_, plan), = read_iree_dump(_host_dump(tmp_path, loops=("5", "8")))
    report = check(plan)
    assert report.violated() == ("LAYOUT-READS-SEE-WRITES",)
    assert [v.culprit for v in report.violations] == ["tensor '%5'"]


@pytest.mark.parametrize("extra, op", [
    ("  util.call @g(%4#1) : (!stream.resource<transient>) -> ()\n", "util.call"),
    ("  %10 = scf.if %cond -> (!stream.resource<transient>) {\n    scf.yield %4#1 : !stream.resource<transient>\n"
     "  } else {\n    scf.yield %4#1 : !stream.resource<transient>\n  }\n", "scf.if"),
    ("  %11 = stream.cmd.execute with(%4#1 as %arg30: !stream.resource<transient>{%c16}) {\n"
     "    stream.cmd.collective<all_gather : f32>[%c4] channel(%ch) {\n      %arg30[%c0 for %c16]\n    }\n"
     "  } => !stream.timepoint\n", "stream.cmd.collective"),
])
def test_a_slice_taken_by_an_op_this_reader_does_not_follow_is_refused_naming_the_line(tmp_path, extra, op):
    path = _host_dump(tmp_path, extra=extra)
    with pytest.raises(IreeDumpError, match=rf"line \d+: function @f: .*{re.escape(op)}") as e:
        read_iree_dump(path)
    assert str(path) in str(e.value)


def test_a_subview_without_a_constant_offset_after_the_pass_is_refused(tmp_path):
    path = _host_dump(tmp_path)
    text = path.read_text()
    after = text.index("IR Dump After")
    path.write_text(text[:after] + text[after:].replace("%result[%c64]", "%result[%n]"))
    with pytest.raises(IreeDumpError, match="slice 2's subview has no constant offset"):
        read_iree_dump(path)


@pytest.mark.parametrize("edit, words", [
    (("scf.yield %7 :", "scf.yield %4#1 :"), "hands %4#1 .* out as %5 without having been given it in place"),
    (("rw %arg7[%c0 for %c16]", "rw %arg7[%c4 for %c16]"), r"writes bytes \[4, 20\) of '%5', a slice of 16 bytes"),
])
def test_a_loop_that_hands_out_a_slice_it_was_not_given_or_writes_past_one_is_refused(tmp_path, edit, words):
    path = _host_dump(tmp_path)
    path.write_text(path.read_text().replace(*edit))
    with pytest.raises(IreeDumpError, match=words):
        read_iree_dump(path)


@pytest.mark.parametrize("name", ["bidirectional-lstm", "emplace-unused-tied-result"])
def test_mangled_dumps_of_the_kept_bugs_are_refused_naming_the_file_never_crash(tmp_path, name):
    import random
    lines = (IREE / name / "layout.txt").read_text().splitlines()
    rng = random.Random(11)
    for k in range(40):
        mangled = list(lines)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(mangled))
            choice = rng.random()
            if choice < 0.3:
                del mangled[i]
            elif choice < 0.5:
                mangled[i] = mangled[i].replace("#1", "#9", 1)
            elif choice < 0.7:
                mangled.insert(i, mangled[rng.randrange(len(mangled))])
            else:
                mangled[i] = mangled[i][: rng.randrange(len(mangled[i]) + 1)]
        path = tmp_path / f"m{k}.txt"
        path.write_text("\n".join(mangled))
        try:
            read_iree_dump(path)
        except IreeDumpError as e:
            assert str(path) in str(e)


@pytest.mark.slow
def test_the_kept_bugs_remade_by_the_releases_given_show_the_same(tmp_path):
    """$ZCSPEC_IREE_PYTHONS: the Pythons of environments holding IREE releases (iree-base-compiler[onnx],
    iree-base-runtime, onnxruntime), separated by os.pathsep; each remakes the programs of its release."""
    import json
    import os
    from zcspec.checks.foreign.iree_programs import REPRODUCERS, write_programs
    pythons = [p for p in os.environ.get("ZCSPEC_IREE_PYTHONS", "").split(os.pathsep) if p]
    if not pythons:
        pytest.skip("set ZCSPEC_IREE_PYTHONS to the Pythons of environments with IREE 3.0, 3.1, 3.5 or 3.13")
    for python in pythons:
        write_programs(tmp_path, only=[r.name for r in REPRODUCERS], python=python)
    made = [r.name for r in REPRODUCERS if (tmp_path / r.name / "program.json").exists()]
    assert made
    for name in made:
        fresh, kept = (json.loads((root / name / "program.json").read_text()) for root in (tmp_path, IREE))
        assert (fresh["iree"], fresh["matches_reference"], fresh["expect"]) == \
            (kept["iree"], kept["matches_reference"], kept["expect"])
        violated = [sorted({i for _, p in read_iree_dump(root / name / "layout.txt") for i in check(p).violated()})
                    for root in (tmp_path, IREE)]
        assert violated[0] == violated[1] == ([] if kept["expect"] == "clean" else [kept["expect"]])
