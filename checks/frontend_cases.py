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

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from zcspec.checks.frontend_case import FrontendCase
from zcspec.checks.graph_json_cases import graph_json_cases

F = TensorProto.FLOAT


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



# --- constant folding: Shape/Size of inputs, splats, multi-output and failing folds -------------------------

I64 = TensorProto.INT64
B = TensorProto.BOOL


def _n(op, ins, outs, name, **attrs_):
    return helper.make_node(op, ins, outs, name=name, **attrs_)


def _shape_gather_concat() -> onnx.ModelProto:
    """Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): the exporters' way of keeping the batch dim.
    Shape of an input folds from its inferred shape (no initializer holds it), the rest by evaluation."""
    nodes = [_n("Shape", ["x"], ["s"], "shape"), _n("Gather", ["s", "i0"], ["d0"], "dim0", axis=0),
             _n("Unsqueeze", ["d0", "ax"], ["d0u"], "as_list"), _n("Concat", ["d0u", "m1"], ["target"], "target", axis=0),
             _n("Reshape", ["x", "target"], ["y"], "flatten")]
    inits = [_init("i0", np.array(0, np.int64)), _init("ax", np.array([0], np.int64)),
             _init("m1", np.array([-1], np.int64))]
    return _model(nodes, [_vi("x", [2, 3, 4])], [_vi("y", [2, 12])], inits)


def _shape_slice_and_size() -> onnx.ModelProto:
    """Opset 15: Shape with start/end attributes (dims 1..2 of x) feeds a Reshape and, through the product
    of those dims, divides x (so the folded value shows in y0); Size(x) scales x."""
    nodes = [_n("Shape", ["x"], ["tail"], "tail_dims", start=1, end=3),
             _n("Concat", ["lead", "tail"], ["target"], "target", axis=0),
             _n("Reshape", ["x", "target"], ["xr"], "same_shape"),
             _n("ReduceProd", ["tail"], ["per_row"], "per_row", keepdims=0),
             _n("Cast", ["per_row"], ["per_rowf"], "per_row_float", to=F), _n("Div", ["xr", "per_rowf"], ["y0"], "per_row_div"),
             _n("Size", ["x"], ["count"], "count"), _n("Cast", ["count"], ["countf"], "as_float", to=F),
             _n("Div", ["x", "countf"], ["y1"], "per_element")]
    return _model(nodes, [_vi("x", [2, 3, 4])], [_vi("y0", [2, 3, 4]), _vi("y1", [2, 3, 4])],
                  [_init("lead", np.array([2], np.int64))], opset=15)


def _splat_chain() -> onnx.ModelProto:
    """ConstantOfShape (a splat), Unsqueeze and Expand of it (still splats), Mul by a scalar (an elementwise
    op on splats: evaluated on one element), then Add of a dense array (a splat and a non-scalar: evaluated in
    full), added to x; then times a one-element ConstantOfShape (a splat weight of one element)."""
    fill = helper.make_tensor("fill", F, [1], [0.25])
    nodes = [_n("ConstantOfShape", ["len"], ["c"], "fill", value=fill), _n("Unsqueeze", ["c", "ax"], ["cu"], "as_row"),
             _n("Expand", ["cu", "rows"], ["ce"], "expand"), _n("Mul", ["ce", "two"], ["c2"], "double"),
             _n("Add", ["c2", "ramp"], ["c3"], "plus_ramp"), _n("Add", ["x", "c3"], ["xc"], "add"),
             _n("ConstantOfShape", ["one"], ["k"], "one_element", value=helper.make_tensor("k", F, [1], [-1.5])),
             _n("Mul", ["xc", "k"], ["y"], "times_k")]
    inits = [_init("len", np.array([3], np.int64)), _init("one", np.array([1], np.int64)), _init("ax", np.array([0], np.int64)),
             _init("rows", np.array([2, 3], np.int64)), _init("two", np.array(2.0, np.float32)),
             _init("ramp", np.arange(6, dtype=np.float32).reshape(2, 3))]
    return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])], inits)


