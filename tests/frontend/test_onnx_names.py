"""Property: generated node names are unique, avoid Data/NetOutput names, and are stable."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from onnx import helper

from zcspec.impl.compiler.frontend.onnx_graph import NETOUTPUT, node_names

# Few, clashing spellings so collisions (with inputs, with generated names, between nodes) are common.
explicit = st.sampled_from(["", "", "x", "Relu_0", "Relu_1", "Add_2", "NetOutput", "n", "n_1"])
node_specs = st.lists(st.tuples(st.sampled_from(["Relu", "Add"]), explicit), max_size=8)


@given(node_specs, st.lists(st.sampled_from(["x", "Relu_1", "n"]), unique=True, max_size=2))
def test_names_are_unique_disjoint_from_reserved_and_stable(specs, inputs):
    nodes = [helper.make_node(op, [], [f"t{i}"], name=name) for i, (op, name) in enumerate(specs)]
    reserved = inputs + [NETOUTPUT]
    names = node_names(nodes, reserved)
    assert len(set(names)) == len(names)
    assert not set(names) & set(reserved)
    assert names == node_names(nodes, reserved)
    for i, (node, name) in enumerate(zip(nodes, names)):
        base = node.name or f"{node.op_type}_{i}"
        assert name == base or (name.startswith(base + "_") and name[len(base) + 1:].isdigit())
    # The first node to claim a free explicit name keeps it exactly.
    free = [n.name for n in nodes if n.name and n.name not in reserved]
    for wanted in dict.fromkeys(free):
        assert wanted in names
