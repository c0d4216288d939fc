"""TrustOutTensor: drop the output checks that trusted output shapes make redundant (GE: trust_out_tensor.cc
``TrustOutTensor::Run``).

With ``trust_shape_on_out_tensor`` the caller's output shapes are trusted, so an
``EnsureTensorAtOutMemory`` whose tensor data is the ``SplitTensorForOutputData`` of the same
``OutputData:i`` only repeats what that kernel already checked and shared: it is removed.
Ensure nodes on any other path (an AllocModelOutTensor that may have fallen back, a copy
from an input or a weight) stay, since they may still have to copy.
"""
from __future__ import annotations

from zcspec.impl.runtime.v2.exe_graph import ExeGraph
from zcspec.impl.runtime.v2.options import LoweringOptions


def trust_out_tensor(graph: ExeGraph, options: LoweringOptions = LoweringOptions()) -> ExeGraph:
    redundant = []
    for ensure in graph.of_type("EnsureTensorAtOutMemory"):
        src = graph.producer(ensure.inputs[0])
        if src.type == "SplitTensorForOutputData" and len(ensure.inputs) > 1 and src.inputs[0] == ensure.inputs[1]:
            redundant.append(ensure.name)
    if not redundant:
        return graph
    gone = set(redundant)
    return graph.without(gone)
