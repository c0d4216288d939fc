"""GE's ``tests/ge/ut/ge/runtime/fast_v2/lowering/model_out_tensor_zero_copy_unittest.cc``
(ModelOutTensorZeroCopyUT), ported.

GE's tests hand-build small execution graphs (``BuildGraph1``..``BuildGraph6``) and run the
ModelOutTensorZeroCopy pass on them. Here the same graphs are hand-built in zcspec's execution-graph
vocabulary (docs/runtime-v2.md): GE's feeds (allocator, shape, stream) become the ``SelectAllocator``
node or attributes; ``CalcTensorSizeFromShape`` is the ``size`` attribute of ``AllocMemory``; GE's
``Launch`` is a ``LaunchKernel``; EnsureTensorAtOutMemory reads (tensor data, ``OutputData:i``,
allocator). The pass is zcspec's pure ``model_out_tensor_zero_copy(graph, options)``; the facts read are
the node types, edges and order of the graph it returns (its artefact). If/Case subgraphs
(``BuildGraph4``..``6``) have no zcspec counterpart: zcspec's execution graphs are flat.
"""
from __future__ import annotations

from collections import Counter

from zcspec.checks.cases.ge.catalogue import expect, fact, ge_case, GeMismatch
from zcspec.impl.runtime.v2.exe_graph import Edge, ExeGraph, ExeNode
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.passes.model_out_tensor_zero_copy import model_out_tensor_zero_copy

ALLOCATOR, OUT = "allocator/hbm", "OutputData"


def _head() -> list[ExeNode]:
    return [ExeNode(OUT, "OutputData", attrs={"names": ("y",)}),
            ExeNode(ALLOCATOR, "SelectAllocator", attrs={"placement": "device"})]


def _ensure(tensor: Edge, after=("launch",)) -> ExeNode:
    return ExeNode("ensure", "EnsureTensorAtOutMemory", (tensor, Edge(OUT), Edge(ALLOCATOR)), 0, after,
                   {"output": "y", "index": 0, "nbytes": 96, "placement": "device", "dtype": "float32",
                    "shape": (24,), "fallback": True})


def _alloc(name: str = "alloc") -> ExeNode:
    return ExeNode(name, "AllocMemory", (Edge(ALLOCATOR),), 1, (), {"raw": 96, "size": 128, "tensor": "y"})


def build_graph1() -> ExeGraph:
    """BuildGraph1: AllocMemory -> Launch, FreeMemory; AllocMemory -> EnsureTensorAtOutMemory(OutputData)."""
    return ExeGraph("graph1", _head() + [
        _alloc(),
        ExeNode("launch", "LaunchKernel", (Edge("alloc"),), 0, (), {"op_type": "Relu", "stream": 0, "task": 0}),
        _ensure(Edge("alloc")),
        ExeNode("free", "FreeMemory", (Edge("alloc"),), 0, ("ensure",), {"tensor": "y"}),
    ]).validate()


def build_graph3() -> ExeGraph:
    """BuildGraph3: as BuildGraph1, with EnsureTensorAtOutMemory reading the memory through an IdentityAddr."""
    return ExeGraph("graph3", _head() + [
        _alloc(),
        ExeNode("launch", "LaunchKernel", (Edge("alloc"),), 0, (), {"op_type": "Relu", "stream": 0, "task": 0}),
        ExeNode("identity", "IdentityAddr", (Edge("alloc"),), 1, (), {"tensor": "y"}),
        _ensure(Edge("identity")),
        ExeNode("free", "FreeMemory", (Edge("alloc"),), 0, ("ensure",), {"tensor": "y"}),
    ]).validate()


def build_graph2() -> ExeGraph:
    """BuildGraph2: the output's memory comes from ``Foo``, a kernel that is not an alloc node."""
    return ExeGraph("graph2", _head() + [
        ExeNode("foo", "Foo", (Edge(ALLOCATOR),), 1),
        ExeNode("launch", "LaunchKernel", (Edge("foo"),), 0, (), {"op_type": "Relu", "stream": 0, "task": 0}),
        _ensure(Edge("foo")),
    ]).validate()


