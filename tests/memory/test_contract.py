"""The MemoryPlan JSON contract (docs/plan-format.md) and ``zcspec plan``."""
from __future__ import annotations

import json

import pytest
from hypothesis import given

from zcspec.checks.cli.main import main
from zcspec.checks.strategies.planning_graphs import planning_graphs
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.graph_json import to_json
from zcspec.impl.compiler.passes.mem_layout_conflict import mem_layout_conflict
from zcspec.impl.compiler.errors import ArtefactFormatError, OptionError
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import MemoryPlan, plan_memory
from tests.helpers.plan_check import plan_or_reject

TENSOR_KEYS = ["name", "region", "offset", "size", "aligned_size", "first", "last", "block", "zero_copy", "alias_of",
               "batch"]


def _graph():
    b = GraphBuilder("small")
    x = b.input("x", (1, 100))
    a = b.op("Relu", [x], name="a", _workspace_bytes=(64,))
    r = b.op("Reshape", [a], name="r", shape=(100,))
    b.output(b.op("Abs", [r], name="o"))
    return b.build()


def test_contract_has_the_contract_keys_in_order():
    d = plan_memory(_graph()).to_json()
    assert list(d)[:6] == ["order", "tensors", "blocks", "regions", "lower_bound", "naive"]
    assert d["order"] == ["x", "a", "r", "o", "NetOutput"]
    assert all(list(t) == TENSOR_KEYS for t in d["tensors"])
    assert all(list(b)[:6] == ["id", "region", "offset", "size", "zero_copy", "tensors"] for b in d["blocks"])
    names = [t["name"] for t in d["tensors"]]
    assert names == ["x", "a:0", "a#ws0", "r:0", "o:0"]
    r = d["tensors"][3]
    assert (r["alias_of"], r["offset"]) == ("a:0", d["tensors"][1]["offset"])
    assert set(d["regions"]) == {"feature_map", "zero_copy", "weight", "fixed"}
    json.dumps(d)  # plain JSON


@given(planning_graphs(max_nodes=8))
def test_round_trip(graph):
    graph = mem_layout_conflict(graph)
    for strategy in ("ge", "compact"):
        plan = plan_or_reject(graph, PlanOptions(strategy=strategy))
        d = json.loads(json.dumps(plan.to_json()))
        assert MemoryPlan.from_json(d) == plan
        assert MemoryPlan.from_json(d).to_json() == d


def test_from_json_names_the_broken_field():
    d = plan_memory(_graph()).to_json()
    d["tensors"][1]["offset"] = "zero"
    with pytest.raises(ArtefactFormatError, match=r"plan\.tensors\[1\]\.offset: expected int"):
        MemoryPlan.from_json(d)
    good = plan_memory(_graph()).to_json()
    with pytest.raises(ArtefactFormatError, match="missing key\\(s\\) 'blocks'"):
        MemoryPlan.from_json({k: v for k, v in good.items() if k != "blocks"})


@pytest.mark.parametrize("where, key", [("plan", "attributes"), ("tensor", "batch"), ("tensor", "alias_of"),
                                        ("block", "parent"), ("options", "size_align"), ("io", "relative_offsets")])
def test_a_missing_key_is_an_error_never_a_default(where, key):
    d = plan_memory(_graph()).to_json()
    holder = {"plan": d, "tensor": d["tensors"][0], "block": d["blocks"][0], "options": d["options"],
              "io": d["attributes"]["inputs"][0]}[where]
    del holder[key]
    with pytest.raises(ArtefactFormatError, match=f"missing key\\(s\\) '{key}'"):
        MemoryPlan.from_json(d)


def test_an_unknown_key_is_an_error_and_a_bool_is_not_an_int():
    d = plan_memory(_graph()).to_json()
    d["tensors"][0]["colour"] = "red"
    with pytest.raises(ArtefactFormatError, match=r"plan\.tensors\[0\]: unknown key\(s\) 'colour'"):
        MemoryPlan.from_json(d)
    d = plan_memory(_graph()).to_json()
    d["lower_bound"] = True
    with pytest.raises(ArtefactFormatError, match=r"plan\.lower_bound: expected int, got bool"):
        MemoryPlan.from_json(d)


def test_bad_options_are_named():
    with pytest.raises(OptionError, match="strategy='best'"):
        PlanOptions(strategy="best")
    with pytest.raises(OptionError, match="block_align=0"):
        PlanOptions(block_align=0)


def _model_file(tmp_path):
    path = tmp_path / "small.json"
    path.write_text(to_json(_graph()))
    return str(path)


def test_cli_table_and_json(tmp_path, capsys):
    path = _model_file(tmp_path)
    assert main(["plan", path]) == 0
    out = capsys.readouterr().out
    assert "r:0 -> a:0" in out and "lower bound" in out
    assert main(["plan", path, "--json", "--strategy", "compact"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["strategy"] == "compact" and d["regions"]["feature_map"] >= d["lower_bound"]
    assert main(["plan", path, "--json", "--no-reuse"]) == 0
    assert json.loads(capsys.readouterr().out)["options"]["reuse"] is False


def test_cli_usage_errors_exit_2(tmp_path, capsys):
    path = _model_file(tmp_path)
    assert main(["plan", path, "--buffers", "x.csv"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["plan"]) == 2
    assert "needs MODEL" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["plan", str(bad)]) == 2


def test_cli_buffers_is_dispatched(tmp_path, capsys):
    csv = tmp_path / "b.csv"
    csv.write_text("id,lower,upper,size\na,0,2,32\nb,1,3,64\nc,2,4,32\n")
    assert main(["plan", "--buffers", str(csv), "--json", "--strategy", "compact"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["arena"] == 96 and set(d["offsets"]) == {"a", "b", "c"}
    assert main(["plan", "--buffers", str(csv), "--no-reuse"]) == 2


def test_cli_picture(tmp_path, capsys):
    path, svg = _model_file(tmp_path), tmp_path / "plan.svg"
    assert main(["plan", path, "--picture", str(svg)]) == 0
    assert svg.read_text().lstrip().startswith("<")


def test_roots_agree_with_root_and_stop_at_a_crafted_cycle():
    import attrs as _attrs

    plan = plan_memory(_graph())
    assert plan.roots() == {t.name: plan.root(t.name) for t in plan.tensors}
    a, b = plan.tensors[1], plan.tensors[3]           # a:0 and its alias r:0
    crafted = _attrs.evolve(plan, tensors=[_attrs.evolve(a, alias_of=b.name) if t is a else t for t in plan.tensors])
    roots = crafted.roots()                           # a:0 -> r:0 -> a:0: a cycle, followed once
    assert roots["a:0"] == crafted.root("a:0") and roots["r:0"] == crafted.root("r:0")
