"""Synthetic plans for the proofs' tests and benchmark: random lifetimes packed first-fit.

The plans follow the plan contract (docs/plan-format.md) and are valid by construction (a
first-fit over lifetime-overlapping neighbours never overlaps), so a checker
must prove them; :func:`shift_onto_neighbour` then breaks one on purpose.
They are not GE's plans: one tensor per block, no block reuse bookkeeping.
"""
from __future__ import annotations

import random

from zcspec.checks.proofs.sweep import overlapping_pairs

ALIGN = 512


def _align(x: int, a: int = ALIGN) -> int:
    return -(-x // a) * a


def first_fit(items: list[tuple[int, int, int]]) -> tuple[list[int], int]:
    """Offsets for ``items`` = (size, first, last), placed by first start then largest size,
    each at the lowest offset clear of every placed item alive with it; returns (offsets, arena)."""
    neighbours: list[list[int]] = [[] for _ in items]
    for i, j in overlapping_pairs([(f, l) for _, f, l in items]):
        neighbours[i].append(j)
        neighbours[j].append(i)
    offsets = [-1] * len(items)
    for k in sorted(range(len(items)), key=lambda k: (items[k][1], -items[k][0], k)):
        taken = sorted((offsets[n], offsets[n] + items[n][0]) for n in neighbours[k] if offsets[n] >= 0)
        at = 0
        for lo, hi in taken:
            if at + items[k][0] <= lo:
                break
            at = max(at, hi)
        offsets[k] = at
    return offsets, max((o + s for o, (s, _, _) in zip(offsets, items)), default=0)


def _tensor(name, region, offset, size, first, last, block, *, zero_copy=False, alias_of=None):
    return {"name": name, "region": region, "offset": offset, "size": size, "aligned_size": _align(size),
            "first": first, "last": last, "block": block, "zero_copy": zero_copy, "alias_of": alias_of}


def tensor(name: str, region: str, offset: int, size: int, first: int, last: int, **fields) -> dict:
    """One contract tensor entry; ``aligned_size`` defaults to ``size`` rounded up to 512,
    ``block`` to the name; other fields (``alias_of``, ``zero_copy``) as given."""
    entry = _tensor(name, region, offset, size, first, last, fields.pop("block", name),
                    zero_copy=region == "zero_copy")
    entry.update(fields)
    return entry


def make_plan(tensors: list[dict], *, regions: dict | None = None, blocks: list[dict] | None = None) -> dict:
    """A contract plan around hand-written ``tensors``: by default each region is sized to
    its furthest tensor end, and each zero-copy block spans its tensors (rounded to 512)."""
    ends: dict = {}
    for t in tensors:
        ends[t["region"]] = max(ends.get(t["region"], 0), t["offset"] + t["aligned_size"])
    if blocks is None:
        spans: dict = {}
        for t in (t for t in tensors if t["region"] == "zero_copy"):
            lo, hi = spans.get(t["block"], (t["offset"], t["offset"] + t["size"]))
            spans[t["block"]] = (min(lo, t["offset"]), max(hi, t["offset"] + t["size"]))
        blocks = [{"id": b, "region": "zero_copy", "offset": lo, "size": _align(hi - lo), "zero_copy": True,
                   "tensors": [t["name"] for t in tensors if t["block"] == b]} for b, (lo, hi) in spans.items()]
    steps = max((t["last"] for t in tensors), default=-1) + 1
    return {"order": [f"n{s}" for s in range(steps)], "tensors": tensors, "blocks": blocks,
            "regions": ends if regions is None else regions}


def synthetic_plan(n_blocks: int, *, seed: int = 0, max_life: int = 24, max_size: int = 64 * ALIGN,
                   n_weights: int = 2, n_aliases: int = 0) -> dict:
    """A valid plan with ``n_blocks`` feature-map tensors (one step apart, lifetimes of 1 to
    ``max_life`` steps, sizes up to ``max_size``), a zero-copy input and output (one user
    buffer each), ``n_weights`` weights alive throughout, and ``n_aliases`` aliases of
    random feature-map tensors (same range, lifetime inside the root's)."""
    if n_blocks < 1 or max_life < 1 or max_size < 1:
        raise ValueError(f"n_blocks={n_blocks}, max_life={max_life}, max_size={max_size} must be >= 1")
    rng = random.Random(seed)
    steps = n_blocks + 2
    items = [(_align(rng.randint(1, max_size)), i + 1, min(i + rng.randint(1, max_life), steps - 1))
             for i in range(n_blocks)]
    offsets, arena = first_fit(items)
    tensors = [_tensor(f"t{i}", "feature_map", o, s, f, l, i) for i, ((s, f, l), o) in enumerate(zip(items, offsets))]
    for a in range(n_aliases):
        root = tensors[rng.randrange(n_blocks)]
        tensors.append(dict(root, name=f"alias{a}", alias_of=root["name"], last=root["first"]))
    in_size, out_size = rng.randint(1, 1 << 20), rng.randint(1, 1 << 16)
    tensors.append(_tensor("input", "zero_copy", 0, in_size, 0, min(max_life, steps - 1), "in", zero_copy=True))
    out_at = _align(in_size)
    tensors.append(_tensor("output", "zero_copy", out_at, out_size, max(steps - max_life, 0), steps - 1, "out",
                           zero_copy=True))
    w_at = 0
    for w in range(n_weights):
        size = rng.randint(1, 1 << 18)
        tensors.append(_tensor(f"w{w}", "weight", w_at, size, 0, steps - 1, f"w{w}"))
        w_at += _align(size)
    blocks = [{"id": "in", "region": "zero_copy", "offset": 0, "size": _align(in_size), "zero_copy": True,
               "tensors": ["input"]},
              {"id": "out", "region": "zero_copy", "offset": out_at, "size": _align(out_size), "zero_copy": True,
               "tensors": ["output"]}]
    return {"order": [f"n{s}" for s in range(steps)], "tensors": tensors, "blocks": blocks,
            "regions": {"feature_map": arena, "zero_copy": out_at + _align(out_size), "weight": w_at, "fixed": 0}}


def shift_onto_neighbour(plan: dict, *, seed: int = 0) -> tuple[dict, tuple[str, str]]:
    """A copy of ``plan`` with one feature-map tensor moved onto the offset of a
    lifetime-overlapping one (not its alias), and that pair of names."""
    tensors = [dict(t) for t in plan["tensors"]]
    fm = [t for t in tensors if t["region"] == "feature_map" and t["alias_of"] is None]
    pairs = [(fm[i], fm[j]) for i, j in overlapping_pairs([(t["first"], t["last"]) for t in fm])]
    if not pairs:
        raise ValueError("plan has no two feature-map tensors alive together")
    a, b = random.Random(seed).choice(pairs)
    a["offset"] = b["offset"]
    return dict(plan, tensors=tensors), (a["name"], b["name"])
