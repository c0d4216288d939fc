"""The front-end cases' models of opset 1-6 broadcasting (impl/compiler/frontend/legacy_broadcast.py) and of
the file's own shape annotations: ONNX models the front end must rewrite, or refuse by name
(checks/frontend_cases.py holds what each import must do)."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from zcspec.checks.onnx_build import B, F, I64
from zcspec.checks.onnx_build import init as _init
from zcspec.checks.onnx_build import model as _model
from zcspec.checks.onnx_build import node as _n
from zcspec.checks.onnx_build import vi as _vi


# --- opset 1-6 broadcasting (frontend/legacy_broadcast.py) and the file's annotations ----------------------
# onnxruntime runs no opset-6 Add (its kernels start at opset 7): an opset-6 case that imports is held to
# onnx.reference on the imported graph, which shares a wrong rewrite. So the shapes below are chosen for a
# wrong alignment to fail the run (B's dims line up with no other dims of A: the kernels refuse operands that
# do not broadcast; opset-6 shape inference gives A's shape without looking at B) rather than only to change
# the outputs; tests/checks/test_frontend_reach.py holds the outputs to numpy's reading of the opset-6 rules.

def _opset6(nodes, inputs, outputs, inits=()) -> onnx.ModelProto:
    return _model(nodes, inputs, outputs, inits, opset=6)


def legacy_broadcast_alignment() -> onnx.ModelProto:
    """Opset-6 broadcast=1 with an axis leaving A's trailing dims uncovered, for each kind of B: an initializer
    only this node reads (given its aligned dims in place), one two nodes read (each gets an aligned copy; a
    tensor already holds the first copy's name, so it takes a suffix), a computed tensor and a Constant
    node's output (each through an Unsqueeze put before its reader); an unnamed node after the insertions
    keeps its import name."""
    rng = np.random.default_rng(6)
    nodes = [_n("Add", ["x", "k"], ["h1"], "add_k", broadcast=1, axis=1),        # k (3, 4) -> (3, 4, 1)
             _n("Mul", ["h1", "w"], ["h2"], "mul_w", broadcast=1, axis=1),       # w (3,) read twice: copies
             _n("Identity", ["x"], ["mul_w/aligned_w"], "clash"),                # the name the copy wants
             _n("Sub", ["h2", "w"], ["h3"], "sub_w", broadcast=1, axis=1),
             _n("Exp", ["c"], ["ce"], "exp_c"),
             helper.make_node("Sigmoid", ["h3"], ["h4"]),                        # unnamed: Sigmoid_5
             _n("Div", ["h4", "ce"], ["h5"], "div_c", broadcast=1, axis=0),      # computed (2, 3) -> (2, 3, 1, 1)
             _n("Constant", [], ["kc"], "kc", value=helper.make_tensor("kc", F, [4], [1, 2, 3, 4])),
             _n("Add", ["h5", "kc"], ["h6"], "add_kc", broadcast=1, axis=2),     # a Constant's (4,) -> (4, 1)
             helper.make_node("Add", ["h6", "mul_w/aligned_w"], ["y"])]           # unnamed: Add_9
    inits = [_init("k", rng.standard_normal((3, 4)).astype(np.float32)), _init("w", np.array([0.5, 2, -1], np.float32))]
    return _opset6(nodes, [_vi("x", [2, 3, 4, 5]), _vi("c", [2, 3])], [_vi("y", [2, 3, 4, 5])], inits)


def numpy_broadcast_from_opset_7() -> onnx.ModelProto:
    """The first opset of numpy-style broadcasting: what opsets 1-6 refuse or read otherwise must import as is
    at opset 7. An Add whose B is a suffix of A with no ``broadcast`` attribute (opset 6: shapes that differ),
    a Sub whose A is the smaller (opset 6: B may never be larger), a Mul broadcasting both ways ((3, 1) by
    (1, 4)), and a Gemm whose C is one row (opset 7 broadcasts C unidirectionally)."""
    rng = np.random.default_rng(7)
    nodes = [_n("Add", ["x", "k"], ["a"], "plus"),                # (2, 3, 4) + (4,)
             _n("Sub", ["k", "a"], ["s"], "minus"),               # (4,) - (2, 3, 4)
             _n("Mul", ["col", "row"], ["m"], "outer"),           # (3, 1) * (1, 4) -> (3, 4)
             _n("Add", ["s", "m"], ["t"], "plus_outer"),          # (2, 3, 4) + (3, 4)
             _n("Reshape", ["t", "flat"], ["t2"], "flatten"),     # (6, 4)
             _n("Gemm", ["t2", "w", "c"], ["y"], "gemm")]         # (6, 4) x (4, 5) + (5,)
    inits = [_init("k", rng.standard_normal(4).astype(np.float32)),
             _init("col", rng.standard_normal((3, 1)).astype(np.float32)),
             _init("row", rng.standard_normal((1, 4)).astype(np.float32)),
             _init("flat", np.array([6, 4], np.int64)),
             _init("w", rng.standard_normal((4, 5)).astype(np.float32)),
             _init("c", rng.standard_normal(5).astype(np.float32))]
    return _model(nodes, [_vi("x", [2, 3, 4])], [_vi("y", [6, 5])], inits, opset=7)


def legacy_broadcast_in_branch() -> onnx.ModelProto:
    """Opset-6 broadcasting nodes inside the branches of an If that folding decides (Shape(x)[0] == 2):
    the rewrite runs before the If is inlined, so it aligns a branch initializer and a branch's computed
    tensor (an Unsqueeze inserted in the branch), then the import inlines the then branch."""
    then = helper.make_graph(
        [_n("Add", ["x", "kt"], ["t1"], "add_kt", broadcast=1, axis=0),                 # kt (2,) -> (2, 1)
         _n("ReduceMax", ["x"], ["r"], "row_max", axes=[1], keepdims=0),                  # (2,)
         _n("Sub", ["t1", "r"], ["t_out"], "sub_r", broadcast=1, axis=0)],              # r -> Unsqueeze (2, 1)
        "then", [], [_vi("t_out", [2, 3])], [_init("kt", np.array([1.5, -2], np.float32))])
    other = helper.make_graph([_n("Mul", ["x", "ke"], ["e_out"], "mul_ke", broadcast=1, axis=0)], "else", [],
                              [_vi("e_out", [2, 3])], [_init("ke", np.array([3, 4], np.float32))])
    nodes = [_n("Shape", ["x"], ["s"], "shape"), _n("Gather", ["s", "i0"], ["d0"], "dim0", axis=0),
             _n("Equal", ["d0", "want"], ["cond"], "is_two"),
             _n("If", ["cond"], ["y"], "choose", then_branch=then, else_branch=other)]
    return _opset6(nodes, [_vi("x", [2, 3])], [_vi("y", [2, 3])],
                   [_init("i0", np.array(0, np.int64)), _init("want", np.array(2, np.int64))])


def _unknown_before_folding(src: str, out: str, op: str) -> list:
    """``op`` (Reshape: rank unknown; Tile: rank known, dims unknown) of ``src`` by Abs(Shape(src)): ONNX's
    data propagation does not see through Abs, so ``out``'s shape is known only after folding."""
    return [_n("Shape", [src], [f"{src}_dims"], f"{src}_shape"),
            _n("Abs", [f"{src}_dims"], [f"{src}_abs"], f"{src}_abs"),
            _n(op, [src, f"{src}_abs"], [out], f"{src}_{op.lower()}")]


def legacy_dims_unknown(op: str) -> onnx.ModelProto:
    """Opset-6 ``op`` with broadcast=1, axis=1 and a B whose dims only folding fixes (as ``dims_unknown``, for
    each op whose opset 1-6 form broadcasts this way): bool operands for And and Or, a bool result for the
    comparisons (Equal-1 compares integers and bools only: int32 operands)."""
    elem = B if op in ("And", "Or") else TensorProto.INT32 if op == "Equal" else F
    out = B if op in ("And", "Or", "Equal", "Greater", "Less") else F
    k = np.ones(3, {B: bool, F: np.float32}.get(elem, np.int32))
    node = _n(op, ["x", "kt"], ["y"], "legacy", broadcast=1, axis=1)
    return _opset6(_unknown_before_folding("k", "kt", "Tile") + [node], [_vi("x", [2, 3, 4], elem)],
                   [_vi("y", [2, 3, 4], out)], [_init("k", k)])


def legacy_refused(kind: str) -> onnx.ModelProto:
    """An opset-6 model breaking (or hiding from) the opset's broadcasting rules, by ``kind``."""
    x, y, ones = _vi("x", [2, 3, 4]), _vi("y", [2, 3, 4]), (lambda *s: np.ones(s, np.float32))
    gemm_io = dict(inputs=[_vi("a", [2, 3])], outputs=[_vi("y", [2, 4])])
    times = _n("Mul", ["x", "kt"], ["y"], "times", broadcast=1, axis=1)
    if kind == "shapes_differ":      # broadcast absent (0): A and B must be equal
        return _opset6([_n("Add", ["x", "k"], ["y"], "plus")], [x], [y], [_init("k", ones(4))])
    if kind == "higher_rank":        # B is broadcast to A, never A to B
        return _opset6([_n("Mul", ["x", "k"], ["y"], "times", broadcast=1)], [x], [y], [_init("k", ones(2, 2, 3, 4))])
    if kind == "negative_axis":      # numpy's -1 means nothing to opsets 1-6
        return _opset6([_n("Sub", ["x", "k"], ["y"], "minus", broadcast=1, axis=-1)], [x], [y], [_init("k", ones(4))])
    if kind == "dim_mismatch":       # B (4,) from axis 1 lines up with A's 3
        return _opset6([_n("Div", ["x", "k"], ["y"], "divide", broadcast=1, axis=1)], [x], [y], [_init("k", ones(4))])
    if kind == "gemm_c":             # Gemm-6's C is (M, N) without broadcast=1
        return _opset6([_n("Gemm", ["a", "b", "c"], ["y"], "gemm")], **gemm_io,
                       inits=[_init("b", ones(3, 4)), _init("c", ones(4))])
    if kind == "rank_unknown":
        return _opset6(_unknown_before_folding("k", "kt", "Reshape") + [times], [x], [y], [_init("k", ones(3))])
    if kind == "dims_unknown":
        return _opset6(_unknown_before_folding("k", "kt", "Tile") + [times], [x], [y], [_init("k", ones(3))])
    if kind == "xor_dims_unknown":   # broadcast=0 (the default) on an op outside the op table's legacy entries
        return _opset6(_unknown_before_folding("k", "kt", "Tile") + [_n("Xor", ["x", "kt"], ["y"], "differ")],
                       [_vi("x", [2, 3], B)], [_vi("y", [2, 3], B)], [_init("k", np.ones((2, 3), bool))])
    if kind == "gemm_c_unknown":
        gemm = _n("Gemm", ["a", "b", "cr"], ["y"], "gemm", broadcast=1)
        return _opset6(_unknown_before_folding("c", "cr", "Reshape") + [gemm], **gemm_io,
                       inits=[_init("b", ones(3, 4)), _init("c", ones(4))])
    if kind == "foreign_ops":
        # the rewrite inserts an Unsqueeze before 'divide' and passes over an op ONNX does not know (unnamed: the
        # import calls it FrobnicateXYZ_2, its place in the file, insertions or not) and a contrib op
        m = _opset6([_n("Exp", ["c"], ["ce"], "exp_c"), _n("Div", ["x", "ce"], ["d"], "divide", broadcast=1, axis=0),
                     helper.make_node("FrobnicateXYZ", ["d"], ["f"]),
                     helper.make_node("Gelu", ["f"], ["y"], name="gelu_ms", domain="com.microsoft")],
                    [x, _vi("c", [2, 3])], [y])
        m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
        return m
    # "no_schema_yet": Gelu (ONNX's from opset 20) in an opset-6 model: no schema types its output
    return _opset6([_n("Add", ["x", "k"], ["a"], "plus", broadcast=1), _n("Gelu", ["a"], ["g"], "gelu")],
                   [x], [_vi("g", None)], [_init("k", ones(4))])


def annotations_judged() -> onnx.ModelProto:
    """The file's annotations the graph does not follow: a value_info of another shape (stale: ignored), one
    naming no tensor of the graph (a rewrite's leftover), one of a sequence type (not a tensor's: not
    judged), and the output declared with no shape (nothing to trust). onnxruntime runs it too."""
    m = _model([_n("Relu", ["x"], ["h"], "relu"), _n("Neg", ["h"], ["y"], "neg")], [_vi("x", [2, 3])], [_vi("y", None)])
    seq = helper.make_value_info("gone_seq", helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [2])))
    m.graph.value_info.extend([_vi("h", [4, 5]), _vi("gone", [3]), seq])
    return m


def annotation_refused(kind: str) -> onnx.ModelProto:
    if kind == "elem":    # the output declared int64, the graph computes float (onnxruntime refuses it too)
        return _model([_n("Relu", ["x"], ["y"], "relu")], [_vi("x", [2, 3])], [_vi("y", [2, 3], I64)])
    # "undefined": an input of element type UNDEFINED passed straight to the output (no node checks its type)
    x = _vi("x", [2])
    x.type.tensor_type.elem_type = TensorProto.UNDEFINED
    return _model([], [x], [x])


def uninferred_opset() -> onnx.ModelProto:
    """A Relu at opset 1, whose schema (with its consumed_inputs attribute) has no shape inference: the front
    end's table of such opsets (impl/compiler/op_limits.py, read from onnx.defs) must refuse it by name."""
    return _model([_n("Relu", ["x"], ["y"], "relu")], [_vi("x", [2, 3])], [_vi("y", [2, 3])], opset=1)
