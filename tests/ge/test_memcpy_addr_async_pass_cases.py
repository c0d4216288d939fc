"""Cases of GE's ``tests/ge/ut/ge/graph/passes/memcpy_addr_async_unittest.cc`` on the NetOutput rule of
``MemcpyAddrAsyncPass`` (``InsertMemAddrAsyncNodeBeforeNetoutput``), rebuilt as zcspec graphs, and the
rule's limit to the NetOutput's direct inputs. The file's other cases drive
subgraphs, StreamMerge, DSA and runtime-capability stubs, which zcspec's IR does not have."""
from __future__ import annotations

import numpy as np

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.observe import observe_model_file
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import run_passes
from zcspec.spec.check import check

COPY = "MemcpyAddrAsync"


def _types(graph):
    return sorted(n.op_type for n in graph.nodes)


def test_Data2Netoutput_success_parent2():
    """memcpy_addr_async_unittest.cc TEST_F(UtestMemcpyAddrAsyncPass, Data2Netoutput_success_parent2):
    Data -> NetOutput on the root graph of an online build: the pass leaves the 2 nodes alone."""
    b = GraphBuilder("data2netoutput")
    b.output(b.input("x", (1, 1, 1, 1)))
    assert _types(run_passes(b.build(), CompileOptions())) == ["Data", "NetOutput"]


def test_Const2Netoutput_success_parent1():
    """memcpy_addr_async_unittest.cc TEST_F(UtestMemcpyAddrAsyncPass, Const2Netoutput_success_parent1):
    Const -> NetOutput: 3 nodes after the pass, the Const's reader and the NetOutput's input a MemcpyAddrAsync."""
    b = GraphBuilder("const2netoutput")
    b.output(b.weight("Const", np.zeros((1, 1, 1, 1), np.float32)))
    g = run_passes(b.build(), CompileOptions())
    (copy,) = [n for n in g.nodes if n.op_type == COPY]
    assert g.producer[g.outputs[0]] == copy.name
    assert copy.inputs[0] in g.weight


def test_IsEmptyTenor_test():
    """memcpy_addr_async_unittest.cc TEST_F(UtestMemcpyAddrAsyncPass, IsEmptyTenor_test): a {1, 3, 10, 10}
    tensor is not empty, so in an offline build its Data -> NetOutput edge gets a copy. (GE skips an
    empty one; zcspec does not: docs/ge-deviations.md.)"""
    b = GraphBuilder("not_empty")
    b.output(b.input("x", (1, 3, 10, 10)))
    g = run_passes(b.build(), CompileOptions(offline=True))
    assert sum(n.op_type == COPY for n in g.nodes) == 1


def test_only_the_netoutputs_direct_inputs_get_the_pass_copy():
    """``InsertMemAddrAsyncNodeBeforeNetoutput`` asks for the NetOutput's in-node itself: a Data or a Const
    read through a view (here a Reshape) gets no MemcpyAddrAsync from this pass. The Const's bytes still
    cannot be the user's output buffer: the conflict optimizer copies it (user output x immutable output),
    and the model passes PASS-MEMCPY-ADDR-ASYNC and PASS-LAYOUT-CONFLICT."""
    b = GraphBuilder("through_views")
    x = b.input("x", (2, 4))
    w = b.weight("w", np.zeros((2, 3), np.float32))
    b.output(b.op("Reshape", [x], name="rx", shape=(8,)), b.op("Reshape", [w], name="rw", shape=(6,)))
    options = CompileOptions(offline=True)
    g = run_passes(b.build(), options)
    copies = {n.name: n.attr("_inserted_by", "memcpy_addr_async") for n in g.nodes if n.op_type == COPY}
    assert list(copies.values()) == ["mem_layout_conflict"] and g.producer["rw:0"] in copies
    assert g.producer["rx:0"] == "rx"
    report = check(observe_model_file(encode(build_model(b.build(), options)), g, options))
    assert report.ok and {"PASS-MEMCPY-ADDR-ASYNC", "PASS-LAYOUT-CONFLICT"} & set(report.exercised), report
