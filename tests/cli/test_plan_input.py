"""A user's plan files of every malformed kind are refused naming the file and JSON path (exit 2),
buggy plans exit 1 naming tensors, steps and bytes, clean plans exit 0, and the command line, the
Python API and ``zcspec.spec.observables.loads`` agree on every case (one reader)."""
from __future__ import annotations

import copy
import json

import pytest

import zcspec
from zcspec.checks.cli.main import main
from zcspec.impl.platform.errors import BadInput
from zcspec.spec.errors import SpecError
from zcspec.spec.observables import PlanObservation, loads

from tests.helpers.user_plans import CLEAN


def _edit(fn):
    plan = copy.deepcopy(CLEAN)
    fn(plan)
    return plan


def _set(path, value):
    def fn(plan):
        *head, last = path
        target = plan
        for key in head:
            target = target[key]
        target[last] = value
    return fn


def _rename(path, old, new):
    def fn(plan):
        target = plan
        for key in path:
            target = target[key]
        target[new] = target.pop(old)
    return fn


# (case, the edit, what the message must name)
MALFORMED = [
    ("unknown top-level key", _rename((), "consumers", "consumer"), "consumer"),
    ("misspelled tensor key", _rename(("tensors", 0), "alias_of", "alais_of"), "tensors[0]"),
    ("missing required key", lambda p: p["tensors"][1].pop("size"), "tensors[1]"),
    ("missing top-level key", lambda p: p.pop("regions"), "regions"),
    ("wrong type", _set(("tensors", 0, "offset"), "0"), "tensors[0].offset"),
    ("bool for an int", _set(("tensors", 0, "size"), True), "tensors[0].size"),
    ("negative size", _set(("tensors", 0, "size"), -64), "tensors[0].size"),
    ("negative offset", _set(("tensors", 2, "offset"), -16), "tensors[2].offset"),
    ("negative region", _set(("regions", "act"), -5), "regions.act"),
    ("overflowing size", _set(("tensors", 0, "size"), 2**64), "tensors[0].size"),
    ("end overflows", _set(("tensors", 0, "offset"), 2**63 - 8), "tensors[0]"),
    ("lifetime past the order", _set(("tensors", 1, "last"), 7), "tensors[1]"),
    ("inverted lifetime", _set(("tensors", 0, "first"), 2), "tensors[0]"),
    ("read outside the order", _set(("consumers", "x"), [3]), "consumers.x"),
    ("consumers names no tensor", _set(("consumers", "ghost"), [1]), "consumers.ghost"),
    ("writes names no tensor", _set(("writes", "ghost"), [1]), "writes.ghost"),
    ("alias to nothing", _set(("tensors", 1, "alias_of"), "ghost"), "ghost"),
    ("unknown arena", _set(("tensors", 1, "region"), "weights"), "weights"),
    ("unknown arena kind", _set(("arenas", "act", "kind"), "activation"), "arenas.act.kind"),
    ("a newer version", _set(("version",), 2), "version"),
    ("zero arena alignment", _set(("arenas", "act", "alignment"), 0), "alignment"),
    ("zero tensor granularity", _set(("alignment",), {"tensor": 0}), "alignment.tensor"),
    ("negative block granularity", _set(("alignment",), {"block": {"act": -512}}), "alignment.block.act"),
    ("a step named twice", _set(("order", 2), "load"), "order[2]"),
    ("another format", _set(("format",), "zcspec-counterexample"), "format"),
]


def _write(tmp_path, data, name="plan.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("case, edit, named", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_plan_is_bad_input_naming_the_file_and_path(case, edit, named, tmp_path, capsys):
    path = _write(tmp_path, _edit(edit))
    assert main(["check", path]) == 2
    err = capsys.readouterr().err
    assert path in err and named in err, err
    with pytest.raises((SpecError, BadInput), match=named.replace("[", r"\[").replace("]", r"\]")):
        zcspec.check_plan(_edit(edit))          # the Python API refuses the same
    with pytest.raises(SpecError):
        loads(PlanObservation, json.dumps(_edit(edit)))   # and so does the spec's own loads


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "", "\"plan\""])
def test_a_file_that_is_not_a_plan_object_is_bad_input(text, tmp_path, capsys):
    path = _write(tmp_path, text)
    assert main(["check", path]) == 2
    assert path in capsys.readouterr().err


def test_a_missing_file_is_bad_input(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope.json")]) == 2
    assert "nope.json" in capsys.readouterr().err


def test_a_clean_plan_exits_0_and_every_reader_accepts_the_provenance_keys(tmp_path, capsys):
    plan = dict(CLEAN, planner="mine", source="model.bin", program="main")
    assert main(["check", _write(tmp_path, plan)]) == 0
    assert "0 violation(s)" in capsys.readouterr().out
    assert loads(PlanObservation, json.dumps(plan)) == zcspec.read_plan(plan)[0]


def test_a_buggy_plan_exits_1_naming_tensors_steps_and_bytes(tmp_path, capsys):
    # z is written at step 1 (its life starts at its first read): it clobbers x, still read at step 1.
    buggy = _edit(_set(("writes", "z"), [1]))
    buggy["tensors"][2]["first"] = 1
    assert main(["check", _write(tmp_path, buggy)]) == 1
    out = capsys.readouterr().out
    assert "LAYOUT-NO-OVERLAP: tensor 'x' and tensor 'z': both live during steps 1..1 and share bytes [0, 64)" in out


def test_facts_the_plan_lacks_are_reported_not_judged_never_exercised():
    bare = _edit(lambda p: (p.pop("consumers"), p.pop("writes")))
    report = zcspec.check_plan(bare, compact=False)
    assert report.not_judged == {"LAYOUT-LIFETIME-COVERS-USES": "the plan gives no consumers",
                                 "LAYOUT-LIFETIME-COVERS-WRITES": "the plan gives no writes or producers",
                                 "LAYOUT-READS-SEE-WRITES": "the plan gives no writes or producers"}
    assert not set(report.not_judged) & set(report.exercised)
    assert "not judged: LAYOUT-LIFETIME-COVERS-USES: the plan gives no consumers" in str(report)
    full = zcspec.check_plan(CLEAN, compact=False)
    assert full.not_judged == {} and "LAYOUT-LIFETIME-COVERS-USES" in full.exercised


def test_a_graph_input_whose_life_starts_at_its_first_read_is_caught():
    """The caller's data is in a graph input's bytes before step 0: a planner that starts its life at the first
    read gives those bytes to an earlier step's output, and no overlap check alone sees it."""
    def tensor(name, first, last):
        return {"name": name, "region": "act", "offset": 0, "size": 64, "aligned_size": 64, "first": first,
                "last": last, "block": None, "zero_copy": False, "alias_of": None}
    plan = {"order": ["scratch", "use_input"], "arenas": {"act": {"kind": "activations", "alignment": 1}},
            "regions": {"act": 64}, "tensors": [tensor("tmp", 0, 0), tensor("x", 1, 1)],
            "graph_inputs": ["x"], "consumers": {"tmp": [0], "x": [1]}, "writes": {"tmp": [0]}}
    report = zcspec.check_plan(plan, compact=False)
    assert [v.invariant_id for v in report.violations] == ["LAYOUT-LIFETIME-COVERS-USES"]
    assert "graph input" in report.violations[0].message and "from step 1" in report.violations[0].message
    plan["tensors"][1]["first"] = 0     # the right life: now the two overlap, and that is what is reported
    assert [v.invariant_id for v in zcspec.check_plan(plan, compact=False).violations][0] == "LAYOUT-NO-OVERLAP"
