"""Runtime v2 variants: the always_zero_copy promise (GE: model_out_tensor_zero_copy.cc,
build_tensor.cc ``SplitTensorForOutputData``) broken twice, and the default mode's zero copy refused."""
from __future__ import annotations

import contextlib
from unittest import mock

import attrs

from zcspec.checks.faults.strategies import execution_scenarios
from zcspec.checks.faults.variant import Variant, swap
from zcspec.impl.runtime.v2 import kernels
from zcspec.impl.runtime.v2.kernels import outputs


def _azc_fallback():
    """ModelOutTensorZeroCopy ignores always_zero_copy: outputs get AllocModelOutTensor, which falls
    back to runtime memory for a bad buffer instead of failing (ModelOutTensorZeroCopy::Run,
    SplitTensorForOutputData)."""
    def make(pipeline):
        def lower_as_default(fn):
            return lambda graph, options: fn(graph, attrs.evolve(options, always_zero_copy=False))
        return tuple((name, lower_as_default(fn) if name == "ModelOutTensorZeroCopy" else fn, on)
                     for name, fn, on in pipeline)
    return swap("zcspec.impl.runtime.v2.passes", "PIPELINE", make)


def _azc_size_unchecked():
    """SplitTensorForOutputData forgets the size check: a too-small caller buffer is shared."""
    def make(validate):
        def wrong(node, tensor):
            if tensor is not None and tensor.addr and tensor.size < node.attr("raw"):
                return
            validate(node, tensor)
        return wrong
    return swap("zcspec.impl.runtime.v2.kernels.outputs", "_validate", make)


@contextlib.contextmanager
def _padded_size_required():
    """AllocModelOutTensor shares the caller's buffer only if it holds the *padded* size
    (align32 + 32, CalibrateTensorSize) instead of the raw size: a correctly sized buffer is never used, the output
    goes to runtime memory and is handed over or copied."""
    real = outputs.alloc_model_out_tensor

    def wrong(frame, node, args):
        _allocator, tensor = args
        if tensor is not None and tensor.addr and tensor.size < node.attr("size"):
            tensor.size = 0  # "too small": the real kernel then allocates
        return real(frame, node, args)

    table = {"AllocModelOutTensor": wrong}
    with mock.patch.dict(kernels.KERNELS, table), mock.patch.dict(outputs.KERNELS, table):
        yield


VARIANTS = (
    Variant("v2-azc-fallback", "runtime_v2",
            "a fallback allocation under always_zero_copy: a bad output buffer is replaced by runtime memory",
            _azc_fallback, lambda n: execution_scenarios(("v2-azc",), max_nodes=n), ("V2-AZC-NO-ALLOC", "V2-AZC-REJECT")),
    Variant("v2-azc-size-unchecked", "runtime_v2",
            "always_zero_copy shares a caller buffer smaller than the output (the size check forgotten)",
            _azc_size_unchecked, lambda n: execution_scenarios(("v2-azc",), max_nodes=n), ("V2-AZC-REJECT", "V2-NO-OVERRUN")),
    Variant("v2-padded-size-required", "runtime_v2",
            "zero copy refused for a raw-sized output buffer: the check compares with the padded size",
            _padded_size_required, lambda n: execution_scenarios(("v2",), max_nodes=n), ("V2-OUT-IS-USER",)),
)
