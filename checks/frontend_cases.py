"""Crafted ONNX models that verify puts to the front end: what it must accept, and what it must refuse by name.

The zoo and ONNX's node tests are well-formed, topologically sorted files with no control flow, so
verify never saw the front end sort an unsorted graph, fold an ``If`` whose condition initializers
decide, or refuse a cycle (in an ONNX file or a graph JSON file), a missing tensor, an unknown op or
an opset-6 training-mode BatchNormalization: each of those paths could break with verify passing.
Nor had it an opset-6 broadcast with an axis (the rewrite of frontend/legacy_broadcast.py aligning B, or
refusing a node that breaks the opset's rules), nor annotations the graph contradicts or leaves behind.
Each case here is a small model built with onnx.helper (checks/frontend_models.py; the opset 1-6 ones in checks/frontend_legacy_models.py), or a graph JSON
text (no front-end code involved), and an expectation:

- ``imports``: the model imports; verify then runs it through both runtimes against onnxruntime on
  the same file (the differential run every ONNX model of the zoo gets), so an import that
  reorders, drops or mis-folds a node shows in the outputs;
- ``refused``: the import raises the named error class, and its message names each culprit given.

``frontend_cases()`` lists them; ``check_refusal(case, error)`` says what is wrong with a refusal
(None when it is the expected one).
"""
from __future__ import annotations

import onnx

from zcspec.checks.frontend_case import FrontendCase
from zcspec.checks.frontend_legacy_models import (
    annotation_refused, annotations_judged, legacy_broadcast_alignment, legacy_broadcast_in_branch,
    legacy_dims_unknown, legacy_refused, numpy_broadcast_from_opset_7, uninferred_opset,
)
from zcspec.checks.frontend_models import (
    bad_attribute, batchnorm_opset15, batchnorm_opset6,
    batchnorm_per_activation, chained_ifs, cycle, cycle_graph_json, dropout_inference_mask,
    dropout_ratio_from_input, dropout_training_default_ratio, dynamic_input, external_data_missing, fold_refused,
    if_computed_condition, if_condition_from_shape, if_of_if, if_refused, ir3_initializers,
    lstm_activations, lstm_hidden_only,
    missing_tensor, name_clashes, nested_if, refolding_chain, reshape_from_input, resize_opset10,
    shape_gather_concat, shape_inference_refused, shape_slice_and_size, slice_operands, splat_chain, split_constant,
    structure_refused, unknown_op, onnx_ml_op, unsorted_nodes,
)
from zcspec.checks.graph_json_cases import graph_json_cases


def frontend_cases() -> tuple[FrontendCase, ...]:
    return (
        FrontendCase("unsorted_nodes", unsorted_nodes(), why="nodes listed consumers first import in dependency order"),
        FrontendCase("if_condition_from_initializers_then", if_computed_condition(16000),
                     why="an If whose initializers decide the condition becomes its then branch"),
        FrontendCase("if_condition_from_initializers_else", if_computed_condition(8000),
                     why="... and its else branch when the condition is false"),
        FrontendCase("batchnorm_opset6_training", batchnorm_opset6(0), "UnsupportedFeatureError", ("'bn'", "training mode"),
                     why="before opset 7, is_test=0 selects training mode, which the op table refuses"),
        FrontendCase("batchnorm_opset6_training_by_default", batchnorm_opset6(None), "UnsupportedFeatureError",
                     ("'bn'", "training mode"), why="... and is_test left out is 0, its default: training mode too"),
        FrontendCase("batchnorm_opset6_inference", batchnorm_opset6(1),
                     why="is_test=1 at opset 6 is inference: it imports and runs"),
        FrontendCase("batchnorm_opset7_per_activation", batchnorm_per_activation(),
                     why="before opset 9, spatial=0 normalises each activation with its own statistics"),
        FrontendCase("cycle", cycle(), "CycleError", ("'loop_add'", "'loop_relu'"), why="a cycle is named by its nodes"),
        FrontendCase("graph_json_cycle", cycle_graph_json(), "CycleError", ("'loop_add'", "'loop_relu'"),
                     why="a graph JSON file with a cycle is refused naming its nodes"),
        FrontendCase("missing_tensor", missing_tensor(), "MissingTensorError", ("'ghost'", "'adder'"),
                     why="a tensor nothing writes is named with its reader"),
        FrontendCase("onnx_ml_op", onnx_ml_op(), "UnsupportedOpError", ("'scale'", "ONNX-ML's classical"),
                     why="an op of another domain is named with its node and what the domain is"),
        FrontendCase("unknown_op", unknown_op(), "UnsupportedOpError", ("'frob'", "FrobnicateXYZ"),
                     why="an op outside the op table is named with its node"),
        *_folding_cases(), *_control_cases(), *_import_cases(), *_legacy_broadcast_cases(), *graph_json_cases(),
    )


