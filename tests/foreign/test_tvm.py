"""TVM Relax's plan read from the printed module (checks/foreign/programs/tvm and small crafted texts)."""
from __future__ import annotations

import json
import os
import random
import sys
import textwrap

import attrs
import pytest

from zcspec.checks.cli.main import main
from zcspec.checks.foreign.programs import PROGRAMS, foreign_cases, problems
from zcspec.checks.foreign.tvm_relax import TvmRelaxError, read_relax
from zcspec.spec.check import check

TVM = PROGRAMS / "tvm"
HEAD = '# from tvm.script import relax as R\n\n@R.function\ndef main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):\n'


def _plans(name):
    return {p.path: p.plan for p in read_relax(TVM / name / "relax.txt")}


def _text(tmp_path, body: str, name="m.txt"):
    path = tmp_path / name
    path.write_text(HEAD + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n")
    return path


def _ids(plan) -> set[str]:
    return set(check(plan).violated())


def _edit(plan, name, **changes):
    return attrs.evolve(plan, tensors=tuple(attrs.evolve(t, **changes) if t.name == name else t for t in plan.tensors))


# -- the kept programs --------------------------------------------------------------------------

def test_every_kept_tvm_program_shows_what_its_program_json_says():
    cases = [c for c in foreign_cases() if c.planner == "tvm"]
    assert {c.name for c in cases} >= {"chain", "reshape-view", "branch", "match-cast-alias", "match-cast-alias-fixed",
                                       "reshape-chain-branches"}
    for case in cases:
        reports = [check(p.plan) for p in case.imported()]
        assert problems(case, reports) == [], case.name
        assert all({"LAYOUT-NO-OVERLAP", "LAYOUT-ARENA-ALLOCATED", "LAYOUT-LIFETIME-COVERS-WRITES"}
                   <= set(r.applied) for r in reports)


def test_match_cast_is_an_alias_whose_storage_the_buggy_release_hands_on():
    """apache/tvm#20190: TVM 0.26.0 puts `right` (alloc1) in the storage of `src` (alloc) while match_cast's
    `left`, an alias of alloc, is still read by the last add."""
    (plan,) = _plans("match-cast-alias").values()
    left, src, right = plan.tensor["left"], plan.tensor["alloc"], plan.tensor["alloc1"]
    assert left.alias_of == "alloc" and (left.region, left.offset) == (src.region, src.offset) == (right.region, 0)
    assert src.last < right.first <= left.last     # the root alone dies in time; its alias does not
    found = [v for v in check(plan).violations if v.invariant_id == "LAYOUT-NO-OVERLAP"]
    assert [v.culprit for v in found] == ["tensor 'alloc' and tensor 'alloc1'"]
    meta = json.loads((TVM / "match-cast-alias" / "program.json").read_text())
    assert meta["tvm"] == "0.26.0" and meta["matches_reference"] is False


def test_the_fixed_release_keeps_the_alias_storage_apart():
    (plan,) = _plans("match-cast-alias-fixed").values()
    assert check(plan).ok and plan.tensor["alloc"].region != plan.tensor["alloc1"].region
    assert json.loads((TVM / "match-cast-alias-fixed" / "program.json").read_text())["tvm"] == "0.27.0.post1"


def test_the_else_path_places_a_tensor_in_a_storage_only_the_then_branch_allocates():
    """apache/tvm#20191: one plan per path; the false path's alloc2 is in `storage`, allocated at no step of it."""
    plans = _plans("reshape-chain-branches")
    true, false = plans["if at line 6: true"], plans["if at line 6: false"]
    assert check(true).ok and true.arena_allocations["storage"] == (1,)
    assert false.arena_allocations["storage"] == () and false.tensor["alloc2"].region == "storage"
    assert _ids(false) == {"LAYOUT-ARENA-ALLOCATED"}
    runs = json.loads((TVM / "reshape-chain-branches" / "program.json").read_text())["runs"]
    assert runs["cond=True"] == 0.0 and runs["cond=False"].startswith("crashed")


def test_a_reshape_view_is_an_alias_read_after_its_root_dies_alone():
    (plan,) = _plans("reshape-view").values()
    v = plan.tensor["v"]
    assert v.alias_of == "alloc" and v.last > plan.tensor["alloc"].last and check(plan).ok


def test_faults_planted_in_a_kept_plan_are_caught_each_by_its_claim():
    """The clean branch program's true path: move a tensor into a live neighbour's storage (NO-OVERLAP), drop a
    storage's allocation from the path (ARENA-ALLOCATED), start a life after its write (COVERS-WRITES), end it
    before a read (COVERS-USES), misalign an owner (ARENA-ALIGN)."""
    plan = _plans("branch")["if at line 14: true"]
    assert check(plan).ok
    a, b = plan.tensor["alloc"], plan.tensor["alloc1"]
    assert a.first <= b.first <= a.last and a.region != b.region
    assert "LAYOUT-NO-OVERLAP" in _ids(_edit(plan, "alloc1", region=a.region))
    dropped = attrs.evolve(plan, arena_allocations={**plan.arena_allocations, "storage2": ()})
    assert _ids(dropped) == {"LAYOUT-ARENA-ALLOCATED"}
    assert "LAYOUT-LIFETIME-COVERS-WRITES" in _ids(_edit(plan, "alloc1", first=b.first + 2))
    assert "LAYOUT-LIFETIME-COVERS-USES" in _ids(_edit(plan, "alloc1", last=max(plan.consumers["alloc1"]) - 1))
    (aligned,) = read_relax(TVM / "branch" / "relax.txt", alignment=64)[:1]
    assert "LAYOUT-ARENA-ALIGN" in _ids(_edit(aligned.plan, "alloc", offset=16))


# -- what the reader makes of each form -----------------------------------------------------------

def test_kills_end_lifetimes_and_kill_storage_ends_none(tmp_path):
    path = _text(tmp_path, """
        storage: R.Object = R.memory.alloc_storage(R.shape([16]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        a: R.Tensor((4,), dtype="float32") = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([4]), R.dtype("float32"), R.prim_value(0))
        R.memory.kill_storage(storage)
        cls.f(x, a)
        R.memory.kill_tensor(a)
        o: R.Tensor((4,), dtype="float32") = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        cls.g(a, o)
        return o
    """)
    (p,) = read_relax(path)
    plan = p.plan
    assert (plan.tensor["a"].first, plan.tensor["a"].last) == (1, 4)     # to its kill, past the kill_storage
    assert plan.writes["a"] == (3,) and plan.consumers["a"] == (6,)
    assert _ids(plan) == {"LAYOUT-LIFETIME-COVERS-USES"}                  # read after the kill
    assert plan.arenas["o"].kind == "user_io" and plan.graph_outputs == ("o",)


def test_renames_tuples_and_items_name_the_same_tensor(tmp_path):
    path = _text(tmp_path, """
        storage: R.Any = R.memory.alloc_storage(R.shape([32]), 0, R.str("global"), R.dtype("float32"))
        a: R.Tensor((4,), dtype="float32") = R.memory.alloc_tensor(storage, 0, R.shape([4]), R.dtype("float32"), 0)
        b: R.Tensor((4,), dtype="float32") = R.memory.alloc_tensor(storage, 16, R.shape([4]), R.dtype("float32"), 0)
        f(x, a, b)
        t: R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")) = (a, b)
        c: R.Tensor((4,), dtype="float32") = t[1]
        d = c
        g(d)
        return x
    """)
    plan = read_relax(path)[0].plan
    assert plan.writes == {"a": (3,), "b": (3,)} and plan.consumers == {"b": (7,)}
    assert (plan.tensor["b"].offset, plan.tensor["b"].last) == (16, 7) and check(plan).ok


def test_the_whole_module_form_skips_tir_and_names_kernels_through_cls(tmp_path):
    text = """# from tvm.script import ir as I
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def f(x: T.Buffer((T.int64(4),), "float32"), y: T.Buffer((T.int64(4),), "float32")):
        for i in range(4):
            with T.block("f"):
                y[i] = x[i] + T.float32(1)

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        y: R.Tensor((4,), dtype="float32") = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        cls.f(x, y)
        return y
"""
    (tmp_path / "m.txt").write_text(text)
    (p,) = read_relax(tmp_path / "m.txt")
    assert p.plan.order == ("13:y = builtin.alloc_tensor", "14:cls.f", "15:return")
    assert p.plan.writes == {"y": (1,)} and check(p.plan).ok


# -- bad input ------------------------------------------------------------------------------------

BAD = {
    "unclosed bracket": ('a = f(x,\n', "line 5: a bracket opened here is not closed"),
    "stray bracket": ('f(x))\n', "line 5: ')' closes a bracket"),
    "unterminated string": ('a = R.str("oops)\n', "line 5: a string runs past"),
    "symbolic shape": ('a: R.Tensor = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), 0, R.str("global"))\n',
                       "line 5: the shape has dimension 'n', not a constant"),
    "unknown dtype": ('a: R.Tensor = R.builtin.alloc_tensor(R.shape([4]), R.dtype("posit16"), 0, R.str("global"))\n',
                      "line 5: dtype"),
    "symbolic storage": ('s: R.Any = R.memory.alloc_storage(R.shape([n]), 0, R.str("global"), R.dtype("float32"))\n',
                         "line 5: the size of storage has dimension 'n'"),
    "call_tir": ('a = R.call_tir(cls.f, (x,), out_sinfo=R.Tensor((4,), "float32"))\n', "line 5: R.call_tir is not lowered"),
    "vm allocation": ('s = R.vm.alloc_storage(R.shape([16]), 0, R.dtype("uint8"))\n', "line 5: R.vm.alloc_storage"),
    "a loop": ('for i in range(3):\n    f(x)\n', "line 5: 'for' is not straight-line Relax"),
    "elif": ('if c:\n    f(x)\nelif d:\n    f(x)\n', "line 7: 'elif'"),
    "rebinding": ('a: R.Tensor = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), 0, R.str("global"))\n'
                  'a: R.Tensor = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), 0, R.str("global"))\n',
                  "line 6: 'a' is bound again (first at line 5)"),
    "tuple target": ('a, b = f(x)\n', "line 5: binds 'a, b'"),
    "huge tensor": ('a: R.Tensor = R.builtin.alloc_tensor(R.shape([4294967296, 4294967296]), R.dtype("float32"), 0, '
                    'R.str("global"))\n', "line 5: R.shape"),
    "tab": ('\tf(x)\n', "indented with a tab"),
}


@pytest.mark.parametrize("what", sorted(BAD))
def test_malformed_text_is_refused_naming_the_file_and_line(tmp_path, what):
    body, words = BAD[what]
    path = tmp_path / "bad.txt"
    path.write_text(HEAD + textwrap.indent(body, "    ") + "    return x\n")
    with pytest.raises(TvmRelaxError) as e:
        read_relax(path)
    assert str(path) in str(e.value) and words in str(e.value)


def test_files_without_a_plan_and_unknown_functions_are_refused(tmp_path, capsys):
    (tmp_path / "empty.txt").write_text("nothing printed here\n")
    with pytest.raises(TvmRelaxError, match="holds no Relax function"):
        read_relax(tmp_path / "empty.txt")
    path = _text(tmp_path, "return x", name="bare.txt")
    with pytest.raises(TvmRelaxError, match="has no Relax function that allocates memory"):
        read_relax(path)
    with pytest.raises(TvmRelaxError, match="has no Relax function 'nope'"):
        read_relax(TVM / "chain" / "relax.txt", function="nope")
    assert main(["import", "tvm", str(tmp_path / "empty.txt")]) == 2
    assert "empty.txt" in capsys.readouterr().err


def test_too_many_paths_and_too_deep_nesting_are_refused(tmp_path):
    alloc = 'a{k}: R.Tensor = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), 0, R.str("global"))'
    ifs = "".join(f"if c:\n    {alloc.format(k=k)}\nelse:\n    f(x)\n" for k in range(12))
    with pytest.raises(TvmRelaxError, match="more than 1024 execution paths"):
        read_relax(_text(tmp_path, ifs + "return x", name="paths.txt"))
    deep = "".join(" " * (4 * k) + "if c:\n" for k in range(70)) + " " * 280 + "f(x)\n"
    with pytest.raises(TvmRelaxError, match="nest more than 64 deep"):
        read_relax(_text(tmp_path, deep + "return x", name="deep.txt"))


def test_mangled_kept_texts_are_read_or_refused_naming_the_file_never_crash(tmp_path):
    sources = [(TVM / n / "relax.txt").read_text().splitlines() for n in ("branch", "match-cast-alias")]
    rng = random.Random(7)
    for k in range(200):
        lines = list(rng.choice(sources))
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(lines))
            choice = rng.random()
            if choice < 0.3:
                del lines[i]
            elif choice < 0.6:
                lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
            elif choice < 0.8:
                lines.insert(i, lines[rng.randrange(len(lines))])
            else:
                lines[i] = lines[i].replace(rng.choice(["0", "(", ",", "alloc", "storage", "    "]),
                                            rng.choice(["", "9", "((", "x", "\t"]), 1)
        path = tmp_path / f"m{k}.txt"
        path.write_text("\n".join(lines))
        try:
            for p in read_relax(path):
                check(p.plan)
        except TvmRelaxError as e:
            assert str(path) in str(e)


