"""LAYOUT-IO-ATTRIBUTES judges the attributes the runtime reads against where the tensors sit and against
which graph I/O GE's rules make zero copy (the spec's own decision from the graph), not against the plan's
flags: a planner that keeps a graph input out of the I/O region, with flags and attributes to match, is
caught; so is an attribute that drops a zero-copy input's flag."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks import zoo
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.memory import plan as plan_module
from zcspec.impl.compiler.memory import unit_facts
from zcspec.impl.compiler.observe import observe_plan
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.registry import get

CLAIM = get("LAYOUT-IO-ATTRIBUTES")


def _observed(graph, strategy="ge"):
    st = compile_stages(graph, CompileOptions(strategy=strategy))
    return observe_plan(st.graph, st.plan, soc="ascend910b")


def _chain():
    b = GraphBuilder("io")
    x = b.input("x", (8, 16))
    b.output(b.op("Abs", [b.op("Relu", [x])]))
    return b.build()


@pytest.mark.parametrize("strategy", ["ge", "compact"])
@pytest.mark.parametrize("name", ["builtin:sized_inputs", "builtin:split_views", "builtin:phony_concat",
                                  "builtin:collectives", "builtin:inplace_passthrough"])
def test_the_zoo_plans_attributes_hold(name, strategy):
    p = _observed(zoo.load(name), strategy)
    assert CLAIM.exercised(p)
    assert [str(v) for v in CLAIM.violations(p)] == []


def test_an_input_kept_out_of_the_io_region_with_matching_attributes_is_caught(monkeypatch):
    """Planted: the planner no longer makes graph inputs zero copy. Its flag, region and attributes agree
    with each other (x in the feature map, _is_zero_copy_block false, its basic offset there), so a claim
    that compares the attributes with the plan's own flags holds; GE makes x zero copy."""
    real = unit_facts.Facts.zero_copy
    monkeypatch.setattr(unit_facts.Facts, "zero_copy", lambda self, r: None if real(self, r) == "input" else real(self, r))
    p = _observed(_chain())
    x = p.tensor["x"]
    assert (x.zero_copy, x.region, p.attributes.is_zero_copy_block.get("x", False)) == (False, "feature_map", False)
    assert p.attributes.basic_offsets["x"] == x.offset          # self-consistent
    found = CLAIM.violations(p)
    assert {v.culprit for v in found} == {"tensor 'x'"}
    assert any("_is_zero_copy_block=False" in v.message for v in found)
    assert any("lies in the feature map" in v.message for v in found)


def test_a_dropped_zero_copy_flag_is_caught(monkeypatch):
    """Planted: the planner records _is_zero_copy_block=false for every input while placing them zero copy."""
    real = plan_module._io_attributes

    def dropped(graph, tensors, regions):
        inputs, outputs = real(graph, tensors, regions)
        return tuple(attrs.evolve(a, is_zero_copy_block=False) for a in inputs), outputs
    monkeypatch.setattr(plan_module, "_io_attributes", dropped)
    found = CLAIM.violations(_observed(_chain()))
    assert [v.culprit for v in found] == ["tensor 'x'"] and "_is_zero_copy_block=False" in found[0].message


def test_an_io_region_larger_than_the_memory_is_refused():
    p = _observed(_chain())
    bad = attrs.evolve(p, attributes=attrs.evolve(p.attributes, zero_copy_memory_size=p.attributes.memory_size + 1))
    assert [v.culprit for v in CLAIM.violations(bad)] == ["attribute zero_copy_memory_size"]
