"""The lowering passes of runtime v2, in GE's offline order (offline_optimizer.h ``OfflineOptimizer``), each with
its switch.

A pass is a pure ``(ExeGraph, LoweringOptions) -> ExeGraph`` function; one that finds nothing
to do returns its input.
"""
from __future__ import annotations

from zcspec.impl.runtime.v2.exe_graph import ExeGraph
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.passes.model_out_tensor_zero_copy import model_out_tensor_zero_copy
from zcspec.impl.runtime.v2.passes.trust_out_tensor import trust_out_tensor

PIPELINE = (
    # Outputs computed straight into the caller's buffers (off: zcspec run --no-zero-copy).
    ("ModelOutTensorZeroCopy", model_out_tensor_zero_copy, lambda o: o.zero_copy),
    # Drop an EnsureTensorAtOutMemory that repeats SplitTensorForOutputData's check (trusted shapes).
    ("TrustOutTensor", trust_out_tensor, lambda o: o.trust_shape_on_out_tensor),
)


def run_passes(graph: ExeGraph, options: LoweringOptions = LoweringOptions()) -> ExeGraph:
    for _name, fn, enabled in PIPELINE:
        if enabled(options):
            graph = fn(graph, options).validate()
    return graph
