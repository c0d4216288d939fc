"""The op table: what the compiler, planner and runtimes need to know about each op type.

This is data, not code paths (STYLE.md: GE's rules are data the planner
consults). Every op the IR accepts is listed here; validation rejects others.
The device's kernel library must have a kernel for every op whose ``kind`` is
``compute`` or ``hccl`` (a test checks it).

Fields:
- ``kind``: ``data`` (graph input), ``netoutput``, ``compute`` (one kernel task),
  ``view`` (no task; output 0 aliases input 0's memory), ``hccl`` (a collective),
  ``variable`` (fixed-address state).
- ``inputs``/``outputs``: (min, max) arity; ``None`` as max means variadic.
- ``continuous_input``: ``"padding"`` (each input its own 512-aligned block, laid out
  in input order: HCCL; GE's block_mem_assigner.cc `AssignContinuousBlocks`) or ``"nopadding"`` (one block holding all
  inputs back to back: PhonyConcat; `CalNodeAsContinuousInputMaxLife`), else ``None``.
- ``atomic``: outputs are accumulated into, so the runtime must clean (memset) them
  first (GE: block_mem_assigner.cc `IsAtomicOutputMemory`, graph_mem_assigner.cc
  `AssignAtomicOutputMemory`, `SetAtomicCleanOffset`).
- ``inplace``: with node attribute ``_reuse_input=True``, output 0 shares input 0's
  block (a ref/in-place output, GE: block_mem_assigner.cc `ApplyOutMemory`); ``_reuse_input=k`` (an int) makes
  it share input k's, as GE's ``_output_inplace_ability`` pairs may name any input
  (``graph_utils.cc`` ``GraphUtils::GetSupportInplaceOutput``, called by ``mem_inplace.cc``).
  ``_inplace_ability=(out, in, ...)``: GE's optional in-place pairs, kept only where ``ProcessInplace`` would keep them (aliases.py).
  validate.py checks both attributes.
- ``zero_copy``: whether the op's tasks support address refresh (IsNodeSupportZeroCopy).

``Merge`` joins the branches of a dynamic-batch graph (GE's Merge after a Case /
StreamSwitchN; GE: multi_batch_pass.cc `MultiBatchPass::SetCaseLabel`): input i comes from the branch its
attribute ``labels[i]``
names, and the output is the input of the branch chosen at execution. It carries no
``_batch_label`` itself (it runs in every execution); validate.py checks its attributes.
"""
from __future__ import annotations

import attrs


@attrs.frozen
class OpInfo:
    op_type: str
    kind: str = "compute"
    inputs: tuple[int, int | None] = (1, 1)
    outputs: tuple[int, int | None] = (1, 1)
    continuous_input: str | None = None
    atomic: bool = False
    inplace: bool = False
    zero_copy: bool = True


def _ops(*infos: OpInfo) -> dict[str, OpInfo]:
    return {i.op_type: i for i in infos}


_UNARY = ("Relu", "Sigmoid", "Tanh", "Neg", "Abs", "Exp", "Sqrt", "LeakyRelu", "Softmax", "LRN", "Cast",
          "Log", "Reciprocal", "Floor", "Not")
_BINARY = ("Add", "Sub", "Mul", "Div", "And", "Or")
# Comparisons: the output is bool whatever the inputs' type, so it never shares an input's block.
_COMPARISONS = ("Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual")
_VIEWS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout")