def _split_constant() -> onnx.ModelProto:
    """A Split of an initializer: a folded node with two outputs (no splat shortcut applies)."""
    nodes = [_n("Split", ["k"], ["k0", "k1"], "halves", axis=0), _n("Add", ["x", "k0"], ["a"], "add"),
             _n("Mul", ["a", "k1"], ["y"], "mul")]
    return _model(nodes, [_vi("x", [1, 3])], [_vi("y", [1, 3])], [_init("k", np.arange(6, dtype=np.float32).reshape(2, 3))])


def _refolding_chain() -> onnx.ModelProto:
    """Reshape(x, Abs(Shape(x))), then the same of its output: ONNX's data propagation does not see
    through Abs, so each Reshape's shape is known only after folding, and the second Shape folds only
    after the second inference (inference and folding alternate)."""
    nodes = [_n("Shape", ["x"], ["s"], "shape"), _n("Abs", ["s"], ["s2"], "abs"), _n("Reshape", ["x", "s2"], ["r"], "first"),
             _n("Shape", ["r"], ["t"], "shape_again"), _n("Abs", ["t"], ["t2"], "abs_again"),
             _n("Reshape", ["r", "t2"], ["r2"], "second"), _n("Relu", ["r2"], ["y"], "relu")]
    return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])])


def _dropout(inputs, outputs, inits, extra_inputs=()) -> onnx.ModelProto:
    outs = [_vi("y", [2, 3])] + ([_vi("mask", [2, 3], B)] if len(outputs) > 1 else [])
    return _model([_n("Dropout", inputs, outputs, "drop")], [_vi("x", [2, 3]), *extra_inputs], outs, inits, opset=13)


def _fold_refused(op: str) -> onnx.ModelProto:
    if op == "RandomNormal":   # never folded: its value changes per run
        nodes = [_n("RandomNormal", [], ["noise"], "noise", shape=[2, 3]), _n("Add", ["x", "noise"], ["y"], "add")]
        return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])])
    if op == "Gelu":           # a non-standard domain: no reference implementation folds it, no schema types it
        nodes = [helper.make_node("Gelu", ["k"], ["g"], name="gelu_ms", domain="com.microsoft"),
                 _n("Add", ["x", "g"], ["y"], "add")]
        m = _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])], [_init("k", np.ones((2, 3), np.float32))])
        m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
        return m
    # Gather of an initializer at an index out of range: all inputs constant, the evaluation fails
    nodes = [_n("Gather", ["table", "index"], ["g"], "oob"), _n("Add", ["x", "g"], ["y"], "add")]
    return _model(nodes, [_vi("x", [2])], [_vi("y", [2])],
                  [_init("table", np.ones(3, np.float32)), _init("index", np.array([5, 0], np.int64))])


# --- control flow --------------------------------------------------------------------------------------------

def _graph(nodes, name, outputs, inits=()) -> onnx.GraphProto:
    return helper.make_graph(list(nodes), name, [], list(outputs), list(inits))


def _relu_or_neg(cond: str, out: str, src: str, name: str) -> onnx.NodeProto:
    return _n("If", [cond], [out], name,
              then_branch=_graph([helper.make_node("Relu", [src], [f"{name}_t"])], f"{name}_then", [_vi(f"{name}_t", [2, 3])]),
              else_branch=_graph([helper.make_node("Neg", [src], [f"{name}_e"])], f"{name}_else", [_vi(f"{name}_e", [2, 3])]))


def _if_condition_from_shape(want: int) -> onnx.ModelProto:
    """An If on Equal(Shape(x)[0], want): initializers alone do not decide it (x is an input), folding does
    once shapes are inferred; the import inlines the chosen branch and starts over."""
    nodes = [_n("Shape", ["x"], ["s"], "shape"), _n("Gather", ["s", "i0"], ["d0"], "dim0", axis=0),
             _n("Equal", ["d0", "want"], ["cond"], "is_batch"), _relu_or_neg("cond", "y", "x", "by_batch")]
    return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])],
                  [_init("i0", np.array(0, np.int64)), _init("want", np.array(want, np.int64))])


