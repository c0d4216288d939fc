"""Cases of GE's ``tests/ge/ut/ge/graph/passes/memcpy_addr_async_unittest.cc`` on the NetOutput rule of
``MemcpyAddrAsyncPass`` (``InsertMemAddrAsyncNodeBeforeNetoutput``), rebuilt as zcspec graphs, and the
rule's limit to the NetOutput's direct inputs. The file's other cases drive
subgraphs, StreamMerge, DSA and runtime-capability stubs, which zcspec's IR does not have.

The cases are in zcspec.checks.cases.ge.memcpy_addr_async_pass (the catalogue, which ``zcspec verify`` runs too):
here pytest runs each, a match as a plain test and a deviation as a strict xfail with its recorded reason.
"""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.checks.cases.ge.memcpy_addr_async_pass import COPY
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.observe import observe_model_file
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import run_passes
from zcspec.spec.check import check

from tests.helpers.ge_cases import params


@pytest.mark.parametrize("case", params("memcpy_addr_async_pass"))
def test_ge_case(case):
    """One case of GE's test file, run as the catalogue declares it."""
    case.run()


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