def _folding_cases() -> tuple[FrontendCase, ...]:
    return (
        FrontendCase("fold_shape_gather_concat", shape_gather_concat(),
                     why="Shape of an input folds from its inferred shape; Gather, Unsqueeze and Concat of it fold"),
        FrontendCase("fold_shape_start_end_and_size", shape_slice_and_size(),
                     why="opset-15 Shape takes dims start..end; Size folds to the element count"),
        FrontendCase("fold_splat_chain", splat_chain(),
                     why="ConstantOfShape, views and elementwise ops of splats fold to splats; a splat with a dense "
                         "array folds in full"),
        FrontendCase("fold_split_constant", split_constant(), why="a constant node with two outputs folds both"),
        FrontendCase("fold_alternates_with_inference", refolding_chain(),
                     why="a Shape of a tensor shaped only after folding folds after the next inference"),
        FrontendCase("dropout_inference_mask_output", dropout_inference_mask(),
                     why="training_mode=false makes Dropout the identity and its mask output all true"),
        FrontendCase("dropout_training_default_ratio", dropout_training_default_ratio(),
                     "UnsupportedFeatureError", ("'drop'", "training mode", "ratio=0.5"),
                     why="training mode with the default ratio 0.5 is random"),
        FrontendCase("dropout_ratio_from_input", dropout_ratio_from_input(),
                     "RuntimeValueError", ("'drop'", "operand 'ratio'", "graph input 'ratio'"),
                     why="in training mode a ratio known only at run time decides what Dropout computes"),
        FrontendCase("random_never_folds", fold_refused("RandomNormal"), "UnsupportedOpError", ("'noise'", "'RandomNormal'"),
                     why="a random op is not folded (it changes per run) and is outside the op table"),
        FrontendCase("non_standard_domain_never_folds", fold_refused("Gelu"), "UnsupportedOpError",
                     ("'gelu_ms'", "'Gelu' of domain 'com.microsoft'", "default-domain ops only"),
                     why="a com.microsoft Gelu is onnxruntime's op, not ONNX's Gelu of the op table: refused before "
                         "folding (no reference implementation folds it, no schema types its output)"),
        FrontendCase("fold_failure_names_node", fold_refused("Gather"), "FoldError", ("'oob'", "Gather", "IndexError"),
                     why="a constant node whose evaluation fails is named with its op and the error"),
    )


