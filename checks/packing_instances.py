"""The instances verify's packing cases pack (checks/packing_cases.py): fixed ones for each path, and drawn ones.

- ``small_instances(seed, count)``: drawn, 5 to 8 buffers that greedy by size does not solve at the
  max-live bound (Z3 gives their optimum);
- planted ones (``planted_pieces``, guillotine cuts of a full rectangle from
  :func:`~zcspec.checks.packing_facts.planted`: the optimum known by construction), fixed by their
  seeds: PLANTED, PLANTED_ALIGNED, WEIGHTED, HARD, and the one of LARGE_COUNT buffers above the
  search's size limit;
- DESCENT (the exhaustive descent must certify its optimum), ``descent_copies`` (DESCENT repeated in time,
  above the search's size limit: the optimum stays above the max-live bound), TOWER (the optimum is the largest
  buffer) and ``chain_pieces`` (each buffer overlaps only its neighbours: the optimum is the
  max-live bound; CHAIN_COUNT of them reach the chunked stacking bound).

What each must give is the cases' to judge.
"""
from __future__ import annotations

import random

from zcspec.checks.packing_facts import Piece, arena_of, greedy_by_size, max_live, planted


def _random_small(rng: random.Random, count: int, *, prefix: str) -> tuple[Piece, ...]:
    """``count`` buffers over 6 steps, about a third sharing the previous one's lifetime, sizes that
    leave gaps greedy falls into; alignments only on some instances."""
    aligned = rng.random() < 0.5
    out: list[Piece] = []
    for i in range(count):
        lower = rng.randrange(6)
        upper = rng.randint(lower + 1, 6)
        if out and rng.random() < 0.35:
            lower, upper = out[-1].lower, out[-1].upper
        align = rng.choice((1, 2, 4, 8)) if aligned else 1
        out.append(Piece(f"{prefix}{i}", lower, upper, rng.choice((1, 3, 5, 8, 12, 16, 24, 40)), align))
    return tuple(out)


def small_instances(seed: int, count: int) -> list[tuple[Piece, ...]]:
    """``count`` small instances (5 to 8 buffers) greedy by size does not solve at the max-live
    bound, so the capacity and minimisation paths go past stage 1."""
    rng, out = random.Random(seed), []
    while len(out) < count:
        pieces = _random_small(rng, rng.randint(5, 8), prefix=f"s{len(out)}_")
        if arena_of(pieces, greedy_by_size(pieces, fit="best")) > max_live(pieces):
            out.append(pieces)
    return out


def planted_pieces(seed: int, count: int, *, aligned: bool = False, prefix: str = "p") -> tuple[Piece, ...]:
    return tuple(planted(random.Random(seed), count, steps=count, arena=16 * count, aligned=aligned, prefix=prefix))


# Fixed planted instances (so the paths they reach and the time they take do not depend on the seed),
# picked by the search's effort at the optimum: PLANTED (40 buffers, optimum 640) and PLANTED_ALIGNED
# (20, aligned, 320) take under 200 nodes; WEIGHTED (24, aligned, 384) about 6,700: its first two
# weighted-degree runs (3,000 nodes each) fail, so the second is ranked by the first one's failures;
# HARD (80, 1280) more than 8,000, so a short time limit cuts the search short.
PLANTED = planted_pieces(0, 40, prefix="q")
PLANTED_ALIGNED = planted_pieces(5, 20, aligned=True, prefix="qa")
WEIGHTED = planted_pieces(22, 24, aligned=True, prefix="w")
HARD = planted_pieces(20, 80, prefix="h")
# pack() without limits: alignment keeps the optimum (31) above the max-live bound (30), so the search
# at the bound is exhausted; the earlier stages stay above 31 (greedy by size: 35) and the descent finds
# 31, then proves 30 infeasible (the certificate that must raise the proved bound to 31).
DESCENT = (Piece("d0", 0, 3, 3, 4), Piece("d1", 0, 2, 3, 8), Piece("d2", 0, 1, 24, 8), Piece("d3", 1, 3, 3, 1))
# 14 random buffers (random.Random(77)) whose optimum (89) lies one above the max-live bound (88): the
# search proves 88 infeasible in one run of some 18,000 nodes, so only limits that grow from run to run
# (2n for the round-robin stream's first runs, 3,000 for the weighted-degree stream's) ever reach it.
GAPPED_14 = (Piece("g0", 5, 7, 8, 1), Piece("g1", 1, 4, 20, 1), Piece("g2", 2, 7, 24, 1), Piece("g3", 4, 5, 20, 1),
             Piece("g4", 3, 8, 16, 1), Piece("g5", 5, 8, 5, 1), Piece("g6", 8, 11, 24, 8), Piece("g7", 3, 5, 8, 1),
             Piece("g8", 1, 3, 24, 8), Piece("g9", 9, 15, 24, 1), Piece("g10", 1, 7, 8, 4), Piece("g11", 1, 2, 31, 8),
             Piece("g12", 1, 6, 5, 4), Piece("g13", 7, 13, 24, 1))
# The largest buffer is the optimum (32): a search at exactly its size must fit it.
TOWER = (Piece("t0", 0, 4, 32), Piece("t1", 4, 6, 16), Piece("t2", 4, 6, 16), Piece("t3", 6, 7, 32))
# Above the search's size limit (4,096 buffers): greedy orders and the hill climb only.
LARGE_COUNT = 4_200
CHAIN_COUNT = 1_500


def descent_copies(count: int) -> tuple[Piece, ...]:
    """``count`` copies of DESCENT, one after the other in time (copy k over steps [3k, 3k + 3)): the optimum is
    DESCENT's (31), one above the max-live bound (30), so above the search's size limit no stage reaches its
    target, the lower bound: the hill climb spends its whole budget and the squeaky wheel runs after it. Each
    buffer overlaps only its own copy's, so a best-fit pass takes milliseconds even at 4,200 buffers."""
    return tuple(Piece(f"{p.id}_{k}", p.lower + 3 * k, p.upper + 3 * k, p.size, p.align)
                 for k in range(count) for p in DESCENT)


def chain_pieces(seed: int, count: int) -> tuple[Piece, ...]:
    """Buffer i lives over [i, i + 2), so each overlaps only its neighbours: the optimum is the
    max-live bound (the even ones at 0, each odd one above its larger neighbour). ``count`` distinct
    ends make as many cliques: from 1,415 buffers on, buffers x cliques passes the 2M cells the
    search precomputes, so it builds its stacking bound in chunks."""
    rng = random.Random(seed)
    return tuple(Piece(f"c{i}", i, i + 2, rng.randint(1, 64)) for i in range(count))
