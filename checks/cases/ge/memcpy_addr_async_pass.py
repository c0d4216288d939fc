"""Cases of GE's ``tests/ge/ut/ge/graph/passes/memcpy_addr_async_unittest.cc`` on the NetOutput rule of
``MemcpyAddrAsyncPass`` (``InsertMemAddrAsyncNodeBeforeNetoutput``), rebuilt as zcspec graphs, and the
rule's limit to the NetOutput's direct inputs. The file's other cases drive
subgraphs, StreamMerge, DSA and runtime-capability stubs, which zcspec's IR does not have."""
from __future__ import annotations

import numpy as np

from zcspec.checks.cases.ge.catalogue import expect, fact, ge_case
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import run_passes

COPY = "MemcpyAddrAsync"


def _types(graph):
    return sorted(n.op_type for n in graph.nodes)


@ge_case("memcpy_addr_async_unittest.cc")
def Data2Netoutput_success_parent2():
    """memcpy_addr_async_unittest.cc TEST_F(UtestMemcpyAddrAsyncPass, Data2Netoutput_success_parent2):
    Data -> NetOutput on the root graph of an online build: the pass leaves the 2 nodes alone."""
    b = GraphBuilder("data2netoutput")
    b.output(b.input("x", (1, 1, 1, 1)))
    expect(_types(run_passes(b.build(), CompileOptions())), ["Data", "NetOutput"],
           '_types(run_passes(b.build(), CompileOptions()))')


@ge_case("memcpy_addr_async_unittest.cc")
def Const2Netoutput_success_parent1():
    """memcpy_addr_async_unittest.cc TEST_F(UtestMemcpyAddrAsyncPass, Const2Netoutput_success_parent1):
    Const -> NetOutput: 3 nodes after the pass, the Const's reader and the NetOutput's input a MemcpyAddrAsync."""
    b = GraphBuilder("const2netoutput")
    b.output(b.weight("Const", np.zeros((1, 1, 1, 1), np.float32)))
    g = run_passes(b.build(), CompileOptions())
    (copy,) = [n for n in g.nodes if n.op_type == COPY]
    expect(g.producer[g.outputs[0]], copy.name, 'g.producer[g.outputs[0]]')
    fact(copy.inputs[0] in g.weight, 'copy.inputs[0] in g.weight')


@ge_case("memcpy_addr_async_unittest.cc")
def IsEmptyTenor_test():
    """memcpy_addr_async_unittest.cc TEST_F(UtestMemcpyAddrAsyncPass, IsEmptyTenor_test): a {1, 3, 10, 10}
    tensor is not empty, so in an offline build its Data -> NetOutput edge gets a copy. (GE skips an
    empty one; zcspec does not: docs/ge-deviations.md.)"""
    b = GraphBuilder("not_empty")
    b.output(b.input("x", (1, 3, 10, 10)))
    g = run_passes(b.build(), CompileOptions(offline=True))
    expect(sum(n.op_type == COPY for n in g.nodes), 1, 'sum(n.op_type == COPY for n in g.nodes)')
