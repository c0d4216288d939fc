"""The models of verify's front-end cases (checks/frontend_cases.py): small ONNX models built with onnx.helper.

Each builder returns one model: ones the front end must accept as they are (an unsorted diamond,
an If its initializers decide, opset-specific spellings), ones it must fold (Shape and Size of
inputs, splats, multi-output constants, Ifs decided by folding), and ones it must refuse by name
(a cycle, a missing tensor, an unknown op, training-mode ops, bad attributes, dynamic inputs, a
folding that fails). ``cycle_graph_json`` is the one graph JSON text among them (the graph JSON
refusals are checks/graph_json_cases.py). What each import must do is the case table's.
"""
from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import TensorProto, helper

from zcspec.checks.onnx_build import B, F, I64
from zcspec.checks.onnx_build import init as _init
from zcspec.checks.onnx_build import model as _model
from zcspec.checks.onnx_build import node as _n
from zcspec.checks.onnx_build import vi as _vi





def unsorted_nodes() -> onnx.ModelProto:
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


def if_computed_condition(rate: int) -> onnx.ModelProto:
    """An If whose condition is computed from initializers alone (Equal(rate, 16000)), as exported
    models fix a sample rate: the front end must evaluate it and inline the branch it selects."""
    nodes = [helper.make_node("Equal", ["rate", "want"], ["cond"], name="is_16k"),
             helper.make_node("If", ["cond"], ["y"], name="choose", then_branch=_branch("Relu", "then"),
                              else_branch=_branch("Neg", "else"))]
    inits = [_init("rate", np.array(rate, np.int64)), _init("want", np.array(16000, np.int64))]
    return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])], inits)


def batchnorm_opset6(is_test: int | None) -> onnx.ModelProto:
    """A BatchNormalization at opset 6 with ``is_test`` set, or (None) left to its default, 0: training."""
    c = 3
    inits = [_init("scale", np.ones(c, np.float32)), _init("bias", np.zeros(c, np.float32)),
             _init("mean", np.zeros(c, np.float32)), _init("var", np.ones(c, np.float32))]
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn",
                            **({} if is_test is None else {"is_test": is_test}))
    return _model([node], [_vi("x", [1, c, 2, 2])], [_vi("y", [1, c, 2, 2])], inits, opset=6)


def batchnorm_per_activation() -> onnx.ModelProto:
    """Opset 7 with spatial=0: one mean, variance, scale and bias per activation (C, H, W), not per channel."""
    c, h, w = 2, 3, 2
    rng = np.random.default_rng(7)
    inits = [_init(n, (rng.random((c, h, w)) + lo).astype(np.float32))
             for n, lo in (("scale", 0.5), ("bias", -0.5), ("mean", -0.5), ("var", 0.5))]
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="bn",
                            spatial=0, epsilon=1e-3)
    return _model([node], [_vi("x", [1, c, h, w])], [_vi("y", [1, c, h, w])], inits, opset=7)


def cycle() -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="head"),
             helper.make_node("Add", ["a", "c"], ["b"], name="loop_add"),
             helper.make_node("Relu", ["b"], ["c"], name="loop_relu"),
             helper.make_node("Relu", ["c"], ["y"], name="tail")]
    return _model(nodes, [_vi("x", [1, 4])], [_vi("y", [1, 4])])


