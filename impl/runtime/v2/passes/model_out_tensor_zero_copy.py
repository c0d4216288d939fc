"""ModelOutTensorZeroCopy: outputs computed straight into the caller's buffers (GE:
model_out_tensor_zero_copy.cc `ModelOutTensorZeroCopy::Run`).

For every ``EnsureTensorAtOutMemory`` fed by ``OutputData:i``, follow its tensor-data input
back through ``IdentityAddr`` nodes (whole-tensor aliases) to its producer. When that is an
``AllocMemory`` (``AllocMemHbm``), rewrite it:

- default: type ``AllocModelOutTensor``, with ``OutputData:i`` as an extra input, so at run
  time it shares the caller's buffer when it can (kernels/outputs.py) and its FreeMemory
  only drops the graph's reference;
- ``always_zero_copy``: type ``SplitTensorForOutputData`` with ``OutputData:i`` as its only
  input (the allocator chain is pruned: an allocator node nobody reads is removed), its
  guarding ``FreeMemory`` removed (no reference is taken, SplitTensorForOutputData). zcspec also moves it to
  just after ``OutputData``: it depends on nothing else, so the caller's buffers are all
  checked before any memory is allocated or any task launched (a failure then leaves
  every buffer and the device's accounting as they were).

A producer that is not an alloc node (a model input, a weight, a ``ViewAddr`` piece of a
larger tensor) gets no zero copy: EnsureTensorAtOutMemory copies, as in GE ("Cannot enable
zero copy because the alloc node cannot be found"). Under always_zero_copy zcspec still checks
that output's buffer up front with a ``CheckOutputTensor`` node after ``OutputData`` (GE would
accept a null buffer there and hand over the input's memory), so the promise holds for every output. An alloc node already rewritten for an
earlier output (two outputs sharing memory) is left alone, so the second output is copied.
GE follows If/Case branches into subgraphs; zcspec's execution graphs are flat.
"""
from __future__ import annotations

from zcspec.impl.runtime.v2.exe_graph import Edge, ExeGraph, ExeNode
from zcspec.impl.runtime.v2.options import LoweringOptions

ALLOC_TYPES = ("AllocMemory", "AllocMemHbm")
ENSURE = "EnsureTensorAtOutMemory"
ALLOCATOR_TYPES = ("SelectAllocator", "GetExternalAllocator")
HOISTED = ("SplitTensorForOutputData", "CheckOutputTensor")


def find_alloc(graph: ExeGraph, edge: Edge) -> ExeNode | None:
    """The alloc node whose memory ``edge`` is, looking through IdentityAddr nodes; None if none."""
    node = graph.producer(edge)
    while node.type == "IdentityAddr":
        node = graph.producer(node.inputs[0])
    return node if node.type in ALLOC_TYPES else None


def _output_edge(graph: ExeGraph, ensure: ExeNode) -> Edge | None:
    edge = ensure.inputs[1] if len(ensure.inputs) > 1 else None
    return edge if edge is not None and graph.producer(edge).type == "OutputData" else None


def model_out_tensor_zero_copy(graph: ExeGraph, options: LoweringOptions = LoweringOptions()) -> ExeGraph:
    changed = False
    for ensure in graph.of_type(ENSURE):
        out = _output_edge(graph, ensure)
        alloc = find_alloc(graph, ensure.inputs[0]) if out is not None else None
        output = {"output": ensure.attr("output", out and out.node), "index": out and out.index}
        if alloc is None:
            if out is not None and options.always_zero_copy:
                graph = _check_output(graph, ensure, out, output, options)
                changed = True
            continue
        if options.always_zero_copy:
            graph = _split_for_output(graph, alloc, out, output, options)
        else:
            new = ExeNode(alloc.name, "AllocModelOutTensor", alloc.inputs + (out,), alloc.outputs, alloc.after,
                          dict(alloc.attrs) | output | {"check_size": not options.ge_compat})
            graph = graph.replace(new)
        changed = True
    return _prune_allocators(graph) if changed else graph


def _split_for_output(graph: ExeGraph, alloc: ExeNode, out: Edge, output: dict, options: LoweringOptions) -> ExeGraph:
    # GE does not check the placement here (an open to-do in GE's build_tensor.cc `SplitTensorForOutputData`); zcspec does,
    # except under ge_compat.
    attrs_ = dict(alloc.attrs) | output | {"check_placement": not options.ge_compat}
    new = ExeNode(alloc.name, "SplitTensorForOutputData", (out,), alloc.outputs, (), attrs_)
    guards = [n.name for n in graph.of_type("FreeMemory") if n.inputs and n.inputs[0] == Edge(alloc.name)]
    graph = graph.replace(new).without(guards)
    return graph.moved_after(alloc.name, _hoist_anchor(graph, out.node, skip=alloc.name))


def _check_output(graph: ExeGraph, ensure: ExeNode, out: Edge, output: dict, options: LoweringOptions) -> ExeGraph:
    """always_zero_copy, output not produced by an alloc: the caller's buffer is still checked, up front."""
    attrs_ = output | {"raw": ensure.attr("nbytes"), "check_placement": not options.ge_compat}
    check = ExeNode(f"check/{output['output']}", "CheckOutputTensor", (out,), 0, (), attrs_)
    nodes = list(graph.nodes)
    nodes.insert(graph.position[_hoist_anchor(graph, out.node)] + 1, check)
    return ExeGraph(graph.name, nodes)


def _hoist_anchor(graph: ExeGraph, output_data: str, skip: str = "") -> str:
    """The node to put the next hoisted check after: OutputData or the last check already hoisted
    behind it, so the checks run in output order."""
    i = graph.position[output_data]
    nodes = graph.nodes
    while i + 1 < len(nodes) and nodes[i + 1].type in HOISTED and nodes[i + 1].name != skip:
        i += 1
    return nodes[i].name


def _prune_allocators(graph: ExeGraph) -> ExeGraph:
    unused = [n.name for n in graph.of_type(*ALLOCATOR_TYPES) if not graph.consumers.get(n.name)]
    return graph.without(unused) if unused else graph