# -- the command line and remaking --------------------------------------------------------------

def test_import_on_the_command_line(tmp_path, capsys):
    assert main(["import", "tvm", str(TVM / "match-cast-alias" / "relax.txt"), "--check"]) == 1
    out = capsys.readouterr().out
    assert "tvm match-cast-alias:" in out and "LAYOUT-NO-OVERLAP: tensor 'alloc' and tensor 'alloc1'" in out
    assert main(["import", "tvm", str(TVM / "reshape-chain-branches" / "relax.txt"), "--check"]) == 1
    assert "tvm reshape-chain-branches [if at line 6: false]" in capsys.readouterr().out
    assert main(["import", "tvm", str(TVM / "chain" / "relax.txt"), "--module", "main",
                 "-o", str(tmp_path / "p.json")]) == 0
    assert main(["check", str(tmp_path / "p.json")]) == 0
    assert main(["import", "tvm", str(TVM / "chain" / "relax.txt"), "--module", "nope"]) == 2


def _tvm_python() -> str | None:
    python = os.environ.get("ZCSPEC_TVM_PYTHON")
    if python:
        return python
    try:
        import tvm  # noqa: F401
    except ImportError:
        return None
    return sys.executable


def test_freshly_made_programs_read_as_the_kept_ones(tmp_path):
    python = _tvm_python()
    if python is None:
        pytest.skip("no TVM: set ZCSPEC_TVM_PYTHON to a Python with apache-tvm 0.27.0.post1")
    from zcspec.checks.foreign.tvm_programs import write_programs
    lines = write_programs([python], tmp_path / "tvm", only=("chain", "reshape-chain-branches"))
    assert not any("skipped" in line for line in lines), lines
    for name in ("chain", "reshape-chain-branches"):
        fresh = {p.path: p.plan for p in read_relax(tmp_path / "tvm" / name / "relax.txt")}
        assert fresh == _plans(name)
