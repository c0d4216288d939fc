"""The compiled search (numba) against the same code run as plain Python.

numba compiles impl/compiler/memory/packing/dfs.py to machine code with its own integer and indexing
semantics (fixed-width integers, no bounds checks); ``NUMBA_DISABLE_JIT=1`` runs the very same
functions in the interpreter. Both must expand the same nodes and return the same packings, so what
the brute-force properties (test_pack_props.py) establish for the algorithm holds for the machine code.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys

from zcspec.impl.compiler.memory.packing import Buffer, greedy, lower_bound, search

SCRIPT = """
import json, sys
from zcspec.impl.compiler.memory.packing import Buffer, greedy, search
cases = json.load(sys.stdin)
out = []
for specs, capacity in cases:
    inst = greedy.Instance.of([Buffer(*s) for s in specs])
    r = search.search(inst, capacity, node_budget=400)
    out.append([r.nodes, r.exhausted, None if r.offsets is None else r.offsets.tolist()])
print(json.dumps(out))
"""


def _cases(count: int, seed: int) -> list:
    rng = random.Random(seed)
    cases = []
    for k in range(count):
        specs = []
        for i in range(rng.randint(1, 12)):
            lo = rng.randint(0, 9)
            specs.append([str(i), lo, lo + rng.randint(1, 5), rng.randint(1, 40), rng.choice([1, 1, 2, 8]) if k % 3 == 0 else 1])
        lb = lower_bound([Buffer(*s) for s in specs])
        cases.append([specs, lb + rng.choice([0, 0, 1, 7])])
    return cases


def test_compiled_search_equals_the_interpreted_one():
    cases = _cases(60, seed=4)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = subprocess.run([sys.executable, "-c", SCRIPT], input=json.dumps(cases), capture_output=True,
                          text=True, env=env, timeout=600, check=True)
    interpreted = json.loads(done.stdout)
    for (specs, capacity), (nodes, exhausted, offsets) in zip(cases, interpreted, strict=True):
        r = search.search(greedy.Instance.of([Buffer(*s) for s in specs]), capacity, node_budget=400)
        assert (r.nodes, r.exhausted) == (nodes, exhausted), (specs, capacity)
        assert (None if r.offsets is None else r.offsets.tolist()) == offsets, (specs, capacity)
    assert any(o is None for _, _, o in interpreted) and any(o is not None for _, _, o in interpreted)