def missing_tensor() -> onnx.ModelProto:
    return _model([helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")], [_vi("x", [1, 4])], [_vi("y", [1, 4])])


def unknown_op() -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"), helper.make_node("FrobnicateXYZ", ["a"], ["y"], name="frob")]
    return _model(nodes, [_vi("x", [1, 4])], [_vi("y", [1, 4])])


def onnx_ml_op() -> onnx.ModelProto:
    """An op of the ONNX-ML domain (ai.onnx.ml's Scaler) after a Relu: the op table holds default-domain ops only."""
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"),
             helper.make_node("Scaler", ["a"], ["y"], name="scale", domain="ai.onnx.ml", offset=[0.0], scale=[2.0])]
    m = _model(nodes, [_vi("x", [1, 4])], [_vi("y", [1, 4])])
    m.opset_import.append(helper.make_opsetid("ai.onnx.ml", 3))
    return m


def cycle_graph_json() -> str:
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




def shape_gather_concat() -> onnx.ModelProto:
    """Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): the exporters' way of keeping the batch dim.
    Shape of an input folds from its inferred shape (no initializer holds it), the rest by evaluation."""
    nodes = [_n("Shape", ["x"], ["s"], "shape"), _n("Gather", ["s", "i0"], ["d0"], "dim0", axis=0),
             _n("Unsqueeze", ["d0", "ax"], ["d0u"], "as_list"), _n("Concat", ["d0u", "m1"], ["target"], "target", axis=0),
             _n("Reshape", ["x", "target"], ["y"], "flatten")]
    inits = [_init("i0", np.array(0, np.int64)), _init("ax", np.array([0], np.int64)),
             _init("m1", np.array([-1], np.int64))]
    return _model(nodes, [_vi("x", [2, 3, 4])], [_vi("y", [2, 12])], inits)


def shape_slice_and_size() -> onnx.ModelProto:
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


def splat_chain() -> onnx.ModelProto:
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


def split_constant() -> onnx.ModelProto:
    """A Split of an initializer: a folded node with two outputs (no splat shortcut applies)."""
    nodes = [_n("Split", ["k"], ["k0", "k1"], "halves", axis=0), _n("Add", ["x", "k0"], ["a"], "add"),
             _n("Mul", ["a", "k1"], ["y"], "mul")]
    return _model(nodes, [_vi("x", [1, 3])], [_vi("y", [1, 3])], [_init("k", np.arange(6, dtype=np.float32).reshape(2, 3))])


def refolding_chain() -> onnx.ModelProto:
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


def dropout_inference_mask() -> onnx.ModelProto:
    """training_mode=false (ratio 0.3): Dropout is the identity, and its mask output all true."""
    return _dropout(["x", "ratio", "mode"], ["y", "mask"], [_init("ratio", np.array(0.3, np.float32)),
                                                            _init("mode", np.array(False))])


def dropout_training_default_ratio() -> onnx.ModelProto:
    """Training mode with the ratio omitted (the default 0.5)."""
    return _dropout(["x", "", "mode"], ["y"], [_init("mode", np.array(True))])


def dropout_ratio_from_input() -> onnx.ModelProto:
    """Training mode with the ratio a graph input (known only at run time)."""
    return _dropout(["x", "ratio", "mode"], ["y"], [_init("mode", np.array(True))], [_vi("ratio", [])])


def fold_refused(op: str) -> onnx.ModelProto:
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


def if_condition_from_shape(want: int) -> onnx.ModelProto:
    """An If on Equal(Shape(x)[0], want): initializers alone do not decide it (x is an input), folding does
    once shapes are inferred; the import inlines the chosen branch and starts over."""
    nodes = [_n("Shape", ["x"], ["s"], "shape"), _n("Gather", ["s", "i0"], ["d0"], "dim0", axis=0),
             _n("Equal", ["d0", "want"], ["cond"], "is_batch"), _relu_or_neg("cond", "y", "x", "by_batch")]
    return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])],
                  [_init("i0", np.array(0, np.int64)), _init("want", np.array(want, np.int64))])


def nested_if(returns_outer: bool) -> onnx.ModelProto:
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


def if_of_if() -> onnx.ModelProto:
    """An If whose condition is another If's output, listed before it: its condition is decided only once
    the first If is inlined (Not(c0) with c0 true: the second If takes its else branch)."""
    first = _n("If", ["c0"], ["c1"], "first_if",
               then_branch=_graph([helper.make_node("Not", ["c0"], ["nc"])], "first_then", [_vi("nc", [], B)]),
               else_branch=_graph([helper.make_node("Identity", ["c0"], ["ic"])], "first_else", [_vi("ic", [], B)]))
    return _model([_relu_or_neg("c1", "y", "x", "second_if"), first], [_vi("x", [2, 3])], [_vi("y", [2, 3])],
                  [_init("c0", np.array(True))])


