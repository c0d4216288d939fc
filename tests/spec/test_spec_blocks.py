"""Block invariants: targeted cases beyond the documented examples."""
from __future__ import annotations

import attrs

from zcspec.spec.examples.build import plan
from zcspec.spec.observables import ContinuousGroup
from zcspec.spec.registry import get

FM, ZC, W = "feature_map", "zero_copy", "weight"


def test_zc_nomerge_an_alias_in_a_zero_copy_block_is_not_a_merge():
    p = plan([("y", ZC, 0, 512, 0, 1), ("v", ZC, 0, 512, 1, 1, "y")])
    assert get("MEM-ZC-NOMERGE").violations(p) == ()


def test_zc_noreuse_flag_must_match_block_and_region():
    p = plan([("x", ZC, 0, 512, 0, 1)])
    bad = attrs.evolve(p, tensors=(attrs.evolve(p.tensors[0], zero_copy=False),))
    messages = [v.message for v in get("MEM-ZC-NOREUSE").violations(bad)]
    assert any("block" in m for m in messages) and any("region" in m for m in messages)


def test_zc_noreuse_holds_whatever_the_lifetimes():
    # t is alive long after x's last read, yet may not use x's bytes: they are the user's buffer.
    p = plan([("x", ZC, 0, 512, 0, 0), ("t", ZC, 256, 512, 5, 6)])
    assert any("'x'" in v.message or "'x'" in v.culprit for v in get("MEM-ZC-NOREUSE").violations(p))


def test_atomic_noreuse_a_merged_block_is_reported_even_without_byte_overlap():
    p = plan([("acc", FM, 0, 512, 1, 1), ("t", FM, 512, 512, 2, 2)], blocks=[("acc", "t")], atomic=("acc",))
    assert any(v.culprit == "block 0" for v in get("MEM-ATOMIC-NOREUSE").violations(p))


def test_fixed_noreuse_weights_are_fixed_without_being_listed():
    p = plan([("w1", W, 0, 512, 0, 3), ("w2", W, 256, 512, 0, 3)])
    assert get("MEM-FIXED-NOREUSE").violations(p)
    assert "MEM-FIXED-NOREUSE" in {i.id for i in [get("MEM-FIXED-NOREUSE")] if i.exercised(p)}


def test_cont_input_order_matters_and_zero_copy_inputs_are_reported():
    group = (ContinuousGroup("allreduce", ("q", "p")),)
    p = plan([("p", FM, 0, 100, 0, 1), ("q", FM, 512, 100, 0, 1)], continuous_groups=group)
    assert any(v.culprit == "tensor 'p'" for v in get("MEM-CONT-INPUT").violations(p))  # wrong order
    z = plan([("x", ZC, 0, 100, 0, 1), ("q", ZC, 512, 100, 0, 1)], continuous_groups=(ContinuousGroup("c", ("x", "q")),))
    assert any("zero-copy" in v.message for v in get("MEM-CONT-INPUT").violations(z))


def test_ws_owner_wrong_step_is_reported():
    p = plan([("a", FM, 0, 512, 0, 2), ("ws", FM, 512, 512, 2, 2)], workspaces={"ws": "n1"})
    (v,) = get("MEM-WS-OWNER").violations(p)
    assert v.values == {"owner": "n1", "step": 1}


def test_cont_input_nopadding_pieces_when_known_and_bounds_when_not():
    # PhonyConcat on a non-leading axis: 16 rows of 4 bytes, so input 1 starts 4 bytes in (GE's
    # AssignContinuousInputMemory).
    rs = [("out", FM, 0, 128, 1, 2), ("p", FM, 0, 64, 0, 1, "out"), ("q", FM, 4, 64, 0, 1, "out")]
    unknown = plan(rs, continuous_groups=(ContinuousGroup("concat", ("p", "q"), padding=False),))
    assert get("MEM-CONT-INPUT").violations(unknown) == ()
    known = plan(rs, continuous_groups=(ContinuousGroup("concat", ("p", "q"), padding=False, pieces=(4, 4)),))
    assert get("MEM-CONT-INPUT").violations(known) == ()
    wrong = plan(rs, continuous_groups=(ContinuousGroup("concat", ("p", "q"), padding=False, pieces=(64, 64)),))
    assert get("MEM-CONT-INPUT").violations(wrong)
    backwards = plan(rs, continuous_groups=(ContinuousGroup("concat", ("q", "p"), padding=False),))
    assert get("MEM-CONT-INPUT").violations(backwards)


