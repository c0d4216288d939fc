"""GE's ``dynamic_batch_mem_assigner.cc`` rules that no GE unit test isolates (GE's only multi-batch cases,
``mem_assigner_unittest.cc`` ``multi_batch_reuse`` and ``_continuous``, need P2P and session-scope memory:
tests/ge/CASES.md). Each test names the GE function whose rule it checks."""
from __future__ import annotations

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.memory.plan import plan_memory

N = 256


def _three_kinds_of_batch_blocks():
    """Two batch branches, each with ordinary blocks, a same-offset group (the inputs of a two-input
    HcomAllReduce: continuous, but ``need_same_offset_in_batch_`` decides first) and a continuous group
    (the pieces of a PhonyConcat)."""
    b = GraphBuilder("batch_order")
    x = b.input("x", (1, N))
    per_label = []
    for label in ("b1", "b2"):
        t = b.op("Relu", [x], name=f"{label}_r", _batch_label=label)
        u = b.op("Abs", [t], name=f"{label}_a", _batch_label=label)
        ar, _ = b.op("HcomAllReduce", [u, t], name=f"{label}_ar", _batch_label=label,
                     outputs=[((1, N), "float32")] * 2)
        v = b.op("Neg", [t], name=f"{label}_n", _batch_label=label)
        w = b.op("Exp", [t], name=f"{label}_e", _batch_label=label)
        s = b.op("Sum", [b.op("PhonyConcat", [v, w], name=f"{label}_pc", _batch_label=label, shape=(2, N))],
                 name=f"{label}_s", _batch_label=label, shape=(2, N))
        o = b.op("Add", [ar, b.op("Relu", [ar], name=f"{label}_q", _batch_label=label)], name=f"{label}_o",
                 _batch_label=label)
        per_label.append((o, s))
    (o1, s1), (o2, s2) = per_label
    b.output(b.op("Merge", [o1, o2], name="m", labels=("b1", "b2")),
             b.op("Merge", [s1, s2], name="m2", labels=("b1", "b2")))
    return b.build()


def test_batch_wrappers_follow_ge_order_ordinary_then_same_offset_then_continuous():
    """``ResizeDynamicBatchBlocks`` resizes the ordinary blocks first (their virtual parents are appended
    to the block list first), then the same-offset blocks, then the continuous ones; the feature map lays
    the blocks out in list order, so the three batch regions follow one another in that order."""
    plan = plan_memory(_three_kinds_of_batch_blocks())
    below: dict = {}
    for bl in plan.blocks:
        below.setdefault(bl.parent, []).append(bl)

    def tensors(block_id):
        return {t for k in below.get(block_id, []) for t in k.tensors + tuple(tensors(k.id))}

    tops = sorted((bl for bl in plan.blocks if bl.parent is None and bl.region == "feature_map" and not bl.tensors),
                  key=lambda bl: bl.offset)
    kinds = []
    for bl in tops:
        held = tensors(bl.id)
        kinds.append("continuous" if "b1_pc:0" in held else "same offset" if "b1_a:0" in held else "ordinary")
    assert kinds == ["ordinary", "same offset", "continuous"]
