"""TrustOutTensor: the caller's output shapes stand in for the computed ones (GE: trust_out_tensor.cc
``TrustOutTensor::Run``).

With ``trust_shape_on_out_tensor`` GE replaces the InferShape of a node by ``OutputData`` when every
output of that node is a model output (``CanBeDeleted``, ``PrepareDeleteInferShapeNodes``): the
output's ``EnsureTensorAtOutMemory`` then reads the caller's own shape, hands it back unchanged and
copies that shape's bytes (memory_copy.cc ``TensorToOut``). zcspec's shapes are attributes, so the
rewiring is the Ensure's ``trust_shape`` attribute (kernels/outputs.py reads the caller's shape there);
an output no node computes (a model input or a weight passed through, ``infer_shape`` empty) and one
whose node has an output that is not a model output keep the model's shape, as GE keeps their
InferShape (or has none).

An Ensure whose shape is trusted and whose tensor data is the ``SplitTensorForOutputData`` of the same
``OutputData:i`` would only hand the caller's tensor back to itself: it is removed
(``PrepareDeleteSizeNodes``). Every other Ensure stays: it may still have to copy.
"""
from __future__ import annotations

from zcspec.impl.runtime.v2.exe_graph import ExeGraph
from zcspec.impl.runtime.v2.options import LoweringOptions

ENSURE = "EnsureTensorAtOutMemory"


def _reads_output_data(graph: ExeGraph, ensure) -> bool:
    return len(ensure.inputs) > 1 and graph.producer(ensure.inputs[1]).type == "OutputData"


def trusted(graph: ExeGraph) -> set[str]:
    """The Ensure nodes whose shape GE takes from OutputData: the node computing their output has only model
    outputs, each delivered by an Ensure reading OutputData (TrustOutTensor's ``CanBeDeleted``)."""
    delivered = {e.attr("output") for e in graph.of_type(ENSURE) if _reads_output_data(graph, e)}
    return {e.name for e in graph.of_type(ENSURE)
            if _reads_output_data(graph, e) and e.attr("infer_shape")
            and set(e.attr("node_outputs", ())) <= delivered}


def trust_out_tensor(graph: ExeGraph, options: LoweringOptions = LoweringOptions()) -> ExeGraph:
    names = trusted(graph)
    if not names:
        return graph
    redundant = []
    for name in names:
        ensure = graph.node[name]
        src = graph.producer(ensure.inputs[0])
        if src.type == "SplitTensorForOutputData" and src.inputs[0] == ensure.inputs[1]:
            redundant.append(name)
        else:
            graph = graph.replace(ensure.with_attrs(trust_shape=True))
    return graph.without(redundant) if redundant else graph