OPS: dict[str, OpInfo] = _ops(
    OpInfo("Data", kind="data", inputs=(0, 0)),
    OpInfo("NetOutput", kind="netoutput", inputs=(1, None), outputs=(0, 0)),
    OpInfo("Variable", kind="variable", inputs=(0, 0)),
    *(OpInfo(op, inplace=True) for op in _UNARY),
    *(OpInfo(op, inputs=(2, 2), inplace=True) for op in _BINARY),
    *(OpInfo(op, inputs=(2, 2)) for op in _COMPARISONS),
    # Reshape and friends may carry their shape operand as a second input (ONNX style).
    *(OpInfo(op, kind="view", inputs=(1, 2), outputs=(1, 2)) for op in _VIEWS),
    # Variadic elementwise ops (ONNX opset 8+ broadcasting, any number of inputs from 1).
    *(OpInfo(op, inputs=(1, None), inplace=True) for op in ("Max", "Min")),
    OpInfo("Sum", inputs=(1, None)),
    OpInfo("Mean", inputs=(1, None)),
    OpInfo("Conv", inputs=(2, 3)),
    OpInfo("BatchNormalization", inputs=(5, 5), outputs=(1, 5)),
    OpInfo("Concat", inputs=(1, None)),
    OpInfo("MaxPool", outputs=(1, 2)),
    OpInfo("AveragePool"),
    OpInfo("GlobalAveragePool"),
    OpInfo("GlobalMaxPool"),
    OpInfo("Gemm", inputs=(2, 3)),
    OpInfo("MatMul", inputs=(2, 2)),
    OpInfo("Transpose"),
    OpInfo("Split", inputs=(1, 2), outputs=(1, None)),
    OpInfo("Slice", inputs=(1, 5)),
    OpInfo("ReduceSum", inputs=(1, 2), atomic=True),
    OpInfo("PhonyConcat", kind="view", inputs=(1, None), continuous_input="nopadding"),
    OpInfo("MemcpyAsync"),
    OpInfo("MemcpyAddrAsync"),
    OpInfo("Merge", inputs=(1, None)),
    # Production-model ops (PP-OCR, Silero VAD). The operands that decide a shape (Pad's pads, Resize's
    # scales/sizes, the reductions' axes, Expand's shape, Tile's repeats) are attributes after import
    # (frontend/onnx_nodes.py OPERANDS), hence one input; an operand that decides only values (Clip's
    # min/max, Pad's constant value, Resize's roi) is an attribute when constant, else an extra input
    # its kernel reads at run time (node attribute ``_value_inputs``): Clip takes up to 3, Pad and Resize 2.
    OpInfo("Clip", inputs=(1, 3), inplace=True),
    *(OpInfo(op, inplace=True) for op in ("HardSigmoid", "HardSwish", "Erf", "Gelu")),
    OpInfo("Pow", inputs=(2, 2), inplace=True),
    OpInfo("Where", inputs=(3, 3)),
    *(OpInfo(op) for op in ("Expand", "Tile")),
    *(OpInfo(op, inputs=(1, 2)) for op in ("Pad", "Resize")),
    OpInfo("Gather", inputs=(2, 2)),
    OpInfo("LayerNormalization", inputs=(2, 3), outputs=(1, 3)),
    OpInfo("InstanceNormalization", inputs=(3, 3)),
    *(OpInfo(op) for op in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2")),
    OpInfo("ConvTranspose", inputs=(2, 3)),
    # Recurrent layers: omitted optional inputs are dropped, the positions of the given ones kept in the
    # node attribute ``_present_inputs`` (frontend/onnx_nodes.py).
    OpInfo("LSTM", inputs=(3, 8), outputs=(1, 3)),
    OpInfo("GRU", inputs=(3, 6), outputs=(1, 2)),
    OpInfo("HcomAllReduce", kind="hccl", inputs=(1, None), outputs=(1, None), continuous_input="padding"),
    OpInfo("HcomAllGather", kind="hccl", continuous_input="padding"),
    OpInfo("HcomBroadcast", kind="hccl", inputs=(1, None), outputs=(1, None), continuous_input="padding"),
)


def info(op_type: str) -> OpInfo | None:
    return OPS.get(op_type)


def is_view(node) -> bool:
    """No task: every output aliases input 0's memory (at ``view_offsets(node)``).

    View-kind ops always are; a Split or Slice along the outermost axis becomes one
    when a pass marks it ``_view=True`` (see passes/outer_axis_views.py).
    """
    i = OPS.get(node.op_type)
    return i is not None and (i.kind == "view" or bool(node.attr("_view", False)))


def view_offsets(node) -> tuple[int, ...]:
    """Byte offset of each output of a view inside input 0 (0 for plain views)."""
    offsets = node.attr("_view_offsets")
    return tuple(offsets) if offsets is not None else (0,) * len(node.outputs)


def task_kinds(node) -> tuple[str, ...]:
    """The device task kinds a node's tasks have (impl/platform/soc.py TASK_KINDS); () for no task."""
    i = OPS.get(node.op_type)
    if i is None or is_view(node) or i.kind in ("data", "netoutput", "variable"):
        return ()
    if i.kind == "hccl":
        return ("hccl",)
    if node.op_type == "MemcpyAsync":
        return ("memcpy",)
    if node.op_type == "MemcpyAddrAsync":
        return ("memcpy_addr",)
    return ("memset", "kernel") if i.atomic else ("kernel",)


def inplace_pairs(node) -> tuple[tuple[int, int], ...]:
    """(output index, input index) pairs the node may run in place, in preference order (GE's optional
    ``_output_inplace_ability``, node attribute ``_inplace_ability``: the pairs flattened, ``(out, in, out,
    in, ...)``, as attributes are flat tuples); aliases.py decides which hold. A pair naming no output or
    input of the node is ignored, as GE's ``ProcessInplace`` ignores it."""
    i = OPS.get(node.op_type)
    flat = node.attr("_inplace_ability", ())
    if i is None or not i.inplace or not flat:
        return ()
    return tuple((o, k) for o, k in zip(flat[0::2], flat[1::2])
                 if 0 <= o < len(node.outputs) and 0 <= k < len(node.inputs))


def ref_outputs(node) -> tuple[tuple[int, int], ...]:
    """(output index, input index) pairs whose memory is shared (in-place / ref outputs)."""
    i = OPS.get(node.op_type)
    reuse = node.attr("_reuse_input", False)
    if i is None or not i.inplace or reuse is False or reuse is None:
        return ()
    return ((0, 0),) if reuse is True else ((0, reuse),)
