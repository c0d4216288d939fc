"""The kernel library covers the op table."""
from zcspec.impl.compiler.ops import OPS
from zcspec.impl.device import COLLECTIVES, KERNELS
from zcspec.impl.platform.kernel_ops import KERNEL_OPS


def test_every_compute_op_has_a_kernel():
    missing = sorted(op for op, i in OPS.items() if i.kind == "compute" and op not in KERNELS)
    assert not missing, f"compute ops without a kernel: {missing}"


def test_every_hccl_op_has_a_collective():
    missing = sorted(op for op, i in OPS.items() if i.kind == "hccl" and op not in COLLECTIVES)
    assert not missing, f"hccl ops without a collective: {missing}"


def test_every_declared_kernel_op_has_a_kernel():
    # The model-file loader accepts exactly the op types platform declares; the registry refuses others.
    assert set(KERNELS) == KERNEL_OPS


def test_noop_kernel_exists_for_the_benchmark():
    assert "NoOp" in KERNELS


def test_view_ops_have_no_kernel():
    # A kernel for a view op would hide a compiler that wrongly emits a task for it.
    views = [op for op, i in OPS.items() if i.kind == "view"]
    assert not set(views) & set(KERNELS)


# Ops compared with onnxruntime in test_kernels_ort*.py; a new kernel must join a test there.
ORT_TESTED = {
    "Relu", "Neg", "Abs", "Exp", "Tanh", "Sigmoid", "LeakyRelu", "Sqrt", "Add", "Sub", "Mul", "Div", "Max", "Min",
    "Sum", "Mean", "Cast", "Softmax", "LRN", "BatchNormalization", "Gemm", "MatMul", "Transpose", "Concat", "Conv",
    "MaxPool", "AveragePool", "GlobalAveragePool", "Split", "Slice", "ReduceSum", "MemcpyAsync", "MemcpyAddrAsync",
    "Merge",   # against Identity of the chosen input, tests/device/test_merge.py
    # production-model ops: test_kernels_ort_activation.py, _norm_reduce.py, _resize.py
    "Clip", "HardSigmoid", "HardSwish", "Erf", "Gelu", "Pow", "Where", "Gather", "Expand", "Tile", "Pad",
    "LayerNormalization", "InstanceNormalization", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
    "ReduceL2", "Resize", "ConvTranspose",
    "LSTM", "GRU",   # end to end through both runtimes, tests/device/test_recurrent.py
    # issue 39's registry sweep, end to end through both runtimes: tests/frontend/test_new_ops.py
    "Log", "Reciprocal", "Floor", "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Not", "And", "Or",
    "GlobalMaxPool",
}


def test_every_kernel_is_compared_with_onnxruntime():
    assert set(KERNELS) - {"NoOp"} == ORT_TESTED


def test_in_place_kernels_read_before_they_write():
    """ops.py marks unary/binary ops in-place capable: output 0 may share input 0's memory."""
    import numpy as np

    from zcspec.impl.device import Device, KernelTask, Slot

    dev = Device()
    x = dev.upload(np.array([-1, 2, -3, 4], np.float32))
    w = dev.upload(np.array([10, 10, 10, 10], np.float32))
    relu = KernelTask("relu", "Relu", dev.malloc(16), (Slot("in", (4,)), Slot("out", (4,))))
    add = KernelTask("add", "Add", dev.malloc(24), (Slot("in", (4,)), Slot("in", (4,)), Slot("out", (4,))))
    dev.write_args(relu, [x, x])
    dev.write_args(add, [x, w, x])
    dev.launch_all((relu, add))
    dev.synchronize()
    assert dev.peek(x, (4,), np.float32).tolist() == [10, 12, 10, 14]