def _nested_if(returns_outer: bool) -> onnx.ModelProto:
    """An If its initializer decides whose then branch computes t and holds an inner If (decided by an
    initializer of the branch) whose branches read t: inlining the outer If renames the branch's tensors,
    inside the inner If's branches too. With ``returns_outer`` the inner else branch returns t itself
    (a subgraph output named after an enclosing tensor, which onnxruntime refuses to load)."""
    inner_else = ([] if returns_outer else [helper.make_node("Identity", ["t"], ["t_copy"])])
    inner = _n("If", ["inner_cond"], ["io"], "inner",
               then_branch=_graph([helper.make_node("Add", ["t", "x"], ["z"])], "inner_then", [_vi("z", [2, 3])]),
               else_branch=_graph(inner_else, "inner_else", [_vi("t" if returns_outer else "t_copy", [2, 3])]))
    outer_then = _graph([_n("Sigmoid", ["x"], ["t"], "sig"), inner, _n("Mul", ["io", "t"], ["ot"], "mul")], "outer_then",
                        [_vi("ot", [2, 3])], [_init("inner_cond", np.array(False))])
    outer_else = _graph([helper.make_node("Neg", ["x"], ["oe"])], "outer_else", [_vi("oe", [2, 3])])
    nodes = [_n("If", ["outer_cond"], ["y"], "outer", then_branch=outer_then, else_branch=outer_else)]
    return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])], [_init("outer_cond", np.array(True))])


def _if_of_if() -> onnx.ModelProto:
    """An If whose condition is another If's output, listed before it: its condition is decided only once
    the first If is inlined (Not(c0) with c0 true: the second If takes its else branch)."""
    first = _n("If", ["c0"], ["c1"], "first_if",
               then_branch=_graph([helper.make_node("Not", ["c0"], ["nc"])], "first_then", [_vi("nc", [], B)]),
               else_branch=_graph([helper.make_node("Identity", ["c0"], ["ic"])], "first_else", [_vi("ic", [], B)]))
    return _model([_relu_or_neg("c1", "y", "x", "second_if"), first], [_vi("x", [2, 3])], [_vi("y", [2, 3])],
                  [_init("c0", np.array(True))])


def _chained_ifs(count: int, by_shape: bool) -> onnx.ModelProto:
    """``count`` Ifs in a chain on one condition: from an initializer (inlined before inference, at most
    64 of them there, the rest by folding) or from Shape(x) (each inlined after folding, a re-import each)."""
    nodes, prev = [], "x"
    inits = [_init("c", np.array(True))]
    if by_shape:
        nodes = [_n("Shape", ["x"], ["s"], "shape"), _n("ReduceSum", ["s"], ["n"], "dims", keepdims=0),
                 _n("Equal", ["n", "five"], ["c"], "is_five")]
        inits = [_init("five", np.array(5, np.int64))]
    for i in range(count):
        nodes.append(_relu_or_neg("c", f"h{i}", prev, f"if{i}"))
        prev = f"h{i}"
    nodes.append(_n("Identity", [prev], ["y"], "out"))
    return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])], inits)


def _if_refused(kind: str) -> onnx.ModelProto:
    if kind == "data":    # Greater(t, t) of ReduceSum(x): the data decides (x reached twice)
        nodes = [_n("ReduceSum", ["x"], ["t"], "total", keepdims=0), _n("Greater", ["t", "t"], ["cond"], "positive"),
                 _relu_or_neg("cond", "y", "x", "by_data")]
        return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])])
    # the condition is a Gather of initializers the reference implementation cannot evaluate
    nodes = [_n("Gather", ["flags", "bad"], ["cond"], "pick_flag", axis=0), _relu_or_neg("cond", "y", "x", "choose")]
    return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])],
                  [_init("flags", np.array([True, False])), _init("bad", np.array(7, np.int64))])


# --- import: files, names, inputs, attributes, optional operands -------------------------------------------

