"""Continuous outputs (GE's ATTR_NAME_CONTINUOUS_OUTPUT, fused HCCL): one block, back to back, never zero copy.

GE's ``BlockMemAssigner::ApplyContinuousMemory`` gives a node with ``continuous_output`` and two or more
outputs one block of the sum of its outputs' 512-aligned sizes, at output 0, never zero copy
(block_mem_assigner.cc); ``AssignContinuousOutputMemory`` puts output i at output 0's offset plus the
aligned sizes before it (graph_mem_assigner.cc). In a static graph the memory-layout conflict optimizer
puts an Identity between such an output and the NetOutput, so the model output is zero copy.
"""
from __future__ import annotations

import pytest

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.errors import GraphError
from zcspec.impl.compiler.memory.errors import PlanError
from zcspec.impl.compiler.memory.options import PlanOptions
from zcspec.impl.compiler.memory.plan import plan_memory
from zcspec.impl.compiler.observe import observe_plan
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.check import check
from tests.helpers.plan_check import check_plan

N = 100  # (1, N) float32: 400 bytes, GE size 448, one 512-byte block


def _fused(flag=True, *, outputs=2, reuse=None):
    b = GraphBuilder("fused")
    x, y = b.input("x", (1, N)), b.input("y", (1, N))
    extra = {"_reuse_input": reuse} if reuse is not None else {}
    outs = b.op("HcomAllReduce", [b.op("Relu", [x], name="rx"), b.op("Relu", [y], name="ry")], name="ar",
                outputs=[((1, N), "float32")] * outputs, continuous_output=flag, **extra)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    b.output(b.op("Neg", [outs[0]], name="n0"), *outs)
    return b.build()


@pytest.mark.parametrize("strategy", ["ge", "compact"])
def test_continuous_outputs_share_one_block_back_to_back_and_are_never_zero_copy(strategy):
    g = _fused()
    p = plan_memory(g, PlanOptions(strategy=strategy))
    a0, a1 = p.tensor("ar:0"), p.tensor("ar:1")
    assert a0.block == a1.block and a0.region == a1.region == "feature_map"
    assert a1.offset == a0.offset + 512
    assert not a0.zero_copy and not a1.zero_copy
    assert check_plan(g, p) == []
    report = check(observe_plan(g, p, "ascend910b"))
    assert "MEM-CONT-OUTPUT" in report.exercised and report.ok, str(report)


def test_without_the_attribute_each_output_is_its_own_zero_copy_block():
    p = plan_memory(_fused(False))
    a0, a1 = p.tensor("ar:0"), p.tensor("ar:1")
    assert a0.block != a1.block and a1.zero_copy


def test_the_compiler_copies_continuous_graph_outputs_so_the_model_outputs_are_zero_copy():
    for strategy in ("ge", "compact"):
        st = compile_stages(_fused(), CompileOptions(strategy=strategy))
        g = st.graph
        assert g.outputs == ("n0:0", "ar:0", "ar:1")
        for out in ("ar:0", "ar:1"):
            (copy,) = [n for n in g.nodes if out in n.outputs]
            assert copy.attr("_inserted_by") == "mem_layout_conflict" and st.plan.tensor(out).zero_copy
        src0 = g.node["ar"].outputs[0]
        assert g.node["n0"].inputs == (src0,) and not st.plan.tensor(src0).zero_copy


def test_a_one_output_node_with_the_attribute_is_planned_as_an_ordinary_op():
    p = plan_memory(_fused(outputs=1))
    assert p.tensor("ar:0").zero_copy and p.tensor("ar:0").region == "zero_copy"


def _feeding(order):
    """ar (continuous outputs ar:0, ar:1) -> ar2 (HCCL continuous inputs) reading them in ``order``."""
    b = GraphBuilder("co_ci")
    x = b.input("x", (1, N))
    outs = b.op("HcomAllReduce", [b.op("Relu", [x], name="r0"), b.op("Abs", [x], name="r1")], name="ar",
                outputs=[((1, N), "float32")] * 2, continuous_output=True)
    b.output(*b.op("HcomAllReduce", [outs[k] for k in order], name="ar2", outputs=[((1, N), "float32")] * 2))
    return b.build()


def test_a_continuous_output_feeding_a_continuous_input_in_order_shares_its_block_and_out_of_order_is_copied():
    """GE's ContinuousMemMng: outputs read in their own order are the inputs' memory, one block, no copy
    (tests/memory/test_continuous_out_in.py has the header, tail and chained shapes); read in another order,
    the planner refuses and the conflict pass copies every shared input (IsContinuousOutAndInConflict)."""
    g = _feeding((0, 1))
    p = plan_memory(g)
    assert p.tensor("ar:1").offset == p.tensor("ar:0").offset + 512 and check_plan(g, p) == []
    assert compile_stages(g, CompileOptions()).graph.node["ar2"].inputs == ("ar:0", "ar:1")
    swapped = _feeding((1, 0))
    with pytest.raises(PlanError, match="continuous inputs of 'ar2' .* share ar:1, ar:0 in an order no one block"):
        plan_memory(swapped)
    st = compile_stages(swapped, CompileOptions())
    assert st.graph.node["ar2"].inputs == ("identity_0_ar2_MemLayoutConflict_0:0",
                                           "identity_1_ar2_MemLayoutConflict_1:0")


def test_a_view_with_the_attribute_keeps_its_pieces_and_a_bad_flag_is_named():
    # All outputs reuse the input (GE: skipped by ApplyContinuousMemory): an outer-axis Split view stays a view.
    b = GraphBuilder("split_view")
    x = b.input("x", (4, N))
    parts = b.op("Split", [b.op("Relu", [x], name="r")], name="split", outputs=[((2, N), "float32")] * 2, axis=0,
                 split=(2, 2), continuous_output=True)
    b.output(*[b.op("Neg", [t]) for t in parts])
    st = compile_stages(b.build(), CompileOptions())
    p = st.plan
    assert p.tensor("split:0").alias_of == p.tensor("split:1").alias_of == "r:0"
    with pytest.raises(GraphError, match="node 'ar' has continuous_output=1: it must be True or False"):
        _fused(1)
