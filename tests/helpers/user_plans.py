"""A plan of a planner of the user's own, in the plan format (docs/plan-format.md), that holds every claim:
three steps, three tensors in one activations arena, z reusing x's bytes once x is dead. Tests edit
copies of it into malformed, buggy or wasteful plans."""
from __future__ import annotations

CLEAN = {
    "format": "zcspec-plan", "version": 1,
    "order": ["load", "matmul", "relu"],
    "arenas": {"act": {"kind": "activations", "alignment": 16}},
    "regions": {"act": 128},
    "tensors": [
        {"name": "x", "region": "act", "offset": 0, "size": 64, "aligned_size": 64, "first": 0, "last": 1,
         "block": None, "zero_copy": False, "alias_of": None},
        {"name": "y", "region": "act", "offset": 64, "size": 64, "aligned_size": 64, "first": 1, "last": 2,
         "block": None, "zero_copy": False, "alias_of": None},
        {"name": "z", "region": "act", "offset": 0, "size": 64, "aligned_size": 64, "first": 2, "last": 2,
         "block": None, "zero_copy": False, "alias_of": None},
    ],
    "consumers": {"x": [1], "y": [2]},
    "writes": {"x": [0], "y": [1], "z": [2]},
    "graph_outputs": ["z"],
}
