"""Observables: JSON round trip (Hypothesis) and strict parsing with errors that name the culprit."""
from __future__ import annotations

import json

import pytest
from hypothesis import given

from zcspec.spec.errors import ObservationFormatError, SpecError
from zcspec.spec.observables.device import DeviceObservation
from zcspec.spec.observables.input_file import InputFileObservation
from zcspec.spec.observables import (
    OBSERVATION_KINDS, Event, ExecutionObservation, LoadObservation, ModelFileObservation, PlanObservation,
    dumps, from_data, loads, to_data,
)
from tests.helpers.spec_strategies import plans, values


@pytest.mark.parametrize("cls", [ExecutionObservation, LoadObservation, ModelFileObservation, Event, DeviceObservation,
                                 InputFileObservation])
def test_round_trip_every_kind(cls):
    @given(values(cls))
    def round_trip(obs):
        assert loads(cls, dumps(obs)) == obs

    round_trip()


@given(plans())
def test_plan_round_trip(plan):
    assert loads(PlanObservation, dumps(plan)) == plan
    assert from_data(PlanObservation, json.loads(json.dumps(to_data(plan)))) == plan


# The plan contract (docs/plan-format.md), verbatim keys only: no optional key is required.
CONTRACT = {
    "order": ["x", "conv", "relu", "out"],
    "tensors": [
        {"name": "x", "region": "zero_copy", "offset": 512, "size": 600, "aligned_size": 1024, "first": 0,
         "last": 1, "block": 1, "zero_copy": True, "alias_of": None},
        {"name": "c", "region": "feature_map", "offset": 0, "size": 600, "aligned_size": 1024, "first": 1,
         "last": 2, "block": 0, "zero_copy": False, "alias_of": None},
        {"name": "y", "region": "zero_copy", "offset": 0, "size": 600, "aligned_size": 1024, "first": 2,
         "last": 3, "block": 2, "zero_copy": True, "alias_of": None},
    ],
    "blocks": [
        {"id": 0, "region": "feature_map", "offset": 0, "size": 1024, "zero_copy": False, "tensors": ["c"]},
        {"id": 1, "region": "zero_copy", "offset": 1024, "size": 1024, "zero_copy": True, "tensors": ["x"]},
        {"id": 2, "region": "zero_copy", "offset": 0, "size": 1024, "zero_copy": True, "tensors": ["y"]},
    ],
    "regions": {"feature_map": 1024, "zero_copy": 2048, "weight": 0, "fixed": 0},
    "lower_bound": 1024,
    "naive": 1024,
}


def test_the_design_contract_parses_as_is():
    plan = from_data(PlanObservation, CONTRACT)
    assert plan.tensor["x"].zero_copy and plan.block[1].tensors == ("x",)
    assert plan.attributes is None and plan.graph_inputs == ()


@pytest.mark.parametrize("edit, path, words", [
    (lambda d: d["tensors"][1].update(offset="0"), "tensors[1].offset", "expected int"),
    (lambda d: d["tensors"][0].update(offest=3), "tensors[0]", "unknown key"),
    (lambda d: d["tensors"][2].pop("last"), "tensors[2]", "missing required key 'last'"),
    (lambda d: d["tensors"][0].update(region="hbm"), "", "region 'hbm', which is not a GE region"),
    (lambda d: d.update(arenas={"hbm": {"kind": "activations"}}), "", "is not a declared arena"),
    (lambda d: d.update(arenas={r: {"kind": "heap"} for r in d["regions"]}), "arenas", "expected one of"),
    (lambda d: d.update(arenas={r: {"kind": "scratch", "alignment": 0} for r in d["regions"]}), "arenas",
     "alignment=0"),
    (lambda d: d.update(writes={"x": [99]}), "", "outside the"),
    (lambda d: d["tensors"][0].update(last=99), "tensors[0]", "lives during steps"),
    (lambda d: d["tensors"][0].update(size=-1), "tensors[0].size", "negative"),
    (lambda d: d.update(consumers={"ghost": [0]}), "consumers.ghost", "'ghost'"),
    (lambda d: d["blocks"][0].update(tensors=["c", "ghost"]), "blocks[0].tensors", "'ghost', which is not planned"),
    (lambda d: d["tensors"][0].update(first=1, last=0), "", "inverted"),
    (lambda d: d.update(exclusive_groups=[{"name": "c", "branches": {"t": ["nope"]}}]), "", "'nope'"),
    (lambda d: d["tensors"][0].update(zero_copy=1), "tensors[0].zero_copy", "expected bool"),
    (lambda d: d["tensors"][0].update(first=True), "tensors[0].first", "expected int"),
    (lambda d: d.update(regions=[1]), "regions", "expected an object"),
    (lambda d: d["tensors"][0].update(alias_of="nope"), "", "'nope'"),
    (lambda d: d["tensors"].append(dict(d["tensors"][0])), "", "duplicate tensor 'x'"),
])
def test_malformed_plans_are_rejected_naming_the_culprit(edit, path, words):
    data = json.loads(json.dumps(CONTRACT))
    edit(data)
    with pytest.raises(SpecError) as e:
        from_data(PlanObservation, data)
    assert path in str(e.value) and words in str(e.value)


