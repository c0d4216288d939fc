"""Graph JSON files verify puts to the reader (impl/compiler/graph_json.py) and to graph validation
(impl/compiler/validate.py): ``zcspec plan graph.json`` and counterexample files read this form.

The ONNX front end only ever hands validation well-formed graphs, and verify's built-in graphs are
well formed too, so without these files no verify run saw a refusal of validate.py or a malformed
graph JSON field. Each case is a :class:`~zcspec.checks.frontend_cases.FrontendCase` whose model is
the text of a file:

- two that import (every float, tuple and weight form the format has): one written by hand, one
  written by ``graph_json.to_json`` from the same graph (the counterexample writer); both then run
  through both runtimes, their outputs held to ``onnx.reference`` on the graph (no ONNX file);
- one refusal per malformed field (not JSON, wrong format or version, a missing key, a wrong type, an
  untagged list, bad base64) and per rule of validate.py (duplicate names, a tensor written twice, an
  unknown op, a wrong input count, NetOutput and Data index rules, dangling edges, missing descs,
  unknown dtypes, dynamic, negative and overflowing dims, set sizes, weight sizes, Merge labels and shapes,
  a control edge from the node itself, attribute values the IR cannot carry (null, a tuple in a tuple), and the
  planner's node attributes of the wrong type or range: ``_reuse_input``, ``_inplace_ability``,
  ``continuous_output``, ``need_gentask_atomic``, ``atomic_input_index``), each naming its culprit;
- files that import but must be refused when compiled (``at="compile"``, compile.py), each naming its
  culprit: a set size (validate.py ``no_set_sizes``: a planning fact no model file records), CompileOptions
  the compiler cannot use (an unknown SoC, strategy or pass to disable), a negative ``_workspace_bytes``
  (the planner's lifetimes), and, with the memory-layout conflict pass disabled, what its copies resolve:
  a weight among an HCCL node's continuous inputs, a continuous output feeding a NoPadding concat.

The cases are texts written here (``base()`` and a change to it), so no code under test builds them,
except the to_json one, which is compared with the hand-written text.
"""
from __future__ import annotations

import base64
import copy
import json

import numpy as np

from zcspec.checks.frontend_case import FrontendCase
from zcspec.checks.graph_json_arity import arity_cases
from zcspec.impl.compiler import graph_json   # the writer under test (the reader is tested by every case)
from zcspec.impl.compiler.ir import Graph, Node, TensorDesc, Weight
from zcspec.impl.compiler.options import CompileOptions


def _node(name, op, ins, outs, ctrl=(), **attrs_):
    return {"name": name, "op_type": op, "inputs": list(ins), "outputs": list(outs), "attrs": attrs_, "stream": 0,
            "control_inputs": list(ctrl)}


def _tensor(name, shape=(2, 3), dtype="float32"):
    return {"name": name, "shape": list(shape), "dtype": dtype, "format": "ND"}


def _b64(array) -> str:
    return base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii")


def base() -> dict:
    """y = Relu(x * w): one Data node, one weight, one NetOutput."""
    nodes = [_node("x", "Data", [], ["x"], index=0), _node("scale", "Mul", ["x", "w"], ["a"]),
             _node("relu", "Relu", ["a"], ["y"]), _node("NetOutput", "NetOutput", ["y"], [])]
    weights = [{"name": "w", "splat": False, "data": _b64(np.arange(6, dtype=np.float32) - 2.5)}]
    return {"format": "zcspec-graph", "version": 2, "name": "base", "nodes": nodes,
            "tensors": [_tensor("x"), _tensor("w"), _tensor("a"), _tensor("y")], "weights": weights}


def importing() -> dict:
    """Every value form: a tagged -inf float, a tagged tuple, a dense and a splat weight, a float attribute,
    a control edge."""
    nodes = [_node("x", "Data", [], ["x"], index=0), _node("scale", "Mul", ["x", "w"], ["a"]),
             _node("shift", "Add", ["a", "half"], ["b"]),
             _node("clip", "Clip", ["b"], ["c"], min={"float": "-inf"}, max=4.0),
             _node("swap", "Transpose", ["c"], ["y"], ["shift"], perm={"tuple": [1, 0]}),
             _node("NetOutput", "NetOutput", ["y"], [])]
    weights = [{"name": "half", "splat": True, "data": _b64(np.array([0.5], np.float32))},
               {"name": "w", "splat": False, "data": _b64(np.arange(6, dtype=np.float32) - 2.5)}]
    tensors = [_tensor("x"), _tensor("w"), _tensor("half"), _tensor("a"), _tensor("b"), _tensor("c"),
               _tensor("y", (3, 2))]
    return {"format": "zcspec-graph", "version": 2, "name": "tagged", "nodes": nodes, "tensors": tensors,
            "weights": weights}


