"""MemcpyAddrAsyncPass: a refreshable copy on the edges GE's pass names.

A MemcpyAddrAsync task keeps its source and destination addresses in its
argument table, so the runtime can point them at the user's buffers on every
execution (GE: memcpy_addr_async_task_info.cc
``MemcpyAddrAsyncTaskInfo::Init``). GE's ``MemcpyAddrAsyncPass::Run``
(``compiler/graph/passes/memory_conflict/memcpy_addr_async_pass.cc``, run from
``GraphManager::OptimizeStage2`` before memory assignment) inserts one

1. nowhere when the SoC has no zero-copy capability (the runtime copies all I/O, MemcpyAddrAsyncPass::Run);
2. between a weight (Const) and the NetOutput it feeds directly: the output must land in
   the user's buffer and weights are read-only;
3. between a Data and the NetOutput it feeds directly, only in offline (ATC) and single-op builds
   (``NeedInsertMemAddrAsyncNodeAfterData``; otherwise runtime v1 copies that output after the run).

As GE's ``InsertMemAddrAsyncNodeBeforeNetoutput`` does, only the NetOutput's direct inputs count (a
weight or Data read through a view is the conflict optimizer's business: user output x immutable
output, passes/mem_layout_conflict.py). GE skips an empty tensor (``IsEmptyTenor``) and counts
heterogeneous builds as offline; zcspec copies an empty tensor too and has no heterogeneous build
(docs/ge-deviations.md).

Inserted nodes are named ``<source>_MemcpyAddrAsync_<n>`` (CreateMemcpyAddrAsyncNode) and take the
stream of the node they serve. GE's StreamMerge and RefData-to-HCCL rules (in
``MemcpyAddrAsyncPass::Run``) have no counterpart: zcspec's IR has neither node. So
``CompileOptions.feature_base_refreshable``, whose only effect on GE's pass is to skip the RefData rule
(``IsFeatureMapRefreshable``), changes nothing here. A graph input or output
bound to a task the SoC cannot refresh is not this pass's business in GE: the
memory-layout conflict optimizer puts a copy there (passes/mem_layout_conflict.py).
"""
from __future__ import annotations

from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.passes.graph_edit import fresh_name, insert_before_output

NAME = "memcpy_addr_async"
OP = "MemcpyAddrAsync"


def _outputs_needing_copy(graph: Graph, offline: bool) -> list[str]:
    out: list[str] = []
    for t in dict.fromkeys(graph.outputs):
        if t in graph.weight or (offline and t in graph.inputs):
            out.append(t)
    return out


def memcpy_addr_async(graph: Graph, options) -> Graph:
    soc = options.profile
    if not soc.zero_copy:
        return graph
    for tensor in _outputs_needing_copy(graph, options.offline or options.single_op):
        src_node = graph.producer.get(tensor)
        stream = graph.node[src_node].stream if src_node else 0
        stem = src_node if src_node and graph.node[src_node].op_type != "Data" else tensor
        graph = insert_before_output(graph, tensor, OP, fresh_name(graph, f"{stem}_{OP}"), stream=stream)
    return graph
