"""The op types the emulated device's kernel library runs, as data both sides consult.

The model-file loader (``zcspec.impl.compiler.model_file.load``) refuses a kernel
task whose op type is not listed here, before any runtime allocates anything; the
device's registry (``zcspec.impl.device.kernels``) refuses to register a kernel
for an op type not listed, and a test checks that every listed op type has one.
HCCL collectives are not kernels (``zcspec.impl.device.hccl.COLLECTIVES``).
"""
from __future__ import annotations

KERNEL_OPS: frozenset[str] = frozenset({
    # elementwise
    "Abs", "Add", "Cast", "Div", "Exp", "LeakyRelu", "Max", "Min", "Mul", "Neg", "Relu", "Sigmoid", "Sqrt", "Sub",
    "Mean", "Sum", "Tanh", "Floor", "Log", "Reciprocal",
    # comparisons and logic (kernels/compare.py): bool outputs
    "And", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "Not", "Or",
    # nn, conv, pooling
    "BatchNormalization", "Conv", "Gemm", "LRN", "MatMul", "Softmax",
    "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "MaxPool",
    # shape and reduction
    "Concat", "ReduceSum", "Slice", "Split", "Transpose",
    # copies (MemcpyAsync, MemcpyAddrAsync tasks) and the benchmark's empty kernel
    "MemcpyAddrAsync", "MemcpyAsync", "NoOp",
    # the join of dynamic-batch branches (copies the selected branch's input)
    "Merge",
    # recurrent layers (Silero VAD's decoder)
    "LSTM", "GRU",
    # activations and elementwise maths of production models (kernels/activation.py)
    "Clip", "Erf", "Gelu", "HardSigmoid", "HardSwish", "Pow", "Where",
    # indexing (kernels/indexing.py), normalisation (norm.py), reductions (reduce.py)
    "Expand", "Gather", "Pad", "Tile",
    "InstanceNormalization", "LayerNormalization",
    "ReduceL2", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
    # spatial (resize.py, conv_transpose.py)
    "ConvTranspose", "Resize",
})


# The recurrent kernels run ONNX's default activations only, in layout 0, without LSTM's input_forget:
# the front end refuses the rest at import, naming the attribute; the kernels check it again.
RECURRENT_ACTIVATIONS: dict[str, tuple[str, ...]] = {"LSTM": ("Sigmoid", "Tanh", "Tanh"), "GRU": ("Sigmoid", "Tanh")}

# The node attribute naming, in order, the operands that decide only values (Clip's min/max, Pad's
# constant value, Resize's roi) which a node takes as its last inputs because they are known only at
# run time: its kernel reads them from those tensors (``kernels.common.value_operand``). An operand not
# named there is the attribute of its name (the front end moves a constant one there), or absent.
VALUE_INPUTS = "_value_inputs"