def _merge(labels=("b1", "b2"), merge_label=None, a2_shape=(2, 3)) -> dict:
    """Two dynamic-batch branches (Relu b1, Neg b2) joined by a Merge."""
    merge_attrs = {"labels": {"tuple": list(labels)}}
    if merge_label:
        merge_attrs["_batch_label"] = merge_label
    nodes = [_node("x", "Data", [], ["x"], index=0), _node("r1", "Relu", ["x"], ["a1"], _batch_label="b1"),
             _node("r2", "Neg", ["x"], ["a2"], _batch_label="b2"), _node("m", "Merge", ["a1", "a2"], ["y"], **merge_attrs),
             _node("NetOutput", "NetOutput", ["y"], [])]
    return {"format": "zcspec-graph", "version": 2, "name": "merge", "nodes": nodes,
            "tensors": [_tensor("x"), _tensor("a1"), _tensor("a2", a2_shape), _tensor("y")], "weights": []}


def _allreduce_with_weight() -> dict:
    """An HcomAllReduce (padding continuous inputs) of input x and weight w: the memory-layout conflict pass
    copies w into the block; without it, nothing can put a weight at a fixed address there."""
    nodes = [_node("x", "Data", [], ["x"], index=0), _node("reduce", "HcomAllReduce", ["x", "w"], ["y1", "y2"]),
             _node("NetOutput", "NetOutput", ["y1", "y2"], [])]
    weights = [{"name": "w", "splat": False, "data": _b64(np.arange(6, dtype=np.float32))}]
    return {"format": "zcspec-graph", "version": 2, "name": "allreduce_weight", "nodes": nodes,
            "tensors": [_tensor("x"), _tensor("w"), _tensor("y1"), _tensor("y2")], "weights": weights}


def _continuous_output_into_concat() -> dict:
    """A continuous-output HcomAllReduce whose outputs a PhonyConcat (NoPadding continuous inputs) joins:
    the conflict pass copies them; without it, each would sit in two continuous blocks."""
    nodes = [_node("x", "Data", [], ["x"], index=0), _node("x2", "Data", [], ["x2"], index=1),
             _node("split", "HcomAllReduce", ["x", "x2"], ["a", "b"], continuous_output=True),
             _node("cat", "PhonyConcat", ["a", "b"], ["y"], axis=0), _node("NetOutput", "NetOutput", ["y"], [])]
    return {"format": "zcspec-graph", "version": 2, "name": "continuous_output_concat", "nodes": nodes,
            "tensors": [_tensor("x"), _tensor("x2"), _tensor("a"), _tensor("b"), _tensor("y", (4, 3))],
            "weights": []}


def _separate_clean_groups_live_at_once() -> dict:
    """Two HcomAllReduce nodes whose inputs GE cleans apart (need_gentask_atomic, atomic_input_index (-1,)),
    [a, b] and [a, f], sharing their first input: the later inputs b and f sit at the same offset after a,
    which is sound only when they are never live at once. f is computed before the first collective runs,
    so both are: the planner must refuse what GE would overlap (its MakePaddingInputContinuousReuseGraph)."""
    clean = {"need_gentask_atomic": True, "atomic_input_index": {"tuple": [-1]}}
    nodes = [_node("x", "Data", [], ["x"], index=0), _node("a", "Relu", ["x"], ["a"]),
             _node("f", "Sigmoid", ["x"], ["f"]), _node("b", "Abs", ["x"], ["b"]),
             _node("c1", "HcomAllReduce", ["a", "b"], ["c1a", "c1b"], **clean),
             _node("c2", "HcomAllReduce", ["a", "f"], ["c2a", "c2f"], **clean),
             _node("NetOutput", "NetOutput", ["c1b", "c2a", "c2f"], [])]
    names = ("x", "a", "f", "b", "c1a", "c1b", "c2a", "c2f")
    return {"format": "zcspec-graph", "version": 2, "name": "separate_clean_groups", "nodes": nodes,
            "tensors": [_tensor(n) for n in names], "weights": []}


