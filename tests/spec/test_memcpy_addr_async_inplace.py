"""PASS-LAYOUT-CONFLICT counts the writers of an in-place output's memory.

Plain explore found the spec flagging a copy the compiler rightly inserts on ascend310p:
Relu works in place over an atomic ReduceSum's output, which feeds the NetOutput. The memory
is written by the ReduceSum's memset, which ascend310p cannot refresh, so the copy is needed;
the spec now reads that from the tasks' slots (an input slot on the bytes of an output slot).
"""
from __future__ import annotations

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.observe import observe_model_file
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.check import check


def _graph():
    b = GraphBuilder("inplace_over_atomic")
    x = b.input("x", (8, 16))
    s = b.op("ReduceSum", [x], shape=(8, 1), axes=(1,), keepdims=1)
    b.output(b.op("Relu", [s], _reuse_input=True))
    return b.build()


def _report(soc: str):
    st = compile_stages(_graph(), CompileOptions(soc=soc))
    return check(observe_model_file(encode(st.model), st.graph))


def test_the_copy_after_an_in_place_output_over_a_memset_is_required():
    report = _report("ascend310p")
    assert "PASS-LAYOUT-CONFLICT" in report.exercised
    assert not report.violations


def test_and_missing_it_is_a_violation():
    from zcspec.checks.faults.registry import active
    with active("layout-conflict-skipped"):
        report = _report("ascend310p")
    assert any(v.invariant_id == "PASS-LAYOUT-CONFLICT" for v in report.violations)