def _types(graph: ExeGraph) -> Counter:
    return Counter(n.type for n in graph.nodes)


def _readers(graph: ExeGraph, name: str) -> list[str]:
    return sorted(graph.node[c].type for c in graph.consumers.get(name, ()))


def _sources(graph: ExeGraph, name: str) -> list[str]:
    return [graph.node[e.node].type for e in graph.node[name].inputs]


@ge_case("model_out_tensor_zero_copy_unittest.cc")
def ZeroCopyAllDone():
    """model_out_tensor_zero_copy_unittest.cc TEST_F(ModelOutTensorZeroCopyUT, ZeroCopyAllDone): BuildGraph1;
    GE expects the AllocMemory turned into one AllocModelOutTensor that reads (allocator, size, OutputData)
    and is read by Launch, FreeMemory and EnsureTensorAtOutMemory, the FreeMemory kept, nothing else
    changed."""
    before = build_graph1()
    after = model_out_tensor_zero_copy(before, LoweringOptions()).validate()
    expect(_types(after), _types(before) - Counter({"AllocMemory": 1}) + Counter({"AllocModelOutTensor": 1}),
           '_types(after)')
    expect(_sources(after, "alloc"), ["SelectAllocator", "OutputData"], '_sources(after, "alloc")')
    expect(_readers(after, "alloc"), ["EnsureTensorAtOutMemory", "FreeMemory", "LaunchKernel"],
           '_readers(after, "alloc")')
    expect(_readers(after, OUT), ["AllocModelOutTensor", "EnsureTensorAtOutMemory"], '_readers(after, OUT)')


@ge_case("model_out_tensor_zero_copy_unittest.cc")
def ZeroCopyAllDoneWithIdentity():
    """model_out_tensor_zero_copy_unittest.cc TEST_F(ModelOutTensorZeroCopyUT, ZeroCopyAllDoneWithIdentity):
    BuildGraph3 (EnsureTensorAtOutMemory reads the memory through IdentityAddr); GE expects the AllocMemory
    behind the IdentityAddr turned into AllocModelOutTensor reading OutputData, read by Launch, FreeMemory
    and IdentityAddr."""
    before = build_graph3()
    after = model_out_tensor_zero_copy(before, LoweringOptions()).validate()
    expect(_types(after), _types(before) - Counter({"AllocMemory": 1}) + Counter({"AllocModelOutTensor": 1}),
           '_types(after)')
    expect(_sources(after, "alloc"), ["SelectAllocator", "OutputData"], '_sources(after, "alloc")')
    expect(_readers(after, "alloc"), ["FreeMemory", "IdentityAddr", "LaunchKernel"], '_readers(after, "alloc")')


@ge_case("model_out_tensor_zero_copy_unittest.cc")
def DoNotFuse_WhenCircle():
    """model_out_tensor_zero_copy_unittest.cc TEST_F(ModelOutTensorZeroCopyUT, DoNotFuse_WhenCircle): the
    shape EnsureTensorAtOutMemory reads comes from GetNewShape, which runs after the Launch that writes the
    memory; GE expects the alloc still turned into AllocModelOutTensor, EnsureTensorAtOutMemory reading
    (GetNewShape, AllocModelOutTensor, ...), and a graph that still sorts topologically. zcspec's shapes are
    attributes: GetNewShape is modelled as an extra input of the Ensure node."""
    nodes = list(build_graph1().without(["free"]).nodes)
    ensure = nodes.pop()
    nodes.append(ExeNode("new_shape", "GetNewShape", (), 1, ("launch",)))
    nodes.append(ExeNode(ensure.name, ensure.type, ensure.inputs + (Edge("new_shape"),), 0, ensure.after, ensure.attrs))
    before = ExeGraph("circle", nodes).validate()
    after = model_out_tensor_zero_copy(before, LoweringOptions()).validate()
    fact(_types(after)["AllocModelOutTensor"] == 1 and "AllocMemory" not in _types(after),
         '_types(after)["AllocModelOutTensor"] == 1 and "AllocMemory" not in _types(after)')
    expect(_sources(after, "ensure"), ["AllocModelOutTensor", "OutputData", "SelectAllocator", "GetNewShape"],
           '_sources(after, "ensure")')