def chained_ifs(count: int, by_shape: bool) -> onnx.ModelProto:
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


def if_refused(kind: str) -> onnx.ModelProto:
    if kind == "data":    # Greater(t, t) of ReduceSum(x): the data decides (x reached twice)
        nodes = [_n("ReduceSum", ["x"], ["t"], "total", keepdims=0), _n("Greater", ["t", "t"], ["cond"], "positive"),
                 _relu_or_neg("cond", "y", "x", "by_data")]
        return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])])
    # the condition is a Gather of initializers the reference implementation cannot evaluate
    nodes = [_n("Gather", ["flags", "bad"], ["cond"], "pick_flag", axis=0), _relu_or_neg("cond", "y", "x", "choose")]
    return _model(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])],
                  [_init("flags", np.array([True, False])), _init("bad", np.array(7, np.int64))])


# --- import: files, names, inputs, attributes, optional operands -------------------------------------------

def external_data_missing() -> onnx.ModelProto:
    """An initializer stored in an external file that is not there."""
    w = TensorProto(name="w", data_type=F, dims=[2, 3], data_location=TensorProto.EXTERNAL)
    for key, value in (("location", "weights_missing.bin"), ("offset", "0"), ("length", "24")):
        w.external_data.add(key=key, value=value)
    return _model([_n("Add", ["x", "w"], ["y"], "add")], [_vi("x", [2, 3])], [_vi("y", [2, 3])], [w])


