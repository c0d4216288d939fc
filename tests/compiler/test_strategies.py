"""The executable-graph strategy draws valid graphs and reaches every feature it promises."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zcspec.checks.strategies.graphs import FAMILIES, graphs
from zcspec.impl.compiler import ops
from zcspec.impl.compiler.validate import validate


@given(graphs())
def test_graphs_are_valid(graph):
    assert validate(graph) is graph


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_builds(family):
    @settings(max_examples=15)
    @given(graphs(min_nodes=3, max_nodes=4, families=(family,)))
    def run(graph):
        validate(graph)

    run()


def test_features_are_reached():
    seen = set()

    @settings(max_examples=200, database=None)
    @given(graphs(max_nodes=10))
    def run(graph):
        for n in graph.nodes:
            info = ops.info(n.op_type)
            seen.add(info.kind)
            seen.update(k for k in ("atomic", "inplace") if getattr(info, k) and (k != "inplace" or n.attr("_reuse_input")))
            if info.continuous_input:
                seen.add(info.continuous_input)
        if set(graph.inputs) & set(graph.outputs):
            seen.add("input->output")
        if any(graph.consumers.get(t, ()) != ("NetOutput",) for t in graph.outputs):
            seen.add("output feeds others")

    run()
    assert {"view", "hccl", "atomic", "inplace", "padding", "nopadding", "output feeds others", "input->output"} <= seen


def test_bad_bounds():
    with pytest.raises(ValueError, match="nodes bounds"):
        graphs(min_nodes=5, max_nodes=2)
