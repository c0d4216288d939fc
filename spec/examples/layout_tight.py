"""Examples for the claims on GE's decisions (spec/invariants/layout_tight.py, layout_refs.py): rows are (name, region,
offset, size, first, last[, alias_of])."""
from __future__ import annotations

from zcspec.spec.examples.build import Example, plan
from zcspec.spec.observables import PlanAttributes

FM, ZC = "feature_map", "zero_copy"

# Relu (n0) writes a, Neg (n1) is declared a ref of it (_reuse_input) and is its only reader.
_REF = dict(refs={"b": "a"}, producers={"a": "n0", "b": "n1"}, consumers={"a": (1,)},
            node_types={"n0": "Relu", "n1": "Neg"})

_PAIR = dict(inplace={"b": ("a",)}, producers={"a": "n0", "b": "n1"}, consumers={"a": (1,)},
             node_types={"n0": "Relu", "n1": "Neg"})

_ROWS = [("a", FM, 0, 1024, 0, 1), ("b", FM, 1024, 512, 1, 2), ("y", ZC, 0, 400, 2, 2), ("x", ZC, 512, 600, 0, 1)]

EXAMPLES = (
    Example("LAYOUT-REGIONS-PACKED",
            plan(_ROWS),
            plan(_ROWS, regions={FM: 1536, ZC: 2048}),
            culprit="region 'zero_copy'", why="the zero-copy blocks (512 for y, 1024 for x) add up to 1536, the "
                                              "region is one 512-byte unit longer"),
    Example("LAYOUT-SIZE-ATTRIBUTES",
            plan(_ROWS, attributes=PlanAttributes(memory_size=3072, zero_copy_memory_size=1536)),
            plan(_ROWS, attributes=PlanAttributes(memory_size=3584, zero_copy_memory_size=1536)),
            culprit="attribute memory_size", why="the feature-map blocks end at 1536 and the zero-copy blocks add "
                                                 "1536: memory_size is 3072, not 3584"),
    Example("LAYOUT-INPLACE-SHARES-INPUT",
            plan([("a", FM, 0, 512, 0, 1), ("b", FM, 0, 512, 1, 1, "a")], nbytes={"a": 480, "b": 480}, **_PAIR),
            plan([("a", FM, 0, 512, 0, 1), ("b", FM, 512, 512, 1, 1)], nbytes={"a": 480, "b": 480}, **_PAIR),
            culprit="tensor 'b'", why="b may run in place over a (equal raw bytes, b's node a's last reader), yet b "
                                      "has memory of its own"),
    Example("LAYOUT-INPLACE-REFUSED",
            plan([("a", FM, 0, 128, 0, 1), ("b", FM, 512, 512, 1, 1)], nbytes={"a": 96, "b": 480}, **_PAIR),
            plan([("a", FM, 0, 128, 0, 1), ("b", FM, 0, 512, 1, 1, "a")], nbytes={"a": 96, "b": 480}, **_PAIR),
            culprit="tensor 'b'", why="b's in-place input a has 96 raw bytes, b 480: GE refuses the pair "
                                      "(RemoveSizeNotEqual), yet b lies over a"),
    Example("LAYOUT-REF-SHARES-INPUT",
            plan([("a", FM, 0, 512, 0, 1), ("b", FM, 0, 512, 1, 1, "a")], **_REF),
            plan([("a", FM, 0, 512, 0, 1), ("b", FM, 512, 512, 1, 1)], **_REF),
            culprit="tensor 'b'", why="b is a ref of a, whose only reader is b's node, yet b has memory of its own"),
)