def test_atomic_output_may_share_its_continuous_groups_block():
    """GE lays an atomic output that feeds a continuous input inside that group's block (ApplyMemory,
    IsAtomicOutputMemory)."""
    from zcspec.impl.compiler.builder import GraphBuilder
    from zcspec.impl.compiler.compile import compile_stages
    from zcspec.impl.compiler.observe import observe_plan
    from zcspec.spec.registry import get

    b = GraphBuilder("atomic_into_hccl")
    x = b.input("x", (2, 8))
    r = b.op("ReduceSum", [x], shape=(2, 1), axes=(1,), keepdims=1)
    b.output(*b.op("HcomAllReduce", [b.op("Relu", [x]), r], outputs=[((2, 8), "float32"), ((2, 1), "float32")]))
    st = compile_stages(b.build())
    obs = observe_plan(st.graph, st.plan)
    assert get("MEM-ATOMIC-NOREUSE").exercised(obs)
    assert get("MEM-ATOMIC-NOREUSE").violations(obs) == ()


# -- MEM-ZC-IO: GE's zero-copy identification (block_mem_assigner.cc IsZeroCopyBlock), one rule at a time ---------------

def _io_plan(rows, *, outputs, types, consumers=None, soc="ascend910b", **kw):
    """Each root tensor is written by its own node n<i> (of type ``types[tensor]``, Relu by default)."""
    roots = [r[0] for r in rows if len(r) < 7]
    producers = {t: f"n{i}" for i, t in enumerate(roots)}
    return plan(rows, soc=soc, graph_inputs=tuple(t for t in roots if types.get(t) == "Data"),
                netoutput_inputs=tuple(outputs), producers=producers,
                node_types={f"n{i}": types.get(t, "Relu") for i, t in enumerate(roots)}, consumers=consumers or {},
                steps=4, **kw)


def test_zc_io_expected_set_follows_each_ge_rule():
    from zcspec.spec.invariants.blocks import expected_zero_copy
    rows = [("x", ZC, 0, 512, 0, 3), ("y", ZC, 512, 512, 1, 3)]
    assert expected_zero_copy(_io_plan(rows, outputs=("y",), types={"x": "Data"}, consumers={"x": (1,)})) == \
        {"x": "input", "y": "output"}
    # one memory feeding two NetOutput slots is not zero copy (GetOutputFlowToNetoutputNum == 2)
    assert expected_zero_copy(_io_plan(rows, outputs=("y", "y"), types={"x": "Data"}))["y"] is None
    # a graph input feeding a continuous input (a node with more than one input) is not zero copy
    grouped = _io_plan(rows, outputs=("y",), types={"x": "Data"},
                       continuous_groups=(ContinuousGroup("n1", ("x", "y")),))
    assert expected_zero_copy(grouped)["x"] is None
    # a node of a continuous-input type with one input has none (MemLayoutConflictUtil::IsContinuousInput)
    alone = _io_plan(rows, outputs=("y",), types={"x": "Data"}, continuous_groups=(ContinuousGroup("n1", ("x",)),))
    assert expected_zero_copy(alone)["x"] == "input"
    # an op the SoC never makes zero copy (HcomBroadcast on ascend310p) touching the output
    bcast = dict(outputs=("y",), types={"x": "Data", "y": "HcomBroadcast"})
    assert expected_zero_copy(_io_plan(rows, **bcast))["y"] == "output"
    assert expected_zero_copy(_io_plan(rows, soc="ascend310p", **bcast))["y"] is None


def test_zc_io_an_output_that_is_a_piece_of_a_larger_tensor_is_not_zero_copy():
    from zcspec.spec.invariants.blocks import expected_zero_copy
    rows = [("a", FM, 0, 1024, 1, 3), ("v", FM, 512, 400, 2, 3, "a")]
    p = _io_plan(rows, outputs=("v",), types={}, nbytes={"a": 900, "v": 400})
    assert expected_zero_copy(p) == {"a": None}
    assert get("MEM-ZC-IO").violations(p) == ()


def test_zc_io_reports_both_directions():
    rows = [("x", FM, 0, 512, 0, 3), ("y", ZC, 0, 512, 1, 3)]
    p = _io_plan(rows, outputs=("y", "y"), types={"x": "Data"})
    assert {v.culprit for v in get("MEM-ZC-IO").violations(p)} == {"tensor 'x'", "tensor 'y'"}
    assert not get("MEM-ZC-IO").exercised(attrs.evolve(p, soc=None))   # no SoC named: not judged
