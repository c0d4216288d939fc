"""The packer's quality, proved: on small instances its arena is the optimum, and what it certifies is true.

verify's plan claims judge a layout's safety (no overlap, alignment, regions); none judges its size,
so a packer that returns a valid but larger arena than it could, or certifies a packing optimal
that is not, passed verify (a mutant pruning "twin" buffers of equal lifetime also when their
alignments differ did both). Here the packer under test
(``impl.compiler.memory.packing.pack``, what ``--strategy compact`` and ``zcspec plan --buffers``
run) packs seeded random instances of at most ``MAX_BUFFERS`` buffers, with alignments and buffers
sharing a lifetime; the spec then, from the offsets alone:

- judges the packing with :mod:`zcspec.checks.packing_check` (every buffer placed once at a
  non-negative multiple of its alignment, no two buffers whose lifetimes intersect overlapping in
  memory, ``Packing.arena`` what the offsets need): its first finding is the refutation;
- computes its arena (``max(offset + size)``) and Z3's optimum for the same buffers
  (:func:`zcspec.checks.proofs.optimal.optimal_layout`, alignments included);
- holds the packer to: arena == optimum (pack() ends with an exhaustive descent on instances this
  small), ``optimal`` only when arena == optimum,
  ``bound`` (its proved lower bound) never above the optimum, and ``optimal`` exactly when
  ``bound == arena`` (the descent once certified a packing while leaving its bound below).

``prove_packing(buffers)`` gives a ``ProofResult`` (proved / refuted / unknown: Z3 ran out of time),
``instances(count, seed)`` the instances verify draws.
"""
from __future__ import annotations

import random
import time
from typing import NamedTuple

from zcspec.checks.packing_check import validate
from zcspec.checks.proofs.optimal import OPTIMAL, optimal_layout
from zcspec.checks.proofs.z3_layout import PROVED, REFUTED, UNKNOWN, ProofResult
from zcspec.impl.compiler.memory.packing import Buffer
from zcspec.impl.compiler.memory.packing.packer import pack

CLAIM = "PROOF-PACK-OPTIMAL"
MAX_BUFFERS = 8
SIZES = (1, 3, 8, 16, 24, 40, 64, 100)
ALIGNS = (1, 1, 2, 4, 8, 16)
TIMEOUT_MS = 20_000


class Wanted(NamedTuple):
    """One buffer of an instance as the spec draws it: the packer gets it as a :class:`Buffer`, while the
    judge and Z3 read these numbers, never the Buffer the packer's own code built (whose defaults are the
    code under test: a Buffer built without ``align`` must get alignment 1)."""

    id: str
    lower: int
    upper: int
    size: int
    align: int = 1

    def buffer(self) -> Buffer:
        """The packer's Buffer; alignment 1 is left to its default, as a caller who needs none writes it."""
        if self.align == 1:
            return Buffer(self.id, self.lower, self.upper, self.size)
        return Buffer(self.id, self.lower, self.upper, self.size, self.align)


def instances(count: int, seed: int) -> list[tuple[Wanted, ...]]:
    """``count`` seeded instances of 2 to ``MAX_BUFFERS`` buffers over up to 8 steps; about a third of
    the buffers share the lifetime of the one before (twins), alignments are 1 to 16."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        steps, bufs = rng.randint(2, 8), []
        for i in range(rng.randint(2, MAX_BUFFERS)):
            lower = rng.randrange(steps)
            upper = rng.randint(lower + 1, steps)
            if bufs and rng.random() < 0.35:
                lower, upper = bufs[-1].lower, bufs[-1].upper
            bufs.append(Wanted(f"b{i}", lower, upper, rng.choice(SIZES), rng.choice(ALIGNS)))
        out.append(tuple(bufs))
    return out


def label(buffers) -> str:
    return "packing [" + ", ".join(f"{b.size}@{b.lower}-{b.upper}/{b.align}" for b in buffers) + "]"


def prove_packing(buffers) -> ProofResult:
    """Pack ``buffers`` (:class:`Wanted`, or anything with its fields) with the packer under test and hold
    the packing to Z3's optimum (module doc), both judged by the fields of ``buffers``."""
    buffers = tuple(Wanted(b.id, b.lower, b.upper, b.size, b.align) for b in buffers)
    start = time.perf_counter()
    packing = pack([b.buffer() for b in buffers])
    if found := validate(buffers, packing):
        first = found[0]
        return ProofResult(REFUTED, pair=first.buffers, kind=first.rule, reason="; ".join(f.message for f in found),
                           build_s=time.perf_counter() - start)
    offsets = dict(packing.offsets)
    arena = max(offsets[b.id] + b.size for b in buffers)
    built = time.perf_counter()
    best = optimal_layout([(b.size, b.lower, b.upper - 1) for b in buffers], aligns=[b.align for b in buffers],
                          timeout_ms=TIMEOUT_MS)
    solved = time.perf_counter() - built
    timing = dict(build_s=built - start, solve_s=solved)
    if best.status != OPTIMAL:
        if arena < best.lower_bound or packing.bound > best.arena:
            return ProofResult(REFUTED, kind="bound", reason=f"arena {arena}, reported bound {packing.bound}; "
                               f"Z3: optimum in [{best.lower_bound}, {best.arena}]", **timing)
        return ProofResult(UNKNOWN, reason=f"Z3 ran out of time: the optimum is in [{best.lower_bound}, "
                           f"{best.arena}], the packer's arena {arena}", **timing)
    why = []
    if arena != best.arena:
        why.append(f"arena {arena} where {best.arena} is optimal (Z3: e.g. offsets {list(best.offsets)})")
    if packing.optimal and arena != best.arena:
        why.append("the packer certifies it optimal")
    if packing.bound > best.arena:
        why.append(f"the packer's proved bound {packing.bound} is above the optimum {best.arena}")
    if packing.optimal != (packing.bound == arena):
        why.append(f"optimal={packing.optimal} with proved bound {packing.bound} and arena {arena}: a packing is "
                   "certified exactly when its proved bound meets its arena")
    if why:
        return ProofResult(REFUTED, kind="suboptimal" if arena != best.arena else "bound", reason="; ".join(why),
                           **timing)
    return ProofResult(PROVED, **timing)