def test_loads_names_the_file():
    with pytest.raises(ObservationFormatError, match=r"^plan.json: not JSON"):
        loads(PlanObservation, "{", file="plan.json")
    with pytest.raises(ObservationFormatError, match=r"^plan.json: <root>: missing required key 'order'"):
        loads(PlanObservation, "{}", file="plan.json")


def test_every_kind_is_listed():
    assert set(OBSERVATION_KINDS) == {"plan", "model_file", "load", "execution", "device", "input_file", "api_call"}


def test_plan_from_contract_reads_zcspec_plans_keys_and_the_planners_attributes():
    from zcspec.spec.observables.plan_contract import plan_from_contract

    data = json.loads(json.dumps(CONTRACT))
    data.update(strategy="ge", options={"reuse": True})
    data["blocks"][0]["parent"] = None
    data["attributes"] = {"memory_size": 3072, "zero_copy_memory_size": 2048,
                          "inputs": [{"tensor": "x", "is_zero_copy_block": True, "index": 0, "node": "x",
                                      "region": "zero_copy", "basic_offset": 1024, "relative_offsets": [0]}],
                          "outputs": [{"tensor": "y", "is_zero_copy_block": True, "index": 0, "node": "out",
                                       "region": "zero_copy", "basic_offset": 2048, "relative_offsets": [0]}]}
    plan = plan_from_contract(data)
    assert plan.attributes.is_zero_copy_block == {"x": True}
    assert plan.graph_inputs == ("x",) and plan.graph_outputs == ("y",)
    data["tensors"][0]["offset"] = "0"  # the contract's own keys stay strict
    with pytest.raises(ObservationFormatError, match=r"tensors\[0\]\.offset"):
        plan_from_contract(data)
    data["tensors"][0]["offset"] = 0
    data["attributes"]["inputs"][0]["basic_ofset"] = 0  # and so do the planner's attributes
    with pytest.raises(ObservationFormatError, match=r"attributes\.inputs\[0\].*basic_ofset"):
        plan_from_contract(data)


def test_a_fixed_length_pair_is_read_by_position():
    """``tuple[str, int | str]`` (a collective's attribute): one item per position, each of its own type."""
    run = {"step": 0, "op_type": "HcomBroadcast", "ranks": 2, "dtype": "float32", "shape": [2], "out": [2],
           "attrs": [["reduction", "sum"], ["root", 1]]}
    data = {"name": "probe", "events": [], "memory": None, "collective_runs": [run]}
    assert from_data(DeviceObservation, data).collective_runs[0].attrs == (("reduction", "sum"), ("root", 1))
    run["attrs"] = [["root", 1, 2]]
    with pytest.raises(ObservationFormatError, match=r"collective_runs\[0\]\.attrs\[0\]: expected a list of 2, got 3"):
        from_data(DeviceObservation, data)
    run["attrs"] = [[1, 1]]
    with pytest.raises(ObservationFormatError, match=r"collective_runs\[0\]\.attrs\[0\]\[0\]: expected str"):
        from_data(DeviceObservation, data)
