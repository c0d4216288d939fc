"""``CompileOptions(feature_base_refreshable=True)``: GE's ``ge.featureBaseRefreshable=1`` read at build time.

GE's memory-layout conflict optimizer counts an HCCL op without address refresh as refreshable when the
feature map is (mem_layout_conflict_util.cc ``IsAddressRefreshable``), so user memory meeting such an op gets
no Identity. The model file records the option, the loader reads it back (a file written before the option
existed loads as built without it), and the observer transcribes it from the file into the build facts, so
PASS-MEMCPY-ADDR-ASYNC and PASS-LAYOUT-CONFLICT judge real files built both ways.
"""
from __future__ import annotations

import importlib
import json

import attrs
import pytest

from zcspec.checks.cli.main import main
from zcspec.checks.scenario import Scenario
from zcspec.impl.compiler import graph_json
from zcspec.impl.compiler.artefact_json import to_json
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.model_file.encode import HEADER, encode, metadata, pack
from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.compiler.observe import observe_model_file
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import run_passes
from zcspec.spec.check import check
from tests.helpers.pass_graphs import copies, io_graph

# the module (the package re-exports the pass function under the module's name)
conflict_module = importlib.import_module("zcspec.impl.compiler.passes.mem_layout_conflict")
PASS, CONFLICT = "PASS-MEMCPY-ADDR-ASYNC", "PASS-LAYOUT-CONFLICT"
# legacy cannot refresh HCCL tasks: without the option, the Data h feeding the collective and the collective's
# output get a copy each; the loop kernel's copies are the SoC's loop rule, which the option leaves alone.
WITHOUT = {("out", "const"), ("in", "h"), ("out", "allreduce:0"), ("in", "l"), ("out", "loop_relu:0")}
WITH = {("out", "const"), ("in", "l"), ("out", "loop_relu:0")}


@pytest.mark.parametrize("refreshable, expected", [(False, WITHOUT), (True, WITH)])
def test_the_conflict_optimizer_spares_hccl_ops_only_for_a_refreshable_feature_base(refreshable, expected):
    out = run_passes(io_graph(), CompileOptions(soc="legacy", feature_base_refreshable=refreshable))
    assert copies(out) == expected


@pytest.mark.parametrize("soc", ["ascend910b", "ascend310p", "nozc"])
def test_socs_that_refresh_hccl_or_have_no_zero_copy_build_the_same_graph(soc):
    g = io_graph()
    assert run_passes(g, CompileOptions(soc=soc, feature_base_refreshable=True)) == \
        run_passes(g, CompileOptions(soc=soc))


def test_an_hccl_op_in_a_loop_keeps_its_copy():
    """The option makes HCCL a refreshable kind, not a task in a loop (legacy refreshes none of those)."""
    b = GraphBuilder("loop_hccl")
    h = b.input("h", (2, 2))
    b.output(b.op("Relu", [b.op("HcomAllReduce", [h], name="allreduce", reduction="sum", _in_loop=True)]))
    out = run_passes(b.build(), CompileOptions(soc="legacy", feature_base_refreshable=True))
    assert copies(out) == {("in", "h")}


def _built(refreshable: bool, soc: str = "legacy"):
    opts = CompileOptions(soc=soc, feature_base_refreshable=refreshable)
    st = compile_stages(io_graph(), opts)
    return st, encode(st.model)


@pytest.mark.parametrize("refreshable", [False, True])
def test_the_file_records_the_option_and_the_observer_reads_it_from_the_file(refreshable):
    st, data = _built(refreshable)
    meta = json.loads(data[HEADER.size:HEADER.size + HEADER.unpack_from(data)[3]])
    assert meta["options"]["feature_base_refreshable"] is refreshable
    assert load_model(data).options.feature_base_refreshable is refreshable
    # no options handed to the observer: the build fact is the file's
    assert observe_model_file(data).build.feature_base_refreshable is refreshable
    # options handed in stand in only for a file that does not load
    assert observe_model_file(data, options=CompileOptions(soc="legacy", feature_base_refreshable=not refreshable)
                              ).build.feature_base_refreshable is refreshable


