"""Control flow that is static once inputs are fixed: an If with a constant condition is replaced by its branch,
a frozen input (``values``, ``--value``) counts as a constant, and a data-dependent If is refused by name."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from zcspec.impl.compiler.frontend.errors import DataDependentControlError, FrozenInputError
from zcspec.impl.compiler.frontend.onnx_import import from_model
from tests.helpers.onnx_factory import init, model, vi


def _branch(op: str, name: str):
    """A one-node branch graph: ``op`` of the outer tensor x, plus a constant of its own."""
    return helper.make_graph([helper.make_node("Add", ["x", "k"], ["t"]), helper.make_node(op, ["t"], ["out"])],
                             name, [], [vi("out", [2, 3])], [init("k", np.ones((2, 3), np.float32))])


def _if_model(cond_nodes, inputs, inits=()):
    nodes = list(cond_nodes) + [helper.make_node("If", ["cond"], ["y"], name="choose",
                                                 then_branch=_branch("Relu", "then"),
                                                 else_branch=_branch("Neg", "else"))]
    return model(nodes, inputs, [vi("y", [2, 3])], list(inits), opset=13)


@pytest.mark.parametrize("flag, op", [(True, "Relu"), (False, "Neg")])
def test_an_if_with_a_constant_condition_becomes_its_branch(flag, op):
    m = _if_model([], [vi("x", [2, 3])], [init("cond", np.array(flag))])
    graph = from_model(m)
    assert [n.op_type for n in graph.nodes if n.op_type not in ("Data", "NetOutput")] == ["Add", op, "Identity"]
    assert "choose/k" in graph.weight and graph.outputs == ("y",)


def test_a_frozen_input_makes_a_condition_constant():
    cond = [helper.make_node("Equal", ["sr", "want"], ["cond"])]
    inputs = [vi("x", [2, 3]), vi("sr", [], TensorProto.INT64)]
    m = _if_model(cond, inputs, [init("want", np.array(16000, np.int64))])
    with pytest.raises(DataDependentControlError, match=r"node 'choose'.*--value \('sr'\)") as e:
        from_model(m)
    assert e.value.inputs == ("sr",)
    sixteen = from_model(m, values={"sr": 16000})
    eight = from_model(m, values={"sr": 8000})
    assert "Relu" in {n.op_type for n in sixteen.nodes} and "Neg" in {n.op_type for n in eight.nodes}
    assert sixteen.inputs == ("x",)


def test_freezing_names_the_culprit():
    m = _if_model([], [vi("x", [2, 3])], [init("cond", np.array(True))])
    with pytest.raises(FrozenInputError, match="'nope' is not a graph input; the model's inputs are 'x'"):
        from_model(m, values={"nope": 1})
    with pytest.raises(FrozenInputError, match=r"has shape \(2, 3\)"):
        from_model(m, values={"x": 1.0})


def test_a_nested_if_reads_its_enclosing_branch_after_both_are_inlined():
    inner = helper.make_graph([helper.make_node("Relu", ["t"], ["inner_out"])], "inner", [], [vi("inner_out", [2, 3])])
    outer_then = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["t"]),
         helper.make_node("If", ["cond"], ["r"], name="nested", then_branch=inner, else_branch=inner)],
        "outer_then", [], [vi("r", [2, 3])])
    nodes = [helper.make_node("If", ["cond"], ["y"], name="outer", then_branch=outer_then, else_branch=outer_then)]
    m = model(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], [init("cond", np.array(True))], opset=13)
    graph = from_model(m)
    assert [n.op_type for n in graph.nodes if n.op_type not in ("Data", "NetOutput", "Identity")] == ["Neg", "Relu"]