def _version_1(doc) -> None:
    doc["version"] = 1
    for n in doc["nodes"]:
        del n["control_inputs"]


def _changed(change, doc=None) -> str:
    doc = copy.deepcopy(doc if doc is not None else base())
    change(doc)
    return json.dumps(doc)


def _set(path, value):
    """A change setting doc[path[0]][path[1]]... = value."""
    def change(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _drop(path):
    def change(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


def _set_size(size):
    """A version-3 document whose output tensor 'y' (2x3 float32: 24 bytes) carries set size ``size``."""
    def change(doc):
        doc["version"] = 3
        doc["tensors"][3]["size"] = size
    return change


def _append(key, item):
    return lambda doc: doc[key].append(item)


def _written_by_to_json():
    """The importing graph as ``graph_json.to_json`` writes it; when its text is not the hand-written one,
    a case that cannot pass (it expects a refusal of a class no import raises) carries the difference."""
    doc = importing()
    graph = Graph(doc["name"],
                  [Node(n["name"], n["op_type"], n["inputs"], n["outputs"],
                        {"min": float("-inf"), "max": 4.0} if n["op_type"] == "Clip" else
                        {"perm": (1, 0)} if n["op_type"] == "Transpose" else n["attrs"], n["stream"],
                        n["control_inputs"]) for n in doc["nodes"]],
                  [TensorDesc(t["name"], t["shape"], t["dtype"], t["format"]) for t in doc["tensors"]],
                  [Weight(w["name"], base64.b64decode(w["data"]), w["splat"]) for w in doc["weights"]])
    why = "the graph to_json writes (tagged -inf, a tuple, a splat weight) reads back and runs"
    try:
        text = graph_json.to_json(graph)
        written = json.loads(text)
    except Exception as e:  # the writer crashed: the case says so
        return FrontendCase("graph_json_written_by_to_json", "{}", "ToJsonAgrees", (),
                         why=f"to_json crashed: {type(e).__name__}: {e}")
    if written != doc:
        return FrontendCase("graph_json_written_by_to_json", text, "ToJsonAgrees", (),
                         why=f"to_json wrote {written!r}, expected the hand-written {doc!r}")
    return FrontendCase("graph_json_written_by_to_json", text, why=why)


def graph_json_cases():
    C = FrontendCase
    node = lambda i, key: ("nodes", i, key)   # noqa: E731
    tensor = lambda i, key: ("tensors", i, key)   # noqa: E731
    return (
        C("graph_json_tagged_values", json.dumps(importing()),
          why="tagged floats (-inf) and tuples decode; dense and splat weights load"),
        _written_by_to_json(),
        # the reader: graph_json.from_json
        C("graph_json_not_json", '{"format": "zcspec-graph", "version": 1,', "GraphFormatError", ("does not parse",),
          why="a text that is not JSON"),
        C("graph_json_wrong_format", json.dumps({**base(), "format": "onnx"}), "GraphFormatError",
          ('"format": \'zcspec-graph\'',), why="a document of another format"),
        C("graph_json_wrong_version", json.dumps({**base(), "version": 4}), "GraphFormatError",
          ("version 4",), why="a version this reader does not know"),
        C("graph_json_version_1", _changed(_version_1), why="a version-1 file (no control_inputs) still imports"),
        C("graph_json_control_inputs_missing", _changed(_drop(node(1, "control_inputs"))), "GraphFormatError",
          ("node 'scale'", "no \"control_inputs\""), why="a version-2 node without its control inputs"),
        C("graph_json_control_inputs_not_names", _changed(_set(node(2, "control_inputs"), "scale")), "GraphFormatError",
          ("'relu'", "control_inputs"), why="control inputs that are not a list of names"),
        C("graph_json_node_without_op_type", _changed(_drop(node(1, "op_type"))), "GraphFormatError",
          ("node 'scale'", "no \"op_type\""), why="a node without a required key"),
        C("graph_json_weights_missing", _changed(_drop(("weights",))), "GraphFormatError", ("KeyError", "'weights'"),
          why="a graph without its weights list"),
        C("graph_json_inputs_not_a_list", _changed(_set(node(1, "inputs"), 5)), "GraphFormatError",
          ("node 'scale'", "\"inputs\"", "5"), why="a node's inputs that are not a list (the refusal named neither)"),
        C("graph_json_attrs_not_an_object", _changed(_set(node(2, "attrs"), [])), "GraphFormatError",
          ("node 'relu'", "\"attrs\""), why="a node's attrs that are a list, not an object (crashed the reader)"),
        C("graph_json_without_name", _changed(_drop(("name",))), "GraphFormatError", ("KeyError", "'name'"),
          why="a graph without its name (read outside the reader's checks, it crashed)"),
        C("graph_json_untagged_list", _changed(_set(node(2, "attrs"), {"perm": [1, 0]})), "GraphFormatError",
          ("node 'relu' attribute 'perm'", "[1, 0]", "tagged as tuples"),
          why="an attribute list not tagged as a tuple"),
        C("graph_json_bad_float_tag", _changed(_set(node(2, "attrs"), {"alpha": {"float": "lots"}})), "GraphFormatError",
          ("node 'relu' attribute 'alpha'", "'lots'"), why="a float tag that holds no float"),
        C("graph_json_bad_base64", _changed(_set(("weights", 0, "data"), "!!not base64!!")), "GraphFormatError",
          ("base64",), why="weight data that is not base64"),
        # validate.py
        C("graph_json_duplicate_node", _changed(_set(node(2, "name"), "scale")), "DuplicateNameError",
          ("duplicate node name 'scale'",), why="two nodes of one name"),
        C("graph_json_duplicate_tensor", _changed(_append("tensors", _tensor("a"))), "DuplicateNameError",
          ("duplicate tensor name 'a'",), why="two descs of one tensor"),
        C("graph_json_duplicate_weight", _changed(_append("weights", base()["weights"][0])), "DuplicateNameError",
          ("duplicate weight name 'w'",), why="two weights of one name"),
        C("graph_json_tensor_written_twice", _changed(_set(node(2, "outputs"), ["a"])), "GraphError",
          ("'a' is written more than once", "'scale', 'relu'"), why="a tensor two nodes write"),
        C("graph_json_node_writes_weight", _changed(_set(node(1, "outputs"), ["w"])), "GraphError",
          ("'w' is written more than once", "'scale'", "and a weight"), why="a node writing a weight"),
        C("graph_json_unknown_op", _changed(_set(node(2, "op_type"), "Frobnicate")), "UnsupportedOpError",
          ("'relu'", "'Frobnicate'"), why="an op outside the op table"),
        C("graph_json_wrong_input_count", _changed(_set(node(1, "inputs"), ["x"])), "GraphError",
          ("'scale'", "has 1 inputs, expects 2"), why="a node with too few inputs"),
        C("graph_json_no_netoutput", _changed(lambda d: d["nodes"].pop()), "GraphError",
          ("'base'", "exactly one NetOutput node, has 0"), why="a graph without its NetOutput"),
        C("graph_json_data_index_gap", _changed(_set(node(0, "attrs"), {"index": 1})), "GraphError",
          ("Data node indexes must be 0..0", "[1]"), why="Data indexes that are not 0..n-1"),
        C("graph_json_control_input_unknown", _changed(_set(node(2, "control_inputs"), ["ghost"])), "GraphError",
          ("'relu'", "'ghost'", "not a node"), why="a control edge from a node the graph lacks"),
        C("graph_json_control_input_twice", _changed(_set(node(2, "control_inputs"), ["x", "x"])), "GraphError",
          ("'relu'", "'x' twice"), why="one control edge listed twice"),
        C("graph_json_control_input_self", _changed(_set(node(2, "control_inputs"), ["relu"])), "GraphError",
          ("'relu'", "from itself"), why="a node with a control edge from itself"),
        C("graph_json_control_cycle", _changed(_set(node(1, "control_inputs"), ["relu"])), "CycleError",
          ("scale", "relu"), why="a control edge closing a cycle with a data edge"),
        C("graph_json_dangling_edge", _changed(_set(node(2, "inputs"), ["ghost"])), "MissingTensorError",
          ("'relu'", "'ghost'"), why="a node reading a tensor nothing writes"),
        C("graph_json_tensor_without_desc", _changed(lambda d: d["tensors"].pop(2)), "GraphError",
          ("'scale'", "'a'", "no TensorDesc"), why="a node output without a desc"),
        C("graph_json_weight_without_desc",
          _changed(_append("weights", {"name": "spare", "splat": False, "data": _b64(np.zeros(1, np.float32))})),
          "GraphError", ("weight 'spare'", "no TensorDesc"), why="a weight without a desc"),
        C("graph_json_unknown_dtype", _changed(_set(tensor(3, "dtype"), "float31")), "UnknownDTypeError",
          ("'y'", "float31"), why="a dtype no table knows"),
        C("graph_json_dtype_not_a_name", _changed(_set(tensor(3, "dtype"), ["float32"])), "UnknownDTypeError",
          ("'y'", "['float32']"), why="a dtype that is a list (crashed the dtype table)"),
        C("graph_json_dynamic_dim", _changed(_set(tensor(3, "shape"), [None, 3])), "ShapeError",
          ("'y'", "dimension None is dynamic"), why="a dim that is null"),
        C("graph_json_bool_dim", _changed(_set(tensor(3, "shape"), [True, 3])), "ShapeError",
          ("'y'", "dimension True is dynamic"), why="a dim that is a boolean, not an integer"),
        C("graph_json_negative_dim", _changed(_set(tensor(3, "shape"), [2, -3])), "ShapeError",
          ("'y'", "dimension -3 is negative"), why="a negative dim"),
        C("graph_json_set_size_zero", _changed(_set_size(0)), "GraphError", ("'y'", "set size 0 bytes", "at least 1"),
          why="a set size of no bytes"),
        C("graph_json_set_size_short", _changed(_set_size(20)), "GraphError", ("'y'", "set size 20 bytes",
          "less than the 24 raw bytes"), why="a set size that does not hold the shape's bytes"),
        C("graph_json_set_size_float", _changed(_set_size(24.5)), "GraphFormatError", ("'y'", "integer number of bytes",
          "24.5"), why="a set size that is not a whole number of bytes"),
        C("graph_json_size_overflow", _changed(_set(tensor(3, "shape"), [2 ** 40, 2 ** 40])), "SizeOverflowError",
          ("'y'", "too large"), why="a tensor whose byte size overflows int64"),
        C("graph_json_weight_size", _changed(_set(("weights", 0, "data"), _b64(np.zeros(2, np.float32)))), "GraphError",
          ("weight 'w' holds 8 bytes", "needs 24"), why="weight data of the wrong size for its desc"),
        C("graph_json_splat_weight_size", _changed(_set(("weights", 0), {"name": "w", "splat": True,
                                                                         "data": _b64(np.zeros(2, np.float32))})),
          "GraphError", ("weight 'w' holds 8 bytes", "needs 4", "splat"), why="a splat weight of more than one element"),
        C("graph_json_attr_null", _changed(_set(node(2, "attrs"), {"alpha": None})), "GraphFormatError",
          ("'relu'", "'alpha'", "NoneType"), why="an attribute value of no type the IR carries (null)"),
        C("graph_json_attr_nested_tuple", _changed(_set(node(2, "attrs"), {"perm": {"tuple": [{"tuple": [1]}, 0]}})),
          "GraphFormatError", ("'relu'", "'perm'", "(1,)"), why="a tuple attribute holding a tuple"),
        C("graph_json_reuse_input_index", _changed(_set(node(2, "attrs"), {"_reuse_input": 1})), "GraphError",
          ("'relu'", "_reuse_input=1"), why="an in-place input index the node lacks (Relu has one input)"),
        C("graph_json_inplace_ability_odd", _changed(_set(node(2, "attrs"), {"_inplace_ability": {"tuple": [0]}})),
          "GraphError", ("'relu'", "_inplace_ability=(0,)"), why="in-place pairs that are no pairs"),
        C("graph_json_continuous_output_int", _changed(_set(node(2, "attrs"), {"continuous_output": 1})), "GraphError",
          ("'relu'", "continuous_output=1"), why="a continuous_output flag that is no bool"),
        C("graph_json_gentask_atomic_text", _changed(_set(node(2, "attrs"), {"need_gentask_atomic": "yes"})),
          "GraphError", ("'relu'", "need_gentask_atomic='yes'"), why="a need_gentask_atomic flag that is no bool"),
        C("graph_json_atomic_input_index_int", _changed(_set(node(2, "attrs"), {"atomic_input_index": -1})),
          "GraphError", ("'relu'", "atomic_input_index=-1"), why="an atomic_input_index that is no tuple of indexes"),
        C("graph_json_merge_labels", _changed(lambda d: None, _merge(labels=("b1",))), "GraphError",
          ("Merge 'm'", "labels=", "('b1',)"), why="a Merge with one label for two inputs"),
        C("graph_json_merge_repeated_label", _changed(lambda d: None, _merge(labels=("b1", "b1"))), "GraphError",
          ("Merge 'm'", "distinct"), why="a Merge whose labels repeat"),
        C("graph_json_merge_in_branch", _changed(lambda d: None, _merge(merge_label="b1")), "GraphError",
          ("Merge 'm'", "_batch_label='b1'"), why="a Merge inside a branch"),
        C("graph_json_merge_shapes", _changed(lambda d: None, _merge(a2_shape=(3, 2))), "ShapeError",
          ("'a2'", "Merge 'm'"), why="a Merge input shaped unlike its output"),
        C("graph_json_merge_wrong_branch", _changed(lambda d: None, _merge(labels=("b2", "b1"))), "GraphError",
          ("Merge 'm'", "'a1'", "branch 'b2'", "branch 'b1'"), why="a Merge input listed for the other branch"),
        *_compile_refusals(),
        *arity_cases(),
    )


def _compile_refusals():
    """Files that import (``zcspec plan`` takes them) but that compile must refuse, with the options given."""
    C = FrontendCase
    without_copies = CompileOptions(disabled_passes={"mem_layout_conflict"})
    return (
        C("graph_json_set_size_compiled", _changed(_set_size(64)), "GraphError",
          ("'y'", "set size 64 bytes", "no set sizes"), at="compile",
          why="a set size is a planning fact (plan takes it); a model file records none, so compile refuses it"),
        C("graph_json_unknown_soc", json.dumps(base()), "UnknownSocError", ("'ascend999'", "ascend910b"),
          at="compile", options=CompileOptions(soc="ascend999"), why="a SoC profile that does not exist"),
        C("graph_json_unknown_strategy", json.dumps(base()), "OptionError", ("strategy='fastest'", "ge, compact"),
          at="compile", options=CompileOptions(strategy="fastest"), why="a planning strategy that does not exist"),
        C("graph_json_unknown_disabled_pass", json.dumps(base()), "OptionError",
          ("disabled_passes", "'fold_everything'", "mem_layout_conflict"), at="compile",
          options=CompileOptions(disabled_passes={"fold_everything"}), why="a pass to disable that does not exist"),
        C("graph_json_negative_workspace",
          _changed(_set(("nodes", 2, "attrs"), {"_workspace_bytes": {"tuple": [-1]}})), "PlanError",
          ("'relu'", "'_workspace_bytes'", "-1"), at="compile",
          why="a negative workspace size (validation leaves it to the planner)"),
        C("graph_json_weight_in_continuous_inputs", json.dumps(_allreduce_with_weight()), "PlanError",
          ("'reduce'", "'w'", "fixed address"), at="compile", options=without_copies,
          why="a weight among continuous inputs, with no conflict pass to copy it"),
        C("graph_json_continuous_output_into_concat", json.dumps(_continuous_output_into_concat()), "PlanError",
          ("'a'", "'split'", "'cat'", "two continuous blocks"), at="compile", options=without_copies,
          why="continuous outputs a NoPadding concat joins, with no conflict pass to copy them"),
        C("graph_json_separate_clean_later_inputs_live_at_once", json.dumps(_separate_clean_groups_live_at_once()),
          "PlanError", ("'b'", "'f'", "same bytes"), at="compile", options=without_copies,
          why="two separately cleaned collectives sharing a first input, whose later inputs are live at once"),
    )
