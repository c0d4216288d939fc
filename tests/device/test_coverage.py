"""The kernel library covers the op table."""
from impl.compiler.ops import OPS
from impl.device import COLLECTIVES, KERNELS


def test_every_compute_op_has_a_kernel():
    missing = sorted(op for op, i in OPS.items() if i.kind == "compute" and op not in KERNELS)
    assert not missing, f"compute ops without a kernel: {missing}"


def test_every_hccl_op_has_a_collective():
    missing = sorted(op for op, i in OPS.items() if i.kind == "hccl" and op not in COLLECTIVES)
    assert not missing, f"hccl ops without a collective: {missing}"


def test_noop_kernel_exists_for_the_benchmark():
    assert "NoOp" in KERNELS


def test_view_ops_have_no_kernel():
    # A kernel for a view op would hide a compiler that wrongly emits a task for it.
    views = [op for op, i in OPS.items() if i.kind == "view"]
    assert not set(views) & set(KERNELS)