def _control_cases() -> tuple[FrontendCase, ...]:
    return (
        FrontendCase("if_condition_from_shape_then", if_condition_from_shape(2),
                     why="an If on a Shape of an input is inlined once folding decides it (then branch)"),
        FrontendCase("if_condition_from_shape_else", if_condition_from_shape(3),
                     why="... and its else branch when the shape says so"),
        FrontendCase("nested_if", nested_if(False),
                     why="inlining an If renames its branch's tensors in a nested If's branches too"),
        FrontendCase("nested_if_returns_enclosing_tensor", nested_if(True),
                     why="a nested branch output named after an enclosing branch's tensor is renamed with it "
                         "(onnxruntime refuses such a file: the outputs are held to onnx.reference on the graph)"),
        FrontendCase("if_condition_from_if", if_of_if(),
                     why="an If whose condition another If computes is inlined after that one"),
        FrontendCase("sixty_five_constant_ifs", chained_ifs(65, by_shape=False),
                     why="past 64 Ifs inlined before inference, the rest are inlined after folding"),
        FrontendCase("too_many_ifs_to_inline", chained_ifs(65, by_shape=True), "UnsupportedFeatureError",
                     ("'if64'", "more than 64 If nodes"),
                     why="the number of Ifs inlined after folding is bounded (each re-runs the import)"),
        FrontendCase("if_condition_from_data", if_refused("data"), "DataDependentControlError",
                     ("'by_data'", "'cond'", "--value ('x')"),
                     why="an If the data decides is refused, naming the inputs to freeze"),
        FrontendCase("if_condition_fold_fails", if_refused("fold"), "FoldError", ("'pick_flag'", "Gather"),
                     why="a condition the reference implementation cannot evaluate is left to folding, which names it"),
    )


def _import_cases() -> tuple[FrontendCase, ...]:
    dyn = "is dynamic and not fixed"
    return (
        FrontendCase("external_data_missing", external_data_missing(), "OnnxFileError", ("weights_missing.bin",),
                     why="a missing external-data file is named"),
        FrontendCase("no_graph", onnx.ModelProto(), "OnnxFileError", ("no_graph.onnx", "holds no graph"),
                     why="a file without a graph is refused naming the file"),
        FrontendCase("node_name_clashes", name_clashes(),
                     why="node names clashing with an input, NetOutput or a generated name get suffixes"),
        FrontendCase("ir3_initializers_as_inputs", ir3_initializers(),
                     why="initializers listed as inputs are constants, an unused one is dropped"),
        FrontendCase("slice_trailing_operands_omitted", slice_operands(False),
                     why="trailing empty optional operands are dropped"),
        FrontendCase("slice_middle_operand_omitted", slice_operands(True), "UnsupportedFeatureError",
                     ("'slice'", "optional input 3 is omitted"),
                     why="an omitted optional operand before a given one cannot be positional in the IR"),
        FrontendCase("resize_opset10", resize_opset10(), why="Resize-10's (X, scales) form maps to the IR's scales"),
        FrontendCase("batchnorm_opset15_training_mode_0", batchnorm_opset15(),
                     why="opset 15's training_mode=0 is inference mode"),
        FrontendCase("lstm_custom_activations", lstm_activations(), "UnsupportedFeatureError",
                     ("'lstm'", "activations=('Sigmoid', 'Tanh', 'Relu')"),
                     why="recurrent activations other than the defaults are refused"),
        FrontendCase("lstm_default_activations_named", lstm_activations(
                         activations=("Sigmoid", "Tanh", "Tanh") * 2, direction="bidirectional"),
                     why="an LSTM naming ONNX's default activations (f, g, h for each direction) imports and runs"),
        FrontendCase("gru_default_activations_named", lstm_activations("GRU", ("Sigmoid", "Tanh"), "reverse"),
                     why="... and a GRU naming its defaults (f, g)"),
        FrontendCase("lstm_hidden_state_only", lstm_hidden_only(),
                     why="a recurrent node naming only Y_h, Y omitted before it and Y_c after it, imports with the "
                         "omitted Y named for the IR"),
        FrontendCase("attribute_not_utf8", bad_attribute("utf8"), "AttributeError_", ("'conv'", "'auto_pad'", "not UTF-8"),
                     why="a string attribute that is not UTF-8 is named"),
        FrontendCase("tensor_attribute_on_kept_node", bad_attribute("tensor"), "AttributeError_",
                     ("'relu'", "'table'", "TENSOR"), why="a tensor attribute the IR cannot carry is named"),
        FrontendCase("tensor_written_twice", structure_refused("twice"), "GraphError", ("'t'", "first", "second"),
                     why="a tensor two nodes write is named with both"),
        FrontendCase("graph_output_missing", structure_refused("output"), "MissingTensorError",
                     ("graph output", "'nowhere'"), why="a graph output nothing produces is named"),
        FrontendCase("graph_input_twice", structure_refused("duplicate_input"), "DuplicateNameError",
                     ("graph input", "'x'"), why="a graph input listed twice is named"),
        FrontendCase("sequence_of_maps_input", structure_refused("seq_map"), "UnsupportedFeatureError",
                     ("'pass'", "'pairs'", "seq(map(int64, tensor(float)))"),
                     why="a non-tensor graph input is named with its reader and its ONNX type"),
        FrontendCase("opaque_input", structure_refused("opaque"), "UnsupportedFeatureError",
                     ("'pass'", "'blob'", "opaque_type"), why="an opaque graph input is named with its reader"),
        FrontendCase("dynamic_dim_named", dynamic_input(["batch", 3]), "InputShapeError",
                     ("'x'", f"dimension 0 ('batch') {dyn}", "--shape x=1x3"), why="a named dim is dynamic"),
        FrontendCase("dynamic_dim_minus_one", dynamic_input([2, -1]), "InputShapeError",
                     ("'x'", f"dimension 1 (None) {dyn}", "--shape x=2x1"), why="a -1 dim is dynamic"),
        FrontendCase("dynamic_dims_question_marks", dynamic_input(["?", 3, "?"]), "InputShapeError",
                     ("'x'", "dimensions 0 ('?'), 2 ('?') are dynamic", "--shape x=1x3x1"), why="'?' dims are dynamic"),
        FrontendCase("dynamic_dim_without_value", dynamic_input([None, 3]), "InputShapeError",
                     ("'x'", f"dimension 0 (None) {dyn}", "--shape x=1x3"), why="a dim with no value is dynamic"),
        FrontendCase("dynamic_rank", dynamic_input(None), "InputShapeError",
                     ("'x'", "rank and dimensions are unknown", "--shape x=1x1x1x1"), why="an input with no shape"),
        FrontendCase("shape_inference_refused", shape_inference_refused(), "ShapeInferenceError",
                     ("'mismatch'", "Incompatible dimensions"), why="a node shape inference rejects is named"),
        FrontendCase("reshape_shape_from_input", reshape_from_input(), "RuntimeValueError",
                     ("'reshape'", "'s2'", "computed from graph input 's'"),
                     why="a Reshape target computed from an input is refused naming that input once"),
    )