def _repacked(model, change):
    meta, blob = metadata(model)
    change(meta["options"])
    return pack(meta, blob)


def test_a_file_written_before_the_option_existed_loads_as_built_without_it():
    st, _ = _built(False)
    old = _repacked(st.model, lambda o: o.pop("feature_base_refreshable"))
    assert load_model(old) == st.model
    assert observe_model_file(old).build.feature_base_refreshable is False


def test_a_malformed_value_is_refused_naming_the_field():
    st, _ = _built(True)
    bad = _repacked(st.model, lambda o: o.update(feature_base_refreshable="yes"))
    with pytest.raises(ModelFormatError, match="options.feature_base_refreshable"):
        load_model(bad)


def test_a_scenario_written_before_the_option_existed_reads_as_built_without_it():
    s = Scenario("model_file", io_graph(), CompileOptions(soc="legacy"))
    d = s.to_dict()
    del d["compile"]["feature_base_refreshable"]
    assert Scenario.from_dict(d) == s
    on = Scenario("model_file", io_graph(), CompileOptions(soc="legacy", feature_base_refreshable=True))
    assert Scenario.from_dict(json.loads(json.dumps(on.to_dict()))) == on
    assert to_json(on.compile)["feature_base_refreshable"] is True


@pytest.mark.parametrize("refreshable", [False, True])
def test_real_files_built_both_ways_hold_and_exercise_both_claims(refreshable):
    st, data = _built(refreshable)
    mf = observe_model_file(data, st.graph)
    report = check(mf)
    assert report.ok, str(report)
    assert mf.build.feature_base_refreshable is refreshable
    assert {PASS, CONFLICT} <= set(report.exercised)


def test_an_observer_that_drops_the_fact_sees_the_spared_hccl_copies_missing():
    """The fact decides the claim: the file built for a refreshable feature base, read as if it were not,
    misses the copies a legacy HCCL op would need."""
    st, data = _built(True)
    mf = observe_model_file(data, st.graph)
    report = check(attrs.evolve(mf, build=attrs.evolve(mf.build, feature_base_refreshable=False)))
    assert set(report.violated()) == {CONFLICT}
    assert {v.culprit for v in report.violations} == {"edge 'h' -> 'allreduce'", "edge 'allreduce' -> 'NetOutput'"}


def test_a_pass_that_spares_hccl_ops_without_the_option_fails_the_claim(monkeypatch):
    """Planted: the optimizer treating every build as one for a refreshable feature base."""
    monkeypatch.setattr(conflict_module, "refresh_profile",
                        lambda options: attrs.evolve(options.profile,
                                                     refreshable_tasks=options.profile.refreshable_tasks | {"hccl"}))
    st, data = _built(False)
    report = check(observe_model_file(data, st.graph))
    assert set(report.violated()) == {CONFLICT}, str(report)


@pytest.mark.parametrize("flag", [False, True])
def test_zcspec_compile_takes_the_option(tmp_path, capsys, flag):
    graph = tmp_path / "io.json"
    graph.write_text(graph_json.to_json(io_graph()), encoding="utf-8")
    out = tmp_path / "io.zcm"
    argv = ["compile", str(graph), "-o", str(out), "--soc", "legacy"] + (["--feature-base-refreshable"] if flag else [])
    assert main(argv) == 0, capsys.readouterr().err
    assert observe_model_file(out.read_bytes()).build.feature_base_refreshable is flag


def test_the_planner_keeps_a_collectives_io_out_of_zero_copy_even_so():
    """docs/ge-deviations.md P17: GE's IsNodeAndPeerNodeTaskSupportZeroCopy would make the Data feeding the
    collective, and the collective's output, zero copy in such a build; zcspec's planner does not read the
    option (MEM-ZC-IO judges a plan, which carries no build facts), so the runtime copies them."""
    st, _ = _built(True)
    zero_copy = {t.name: t.zero_copy for t in st.plan.tensors}
    assert (zero_copy["h"], zero_copy["allreduce:0"]) == (False, False)
    assert st.plan.options == CompileOptions(soc="legacy").plan_options()
