"""Crafted ONNX models that verify puts to the front end: what it must accept, and what it must refuse by name.

The zoo and ONNX's node tests are well-formed, topologically sorted files with no control flow, so
verify never saw the front end sort an unsorted graph, fold an ``If`` whose condition initializers
decide, or refuse a cycle (in an ONNX file or a graph JSON file), a missing tensor, an unknown op or
an opset-6 training-mode BatchNormalization: each of those paths could break with verify passing.
Each case here is a small model built with onnx.helper, or a graph JSON text (no front-end code
involved), and an expectation:

- ``imports``: the model imports; verify then runs it through both runtimes against onnxruntime on
  the same file (the differential run every ONNX model of the zoo gets), so an import that
  reorders, drops or mis-folds a node shows in the outputs;
- ``refused``: the import raises the named error class, and its message names each culprit given.

``frontend_cases()`` lists them; ``check_refusal(case, error)`` says what is wrong with a refusal
(None when it is the expected one).
"""
from __future__ import annotations

import json

import attrs
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


@attrs.frozen(eq=False)
class FrontendCase:
    """``model``: an ONNX model, or the text of a zcspec graph JSON file (``zcspec plan graph.json``)."""

    name: str
    model: onnx.ModelProto | str
    refused: str | None = None            # the error class the import must raise; None: it must import
    culprits: tuple[str, ...] = ()        # what the refusal's message must name
    why: str = ""


def _vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def _model(nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(list(nodes), "case", list(inputs), list(outputs), list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)


def _init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def _unsorted() -> onnx.ModelProto:
    """A diamond whose nodes are listed consumers first (ONNX asks for topological order; exporters
    and hand edits do not always give it)."""
    nodes = [helper.make_node("Add", ["l", "r"], ["y"], name="join"),
             helper.make_node("Neg", ["h"], ["r"], name="right"),
             helper.make_node("Sigmoid", ["h"], ["l"], name="left"),
             helper.make_node("Relu", ["x"], ["h"], name="head")]
    return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])])


def _branch(op: str, name: str) -> onnx.GraphProto:
    return helper.make_graph([helper.make_node("Add", ["x", "k"], ["t"]), helper.make_node(op, ["t"], ["out"])],
                             name, [], [_vi("out", [2, 3])], [_init("k", np.full((2, 3), 0.5, np.float32))])


def _if_computed_condition(rate: int) -> onnx.ModelProto:
    """An If whose condition is computed from initializers alone (Equal(rate, 16000)), as exported
    models fix a sample rate: the front end must evaluate it and inline the branch it selects."""
    nodes = [helper.make_node("Equal", ["rate", "want"], ["cond"], name="is_16k"),
             helper.make_node("If", ["cond"], ["y"], name="choose", then_branch=_branch("Relu", "then"),
                              else_branch=_branch("Neg", "else"))]
    inits = [_init("rate", np.array(rate, np.int64)), _init("want", np.array(16000, np.int64))]
    return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])], inits)


def _batchnorm_opset6(is_test: int) -> onnx.ModelProto:
    c = 3
    inits = [_init("scale", np.ones(c, np.float32)), _init("bias", np.zeros(c, np.float32)),
             _init("mean", np.zeros(c, np.float32)), _init("var", np.ones(c, np.float32))]
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn",
                            is_test=is_test)
    return _model([node], [_vi("x", [1, c, 2, 2])], [_vi("y", [1, c, 2, 2])], inits, opset=6)


def _batchnorm_per_activation() -> onnx.ModelProto:
    """Opset 7 with spatial=0: one mean, variance, scale and bias per activation (C, H, W), not per channel."""
    c, h, w = 2, 3, 2
    rng = np.random.default_rng(7)
    inits = [_init(n, (rng.random((c, h, w)) + lo).astype(np.float32))
             for n, lo in (("scale", 0.5), ("bias", -0.5), ("mean", -0.5), ("var", 0.5))]
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn",
                            spatial=0, epsilon=1e-3)
    return _model([node], [_vi("x", [1, c, h, w])], [_vi("y", [1, c, h, w])], inits, opset=7)