@ge_case("model_out_tensor_zero_copy_unittest.cc")
def DoNotZeroCopy_WhenNoAllocKernel():
    """model_out_tensor_zero_copy_unittest.cc TEST_F(ModelOutTensorZeroCopyUT, DoNotZeroCopy_WhenNoAllocKernel):
    BuildGraph2 (the memory comes from Foo, not an alloc node); GE expects the graph unchanged and OutputData
    read only by NetOutput and EnsureTensorAtOutMemory (zcspec's execution graph has no NetOutput node)."""
    before = build_graph2()
    after = model_out_tensor_zero_copy(before, LoweringOptions())
    expect(after, before, 'after')
    expect(_readers(after, OUT), ["EnsureTensorAtOutMemory"], '_readers(after, OUT)')


@ge_case("model_out_tensor_zero_copy_unittest.cc")
def AlwaysZeroCopy_ChangedToSplitTensor_WhenOptionIsEnable():
    """model_out_tensor_zero_copy_unittest.cc TEST_F(ModelOutTensorZeroCopyUT,
    AlwaysZeroCopy_ChangedToSplitTensor_WhenOptionIsEnable): BuildGraph1 with always_zero_copy; GE expects
    the AllocMemory turned into SplitTensorForOutputData reading OutputData, its FreeMemory gone, and its
    tensor data read by Launch and EnsureTensorAtOutMemory. (GE's SplitTensorForOutputData also reads the
    allocator and size feeds and has an unconnected output 0; zcspec's takes its sizes from attributes and
    has one output: not ported.)"""
    before = build_graph1()
    after = model_out_tensor_zero_copy(before, LoweringOptions(always_zero_copy=True)).validate()
    types = _types(after)
    fact(types["SplitTensorForOutputData"] == 1 and "FreeMemory" not in types and "AllocMemory" not in types,
         'types["SplitTensorForOutputData"] == 1 and "FreeMemory" not in types and "AllocMemory" not in types')
    expect(_sources(after, "alloc"), ["OutputData"], '_sources(after, "alloc")')
    expect(_readers(after, "alloc"), ["EnsureTensorAtOutMemory", "LaunchKernel"], '_readers(after, "alloc")')


@ge_case("model_out_tensor_zero_copy_unittest.cc", row="W5", raises=GeMismatch, reason=(
    "GE: with always_zero_copy and no alloc node behind the output, ModelOutTensorZeroCopy::Run "
    "(runtime/v2/lowering/pass/model_out_tensor_zero_copy.cc, 'Cannot enable zero copy because the alloc node "
    "cannot be found') leaves the graph unchanged: OutputData is read only by NetOutput and "
    "EnsureTensorAtOutMemory; zcspec: inserts a CheckOutputTensor that reads OutputData, so the caller's buffer "
    "is checked up front for every output (docs/runtime-v2.md, deviation 2). At run time GE's Ensure "
    "(memory_copy.cc TensorToOut) would share the input's or the weights' memory into a null buffer, fail a short "
    "one only after the kernels ran, and copy into a host one; zcspec refuses all three before anything runs"))
def AlwaysZeroCopy_NotEnable_WhenZeroCopyMissmatch():
    """model_out_tensor_zero_copy_unittest.cc TEST_F(ModelOutTensorZeroCopyUT,
    AlwaysZeroCopy_NotEnable_WhenZeroCopyMissmatch): BuildGraph2 (no alloc node) with always_zero_copy; GE
    expects exactly the node types of the input graph and OutputData read by NetOutput and
    EnsureTensorAtOutMemory only."""
    before = build_graph2()
    after = model_out_tensor_zero_copy(before, LoweringOptions(always_zero_copy=True))
    expect(_types(after), _types(before), '_types(after)')
    expect(_readers(after, OUT), ["EnsureTensorAtOutMemory"], '_readers(after, OUT)')