def name_clashes() -> onnx.ModelProto:
    """Node names equal to the graph input (x), to NetOutput, and to the name an unnamed node would get
    (Relu_3); the graph has no name (the file's stem names the IR graph)."""
    nodes = [_n("Relu", ["x"], ["a"], "x"), _n("Neg", ["a"], ["b"], "NetOutput"), _n("Sigmoid", ["b"], ["c"], "Relu_3"),
             helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(nodes, "", [_vi("x", [2, 3])], [_vi("y", [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)


def ir3_initializers() -> onnx.ModelProto:
    """IR 3 lists every initializer among the graph inputs (they are constants, not Data nodes); one
    initializer is read by nothing."""
    inits = [_init("w", np.arange(6, dtype=np.float32).reshape(2, 3)), _init("unused", np.ones(1000, np.float32))]
    return _model([_n("Mul", ["x", "w"], ["y"], "scale")], [_vi("x", [2, 3]), _vi("w", [2, 3]), _vi("unused", [1000])],
                  [_vi("y", [2, 3])], inits, opset=8)


def slice_operands(omitted_middle: bool) -> onnx.ModelProto:
    """Slice(x, starts, ends, "", "") (trailing optional operands omitted) or Slice(x, starts, ends, "", steps)."""
    ins = ["x", "starts", "ends", "", "steps" if omitted_middle else ""]
    inits = [_init("starts", np.array([1], np.int64)), _init("ends", np.array([3], np.int64)),
             _init("steps", np.array([1], np.int64))]
    return _model([_n("Slice", ins, ["y"], "slice")], [_vi("x", [4, 3])], [_vi("y", [2, 3])], inits)


def resize_opset10() -> onnx.ModelProto:
    """Resize-10 is (X, scales): nearest, asymmetric, floor (what the IR node must be told)."""
    node = _n("Resize", ["x", "scales"], ["y"], "upsample", mode="nearest")
    return _model([node], [_vi("x", [1, 1, 2, 3])], [_vi("y", [1, 1, 4, 6])],
                  [_init("scales", np.array([1, 1, 2, 2], np.float32))], opset=10)


def batchnorm_opset15() -> onnx.ModelProto:
    """Opset 15 spells inference mode as training_mode=0 (an attribute the IR drops)."""
    inits = [_init("scale", np.array([1, 2, 3], np.float32)), _init("bias", np.array([0.5, 0, -0.5], np.float32)),
             _init("mean", np.array([0.1, 0.2, 0.3], np.float32)), _init("var", np.array([1, 2, 0.5], np.float32))]
    node = _n("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], "bn", training_mode=0)
    return _model([node], [_vi("x", [1, 3, 2, 2])], [_vi("y", [1, 3, 2, 2])], inits, opset=15)


def lstm_activations(op: str = "LSTM", activations=("Sigmoid", "Tanh", "Relu"),
                     direction: str = "forward") -> onnx.ModelProto:
    """A recurrent node (LSTM or GRU) naming its activations, one list for every direction."""
    hidden, size, dirs = 2, 3, 2 if direction == "bidirectional" else 1
    gates = 4 if op == "LSTM" else 3
    inits = [_init("W", np.full((dirs, gates * hidden, size), 0.1, np.float32)),
             _init("R", np.full((dirs, gates * hidden, hidden), 0.1, np.float32))]
    node = _n(op, ["x", "W", "R"], ["Y"], op.lower(), hidden_size=hidden, activations=list(activations),
              direction=direction)
    return _model([node], [_vi("x", [2, 1, size])], [_vi("Y", [2, dirs, 1, hidden])], inits)


def lstm_hidden_only() -> onnx.ModelProto:
    """An LSTM that names only Y_h: Y omitted before it and Y_c omitted after it (a trailing empty output)."""
    hidden, size = 2, 3
    inits = [_init("W", np.full((1, 4 * hidden, size), 0.1, np.float32)),
             _init("R", np.full((1, 4 * hidden, hidden), 0.1, np.float32))]
    node = _n("LSTM", ["x", "W", "R"], ["", "Y_h", ""], "lstm", hidden_size=hidden)
    return _model([node], [_vi("x", [2, 1, size])], [_vi("Y_h", [1, 1, hidden])], inits)


def bad_attribute(kind: str) -> onnx.ModelProto:
    if kind == "utf8":   # Conv's auto_pad, a string attribute, holding bytes that are not UTF-8
        node = _n("Conv", ["x", "w"], ["y"], "conv", auto_pad=b"\xff\xfe")
        return _model([node], [_vi("x", [1, 1, 3, 3])], [_vi("y", [1, 1, 3, 3])], [_init("w", np.ones((1, 1, 1, 1), np.float32))])
    node = _n("Relu", ["x"], ["y"], "relu")   # a tensor attribute on a node that stays in the graph
    node.attribute.append(helper.make_attribute("table", helper.make_tensor("table", F, [1], [1.0])))
    return _model([node], [_vi("x", [2])], [_vi("y", [2])])


def structure_refused(kind: str) -> onnx.ModelProto:
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


def dynamic_input(shape) -> onnx.ModelProto:
    """x declared with a dynamic shape (no --shape is given): a name, -1, '?', no value, or no shape."""
    x = _vi("x", shape)
    if shape is not None and None in shape:   # make_tensor_value_info writes None as an empty dim
        x.type.tensor_type.shape.dim[shape.index(None)].Clear()
    return _model([_n("Relu", ["x"], ["y"], "relu")], [x], [_vi("y", None)])


def shape_inference_refused() -> onnx.ModelProto:
    return _model([_n("Add", ["x", "k"], ["y"], "mismatch")], [_vi("x", [2, 3])], [_vi("y", [2, 3])],
                  [_init("k", np.ones((4, 5), np.float32))])


def reshape_from_input() -> onnx.ModelProto:
    """Reshape's shape is Add(s, s) of an int64 input s: known only at run time, and s is named once."""
    nodes = [_n("Add", ["s", "s"], ["s2"], "double"), _n("Reshape", ["x", "s2"], ["y"], "reshape")]
    return _model(nodes, [_vi("x", [2, 3]), _vi("s", [2], I64)], [_vi("y", [3, 2])])