def _cycle() -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="head"),
             helper.make_node("Add", ["a", "c"], ["b"], name="loop_add"),
             helper.make_node("Relu", ["b"], ["c"], name="loop_relu"),
             helper.make_node("Relu", ["c"], ["y"], name="tail")]
    return _model(nodes, [_vi("x", [1, 4])], [_vi("y", [1, 4])])


def _missing() -> onnx.ModelProto:
    return _model([helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")], [_vi("x", [1, 4])], [_vi("y", [1, 4])])


def _unknown_op() -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"), helper.make_node("FrobnicateXYZ", ["a"], ["y"], name="frob")]
    return _model(nodes, [_vi("x", [1, 4])], [_vi("y", [1, 4])])


def _cycle_graph_json() -> str:
    """The zcspec graph JSON form (what `zcspec plan graph.json` reads) of a graph with a cycle."""
    def node(name, op, ins, outs, **attrs_):
        return {"name": name, "op_type": op, "inputs": ins, "outputs": outs, "attrs": attrs_, "stream": 0}
    nodes = [node("x", "Data", [], ["x"], index=0), node("head", "Relu", ["x"], ["a"]),
             node("loop_add", "Add", ["a", "c"], ["b"]), node("loop_relu", "Relu", ["b"], ["c"]),
             node("NetOutput", "NetOutput", ["c"], [])]
    tensors = [{"name": t, "shape": [1, 4], "dtype": "float32", "format": "ND"} for t in ("x", "a", "b", "c")]
    return json.dumps({"format": "zcspec-graph", "version": 1, "name": "cycle", "nodes": nodes, "tensors": tensors,
                       "weights": []})


def frontend_cases() -> tuple[FrontendCase, ...]:
    return (
        FrontendCase("unsorted_nodes", _unsorted(), why="nodes listed consumers first import in dependency order"),
        FrontendCase("if_condition_from_initializers_then", _if_computed_condition(16000),
                     why="an If whose initializers decide the condition becomes its then branch"),
        FrontendCase("if_condition_from_initializers_else", _if_computed_condition(8000),
                     why="... and its else branch when the condition is false"),
        FrontendCase("batchnorm_opset6_training", _batchnorm_opset6(0), "UnsupportedFeatureError", ("'bn'", "training mode"),
                     why="before opset 7, is_test=0 selects training mode, which the op table refuses"),
        FrontendCase("batchnorm_opset7_per_activation", _batchnorm_per_activation(),
                     why="before opset 9, spatial=0 normalises each activation with its own statistics"),
        FrontendCase("cycle", _cycle(), "CycleError", ("'loop_add'", "'loop_relu'"), why="a cycle is named by its nodes"),
        FrontendCase("graph_json_cycle", _cycle_graph_json(), "CycleError", ("'loop_add'", "'loop_relu'"),
                     why="a graph JSON file with a cycle is refused naming its nodes"),
        FrontendCase("missing_tensor", _missing(), "MissingTensorError", ("'ghost'", "'adder'"),
                     why="a tensor nothing writes is named with its reader"),
        FrontendCase("unknown_op", _unknown_op(), "UnsupportedOpError", ("'frob'", "FrobnicateXYZ"),
                     why="an op outside the op table is named with its node"),
    )


def check_refusal(case: FrontendCase, error: BaseException) -> str | None:
    """What is wrong with ``error`` as ``case``'s refusal, or None when it is the expected one."""
    if case.refused is None:
        return f"refused ({type(error).__name__}: {error}); the model must import ({case.why})"
    names = [c.__name__ for c in type(error).__mro__]
    if case.refused not in names:
        return f"refused with {type(error).__name__}: {error}; expected a {case.refused} ({case.why})"
    missing = [c for c in case.culprits if c not in str(error)]
    if missing:
        return f"the refusal does not name {', '.join(missing)}: {error}"
    return None