def _legacy_broadcast_cases() -> tuple[FrontendCase, ...]:
    """Opset 1-6 broadcasting (frontend/legacy_broadcast.py) and the file's annotations (onnx_shapes.judge_annotations).
    onnxruntime has no opset-6 Add: the opset-6 cases that import are held to onnx.reference on the imported graph."""
    legacy, unknown = "LegacyBroadcastError", "UnsupportedFeatureError"
    return (
        FrontendCase("legacy_broadcast_axis_alignment", legacy_broadcast_alignment(),
                     why="opset-6 broadcast=1 with an axis aligns each kind of B: an initializer in place, a shared one "
                         "as suffixed copies, a computed or Constant B through an Unsqueeze before its reader"),
        FrontendCase("numpy_broadcast_from_opset_7", numpy_broadcast_from_opset_7(),
                     why="opset 7 broadcasts as numpy does: a suffix B with no broadcast attribute, a smaller A, "
                         "both ways at once and Gemm's one-row C import as they are (the legacy rules end at 6)"),
        FrontendCase("legacy_broadcast_in_if_branch", legacy_broadcast_in_branch(),
                     why="opset-6 broadcasting nodes in the branches of an If folding decides are aligned before "
                         "the If is inlined"),
        FrontendCase("relu_opset1_without_shape_inference", uninferred_opset(), unknown,
                     ("'relu'", "opsets 1-5", "no shape inference"),
                     why="ONNX gives Relu-1 no shape inference: no static shape, so the opset is refused by name"),
        FrontendCase("legacy_broadcast_shapes_differ", legacy_refused("shapes_differ"), legacy,
                     ("'plus'", "broadcast=0 (the default)", "(2, 3, 4)", "(4,)", "must be equal"),
                     why="without broadcast=1, opsets 1-6 want A and B of one shape"),
        FrontendCase("legacy_broadcast_b_higher_rank", legacy_refused("higher_rank"), legacy,
                     ("'times'", "'k' (2, 2, 3, 4)", "higher rank"), why="B is broadcast to A, never A to B"),
        FrontendCase("legacy_broadcast_negative_axis", legacy_refused("negative_axis"), legacy,
                     ("'minus'", "axis=-1", "from 0 to 2"), why="opsets 1-6 give a negative axis no meaning"),
        FrontendCase("legacy_broadcast_dim_mismatch", legacy_refused("dim_mismatch"), legacy,
                     ("'divide'", "axis=1", "dim 0 of B 'k' (4,) is 4", "dim 1 of A 'x'"),
                     why="a dim of B that lines up with another A dim and is not 1 is named"),
        FrontendCase("legacy_gemm_c_not_m_by_n", legacy_refused("gemm_c"), legacy,
                     ("'gemm'", "broadcast=0", "C 'c' (4,) must be (M, N), here (2, 4)"),
                     why="Gemm-6's C without broadcast=1 is (M, N)"),
        FrontendCase("legacy_broadcast_rank_unknown", legacy_refused("rank_unknown"), unknown,
                     ("'times'", "operands of unknown shape", "rank of 'kt' is unknown"),
                     why="a B whose rank only folding fixes cannot be checked before the rewrite"),
        FrontendCase("legacy_broadcast_dims_unknown", legacy_refused("dims_unknown"), unknown,
                     ("'times'", "axis=1", "B 'kt' is (?,)"), why="... nor one whose dims only folding fixes"),
        *(FrontendCase(f"legacy_{op.lower()}_dims_unknown", legacy_dims_unknown(op), unknown,
                       ("'legacy'", "axis=1", "B 'kt' is (?,)"),
                       why=f"... for each op whose opsets 1-6 broadcast by axis: {op}")
          for op in ("Add", "Sub", "Div", "Pow", "And", "Or", "Equal", "Greater", "Less")),
        FrontendCase("legacy_xor_dims_unknown", legacy_refused("xor_dims_unknown"), unknown,
                     ("'differ'", "Xor", "broadcast=0 (the default)", "B 'kt' is (?, ?)"),
                     why="... with broadcast=0 too, on an op the op table lists no legacy entry for (Add's applies)"),
        FrontendCase("legacy_gemm_c_rank_unknown", legacy_refused("gemm_c_unknown"), unknown,
                     ("'gemm'", "C 'cr' is of unknown rank", "'y' is (2, 4)"),
                     why="... nor a Gemm-6 C whose rank only folding fixes"),
        FrontendCase("legacy_model_with_foreign_ops", legacy_refused("foreign_ops"), "UnsupportedOpError",
                     ("'FrobnicateXYZ_2'", "'FrobnicateXYZ'"),
                     why="the rewrite passes over an op ONNX lacks and a contrib op, and the Unsqueeze it inserts "
                         "does not rename the unnamed node after it: the import names that node by its place"),
        FrontendCase("op_without_schema_at_opset", legacy_refused("no_schema_yet"), "UnsupportedFeatureError",
                     ("'gelu'", "from opset 20 on"),
                     why="Gelu in an opset-6 model: ONNX has no such op before opset 20 (op_limits' first opsets); "
                         "it used to import when an annotation gave its output a shape"),
        FrontendCase("annotations_stale_leftover_and_shapeless", annotations_judged(),
                     why="a contradicting value_info is ignored, one naming no tensor and a non-tensor one are "
                         "passed over, an output declared without a shape adds nothing"),
        FrontendCase("declared_element_type_differs", annotation_refused("elem"), "DeclaredTypeError",
                     ("'y'", "'relu'", "int64", "float"),
                     why="a declared element type the graph contradicts is refused, as onnxruntime refuses it"),
        FrontendCase("undefined_element_type", annotation_refused("undefined"), "UnknownDTypeError",
                     ("'x'", "undefined"), why="an input of element type UNDEFINED that no node types is named"),
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