def _external_data_missing() -> onnx.ModelProto:
    """An initializer stored in an external file that is not there."""
    w = TensorProto(name="w", data_type=F, dims=[2, 3], data_location=TensorProto.EXTERNAL)
    for key, value in (("location", "weights_missing.bin"), ("offset", "0"), ("length", "24")):
        w.external_data.add(key=key, value=value)
    return _model([_n("Add", ["x", "w"], ["y"], "add")], [_vi("x", [2, 3])], [_vi("y", [2, 3])], [w])


def _name_clashes() -> onnx.ModelProto:
    """Node names equal to the graph input (x), to NetOutput, and to the name an unnamed node would get
    (Relu_3); the graph has no name (the file's stem names the IR graph)."""
    nodes = [_n("Relu", ["x"], ["a"], "x"), _n("Neg", ["a"], ["b"], "NetOutput"), _n("Sigmoid", ["b"], ["c"], "Relu_3"),
             helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(nodes, "", [_vi("x", [2, 3])], [_vi("y", [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)


def _ir3_initializers() -> onnx.ModelProto:
    """IR 3 lists every initializer among the graph inputs (they are constants, not Data nodes); one
    initializer is read by nothing."""
    inits = [_init("w", np.arange(6, dtype=np.float32).reshape(2, 3)), _init("unused", np.ones(1000, np.float32))]
    return _model([_n("Mul", ["x", "w"], ["y"], "scale")], [_vi("x", [2, 3]), _vi("w", [2, 3]), _vi("unused", [1000])],
                  [_vi("y", [2, 3])], inits, opset=8)


def _slice(omitted_middle: bool) -> onnx.ModelProto:
    """Slice(x, starts, ends, "", "") (trailing optional operands omitted) or Slice(x, starts, ends, "", steps)."""
    ins = ["x", "starts", "ends", "", "steps" if omitted_middle else ""]
    inits = [_init("starts", np.array([1], np.int64)), _init("ends", np.array([3], np.int64)),
             _init("steps", np.array([1], np.int64))]
    return _model([_n("Slice", ins, ["y"], "slice")], [_vi("x", [4, 3])], [_vi("y", [2, 3])], inits)


def _resize_opset10() -> onnx.ModelProto:
    """Resize-10 is (X, scales): nearest, asymmetric, floor (what the IR node must be told)."""
    node = _n("Resize", ["x", "scales"], ["y"], "upsample", mode="nearest")
    return _model([node], [_vi("x", [1, 1, 2, 3])], [_vi("y", [1, 1, 4, 6])],
                  [_init("scales", np.array([1, 1, 2, 2], np.float32))], opset=10)


def _batchnorm_opset15() -> onnx.ModelProto:
    """Opset 15 spells inference mode as training_mode=0 (an attribute the IR drops)."""
    inits = [_init("scale", np.array([1, 2, 3], np.float32)), _init("bias", np.array([0.5, 0, -0.5], np.float32)),
             _init("mean", np.array([0.1, 0.2, 0.3], np.float32)), _init("var", np.array([1, 2, 0.5], np.float32))]
    node = _n("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], "bn", training_mode=0)
    return _model([node], [_vi("x", [1, 3, 2, 2])], [_vi("y", [1, 3, 2, 2])], inits, opset=15)


def _lstm_activations() -> onnx.ModelProto:
    hidden, size = 2, 3
    inits = [_init("W", np.full((1, 4 * hidden, size), 0.1, np.float32)),
             _init("R", np.full((1, 4 * hidden, hidden), 0.1, np.float32))]
    node = _n("LSTM", ["x", "W", "R"], ["Y"], "lstm", hidden_size=hidden, activations=["Sigmoid", "Tanh", "Relu"])
    return _model([node], [_vi("x", [2, 1, size])], [_vi("Y", [2, 1, 1, hidden])], inits)


def _bad_attribute(kind: str) -> onnx.ModelProto:
    if kind == "utf8":   # Conv's auto_pad, a string attribute, holding bytes that are not UTF-8
        node = _n("Conv", ["x", "w"], ["y"], "conv", auto_pad=b"\xff\xfe")
        return _model([node], [_vi("x", [1, 1, 3, 3])], [_vi("y", [1, 1, 3, 3])], [_init("w", np.ones((1, 1, 1, 1), np.float32))])
    node = _n("Relu", ["x"], ["y"], "relu")   # a tensor attribute on a node that stays in the graph
    node.attribute.append(helper.make_attribute("table", helper.make_tensor("table", F, [1], [1.0])))
    return _model([node], [_vi("x", [2])], [_vi("y", [2])])


def _structure_refused(kind: str) -> onnx.ModelProto:
    if kind == "twice":
        nodes = [_n("Relu", ["x"], ["t"], "first"), _n("Neg", ["x"], ["t"], "second"), _n("Abs", ["t"], ["y"], "abs")]
        return _model(nodes, [_vi("x", [2])], [_vi("y", [2])])
    if kind == "output":
        return _model([_n("Relu", ["x"], ["y"], "relu")], [_vi("x", [2])], [_vi("y", [2]), _vi("nowhere", [2])])
    if kind == "duplicate_input":
        return _model([_n("Add", ["x", "x"], ["y"], "add")], [_vi("x", [2]), _vi("x", [2])], [_vi("y", [2])])
    if kind == "opaque":
        blob = onnx.ValueInfoProto(name="blob")
        blob.type.opaque_type.domain, blob.type.opaque_type.name = "vendor", "blob"
        return _model([_n("Identity", ["blob"], ["y"], "pass")], [blob], [_vi("y", [2])])
    # a graph input that is a sequence of maps
    seq = helper.make_value_info("pairs", helper.make_sequence_type_proto(
        helper.make_map_type_proto(I64, helper.make_tensor_type_proto(F, [2]))))
    return _model([_n("Identity", ["pairs"], ["y"], "pass")], [seq], [_vi("y", [2])])


def _dynamic_input(shape) -> onnx.ModelProto:
    """x declared with a dynamic shape (no --shape is given): a name, -1, '?', no value, or no shape."""
    x = _vi("x", shape)
    if shape is not None and None in shape:   # make_tensor_value_info writes None as an empty dim
        x.type.tensor_type.shape.dim[shape.index(None)].Clear()
    return _model([_n("Relu", ["x"], ["y"], "relu")], [x], [_vi("y", None)])


def _shape_inference_refused() -> onnx.ModelProto:
    return _model([_n("Add", ["x", "k"], ["y"], "mismatch")], [_vi("x", [2, 3])], [_vi("y", [2, 3])],
                  [_init("k", np.ones((4, 5), np.float32))])


def _reshape_from_input() -> onnx.ModelProto:
    """Reshape's shape is Add(s, s) of an int64 input s: known only at run time, and s is named once."""
    nodes = [_n("Add", ["s", "s"], ["s2"], "double"), _n("Reshape", ["x", "s2"], ["y"], "reshape")]
    return _model(nodes, [_vi("x", [2, 3]), _vi("s", [2], I64)], [_vi("y", [3, 2])])


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
        *_folding_cases(), *_control_cases(), *_import_cases(), *graph_json_cases(),
    )


def _folding_cases() -> tuple[FrontendCase, ...]:
    return (
        FrontendCase("fold_shape_gather_concat", _shape_gather_concat(),
                     why="Shape of an input folds from its inferred shape; Gather, Unsqueeze and Concat of it fold"),
        FrontendCase("fold_shape_start_end_and_size", _shape_slice_and_size(),
                     why="opset-15 Shape takes dims start..end; Size folds to the element count"),
        FrontendCase("fold_splat_chain", _splat_chain(),
                     why="ConstantOfShape, views and elementwise ops of splats fold to splats; a splat with a dense "
                         "array folds in full"),
        FrontendCase("fold_split_constant", _split_constant(), why="a constant node with two outputs folds both"),
        FrontendCase("fold_alternates_with_inference", _refolding_chain(),
                     why="a Shape of a tensor shaped only after folding folds after the next inference"),
        FrontendCase("dropout_inference_mask_output", _dropout(["x", "ratio", "mode"], ["y", "mask"],
                                                               [_init("ratio", np.array(0.3, np.float32)),
                                                                _init("mode", np.array(False))]),
                     why="training_mode=false makes Dropout the identity and its mask output all true"),
        FrontendCase("dropout_training_default_ratio", _dropout(["x", "", "mode"], ["y"], [_init("mode", np.array(True))]),
                     "UnsupportedFeatureError", ("'drop'", "training mode", "ratio=0.5"),
                     why="training mode with the default ratio 0.5 is random"),
        FrontendCase("dropout_ratio_from_input", _dropout(["x", "ratio", "mode"], ["y"], [_init("mode", np.array(True))],
                                                          [_vi("ratio", [])]),
                     "RuntimeValueError", ("'drop'", "operand 'ratio'", "graph input 'ratio'"),
                     why="in training mode a ratio known only at run time decides what Dropout computes"),
        FrontendCase("random_never_folds", _fold_refused("RandomNormal"), "UnsupportedOpError", ("'noise'", "'RandomNormal'"),
                     why="a random op is not folded (it changes per run) and is outside the op table"),
        FrontendCase("non_standard_domain_never_folds", _fold_refused("Gelu"), "ShapeError", ("'g'",),
                     why="a com.microsoft Gelu of constants has no reference implementation to fold it, and no schema "
                         "to type its output"),
        FrontendCase("fold_failure_names_node", _fold_refused("Gather"), "FoldError", ("'oob'", "Gather", "IndexError"),
                     why="a constant node whose evaluation fails is named with its op and the error"),
    )


def _control_cases() -> tuple[FrontendCase, ...]:
    return (
        FrontendCase("if_condition_from_shape_then", _if_condition_from_shape(2),
                     why="an If on a Shape of an input is inlined once folding decides it (then branch)"),
        FrontendCase("if_condition_from_shape_else", _if_condition_from_shape(3),
                     why="... and its else branch when the shape says so"),
        FrontendCase("nested_if", _nested_if(False),
                     why="inlining an If renames its branch's tensors in a nested If's branches too"),
        FrontendCase("nested_if_returns_enclosing_tensor", _nested_if(True),
                     why="a nested branch output named after an enclosing branch's tensor is renamed with it "
                         "(onnxruntime refuses such a file: the outputs are held to onnx.reference on the graph)"),
        FrontendCase("if_condition_from_if", _if_of_if(),
                     why="an If whose condition another If computes is inlined after that one"),
        FrontendCase("sixty_five_constant_ifs", _chained_ifs(65, by_shape=False),
                     why="past 64 Ifs inlined before inference, the rest are inlined after folding"),
        FrontendCase("too_many_ifs_to_inline", _chained_ifs(65, by_shape=True), "UnsupportedFeatureError",
                     ("'if64'", "more than 64 If nodes"),
                     why="the number of Ifs inlined after folding is bounded (each re-runs the import)"),
        FrontendCase("if_condition_from_data", _if_refused("data"), "DataDependentControlError",
                     ("'by_data'", "'cond'", "--value ('x')"),
                     why="an If the data decides is refused, naming the inputs to freeze"),
        FrontendCase("if_condition_fold_fails", _if_refused("fold"), "FoldError", ("'pick_flag'", "Gather"),
                     why="a condition the reference implementation cannot evaluate is left to folding, which names it"),
    )


def _import_cases() -> tuple[FrontendCase, ...]:
    dyn = "is dynamic and not fixed"
    return (
        FrontendCase("external_data_missing", _external_data_missing(), "OnnxFileError", ("weights_missing.bin",),
                     why="a missing external-data file is named"),
        FrontendCase("no_graph", onnx.ModelProto(), "OnnxFileError", ("no_graph.onnx", "holds no graph"),
                     why="a file without a graph is refused naming the file"),
        FrontendCase("node_name_clashes", _name_clashes(),
                     why="node names clashing with an input, NetOutput or a generated name get suffixes"),
        FrontendCase("ir3_initializers_as_inputs", _ir3_initializers(),
                     why="initializers listed as inputs are constants, an unused one is dropped"),
        FrontendCase("slice_trailing_operands_omitted", _slice(False), why="trailing empty optional operands are dropped"),
        FrontendCase("slice_middle_operand_omitted", _slice(True), "UnsupportedFeatureError",
                     ("'slice'", "optional input 3 is omitted"),
                     why="an omitted optional operand before a given one cannot be positional in the IR"),
        FrontendCase("resize_opset10", _resize_opset10(), why="Resize-10's (X, scales) form maps to the IR's scales"),
        FrontendCase("batchnorm_opset15_training_mode_0", _batchnorm_opset15(),
                     why="opset 15's training_mode=0 is inference mode"),
        FrontendCase("lstm_custom_activations", _lstm_activations(), "UnsupportedFeatureError",
                     ("'lstm'", "activations=('Sigmoid', 'Tanh', 'Relu')"),
                     why="recurrent activations other than the defaults are refused"),
        FrontendCase("attribute_not_utf8", _bad_attribute("utf8"), "AttributeError_", ("'conv'", "'auto_pad'", "not UTF-8"),
                     why="a string attribute that is not UTF-8 is named"),
        FrontendCase("tensor_attribute_on_kept_node", _bad_attribute("tensor"), "AttributeError_",
                     ("'relu'", "'table'", "TENSOR"), why="a tensor attribute the IR cannot carry is named"),
        FrontendCase("tensor_written_twice", _structure_refused("twice"), "GraphError", ("'t'", "first", "second"),
                     why="a tensor two nodes write is named with both"),
        FrontendCase("graph_output_missing", _structure_refused("output"), "MissingTensorError",
                     ("graph output", "'nowhere'"), why="a graph output nothing produces is named"),
        FrontendCase("graph_input_twice", _structure_refused("duplicate_input"), "DuplicateNameError",
                     ("graph input", "'x'"), why="a graph input listed twice is named"),
        FrontendCase("sequence_of_maps_input", _structure_refused("seq_map"), "UnsupportedFeatureError",
                     ("'pass'", "'pairs'", "seq(map(int64, tensor(float)))"),
                     why="a non-tensor graph input is named with its reader and its ONNX type"),
        FrontendCase("opaque_input", _structure_refused("opaque"), "UnsupportedFeatureError",
                     ("'pass'", "'blob'", "opaque_type"), why="an opaque graph input is named with its reader"),
        FrontendCase("dynamic_dim_named", _dynamic_input(["batch", 3]), "InputShapeError",
                     ("'x'", f"dimension 0 ('batch') {dyn}", "--shape x=1x3"), why="a named dim is dynamic"),
        FrontendCase("dynamic_dim_minus_one", _dynamic_input([2, -1]), "InputShapeError",
                     ("'x'", f"dimension 1 (None) {dyn}", "--shape x=2x1"), why="a -1 dim is dynamic"),
        FrontendCase("dynamic_dims_question_marks", _dynamic_input(["?", 3, "?"]), "InputShapeError",
                     ("'x'", "dimensions 0 ('?'), 2 ('?') are dynamic", "--shape x=1x3x1"), why="'?' dims are dynamic"),
        FrontendCase("dynamic_dim_without_value", _dynamic_input([None, 3]), "InputShapeError",
                     ("'x'", f"dimension 0 (None) {dyn}", "--shape x=1x3"), why="a dim with no value is dynamic"),
        FrontendCase("dynamic_rank", _dynamic_input(None), "InputShapeError",
                     ("'x'", "rank and dimensions are unknown", "--shape x=1x1x1x1"), why="an input with no shape"),
        FrontendCase("shape_inference_refused", _shape_inference_refused(), "ShapeInferenceError",
                     ("'mismatch'", "Incompatible dimensions"), why="a node shape inference rejects is named"),
        FrontendCase("reshape_shape_from_input", _reshape_from_input(), "RuntimeValueError",
                     ("'reshape'", "'s2'", "computed from graph input 's'"),
                     why="a Reshape target computed from an input is refused naming that input once"),
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
