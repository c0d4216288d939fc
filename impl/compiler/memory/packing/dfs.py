"""One depth-first run of the exact search, compiled to machine code by numba.

:mod:`.search` restarts runs as a portfolio; this module is one run: the
canonical depth-first search with its pruning rules (the list is in
:mod:`.search`'s docstring), written as loops over int64 arrays so that
numba compiles it (``cache=True``: compiled once per installation, then loaded
from numba's cache). A node costs a few microseconds instead of the hundreds
a node of numpy calls on small arrays cost; the rules are the same, and so
are the node counts and the packings found.

The instance and the run's parameters travel in a :data:`Static` tuple, the
state the run changes (and restores on backtracking) in a :data:`State`
tuple; :func:`run` returns :data:`FOUND`, :data:`FAILED` (the run explored
everything: no packing fits) or :data:`ABORTED` (node limit or deadline).
"""
from __future__ import annotations

import time
from collections import namedtuple

import numba
import numpy as np


FOUND, FAILED, ABORTED = 1, 0, -1

# The letters of MiniMalloc's static orders (sweep.ranks), as codes.
LETTERS = {"W": 0, "A": 1, "T": 2, "Z": 3, "L": 4, "U": 5}

Static = namedtuple("Static", "lower upper size align first end ov_ptr ov_idx tw_ptr tw_idx cliques "
                              "letters cap limit deadline")
Static.__doc__ = """The instance (int64 arrays by buffer; overlaps and twins in CSR form: ``ov_idx[ov_ptr[b]:ov_ptr[b+1]]``),
the clique sections, the heuristic that re-ranks split-off sub-problems (``letters``, empty: keep the ranks),
the capacity, the node limit and the deadline (a ``time.monotonic()`` value, ``inf`` for none)."""

State = namedtuple("State", "rank mo placed off free_nb solution left cuts failures nodes")
State.__doc__ = """What a run changes: ranks, min offsets, placed flags, offsets, unplaced-neighbour counts and the
solution by buffer; unplaced bytes, crossing counts and inference failures by section; ``nodes`` (one cell)."""


def letter_codes(heuristic: str) -> np.ndarray:
    return np.array([LETTERS[c] for c in heuristic], np.int64)


@numba.njit(cache=True)
def _now() -> float:
    with numba.objmode(t="float64"):
        t = time.monotonic()
    return t


@numba.njit(cache=True)
def heuristic_ranks(lower, upper, size, first, end, sub, letters, left):
    """Ranks (0 first) of the buffers ``sub`` by the letters, each descending, ties by buffer index.

    W lifetime length, A area (length x size), T the largest of ``left`` (bytes per
    section) over the buffer's sections, Z size, L start, U end.
    """
    k = len(sub)
    idx = np.argsort(sub, kind="mergesort")
    key = np.empty(k, np.int64)
    for j in range(len(letters) - 1, -1, -1):  # least significant letter first, stable sorts
        code = letters[j]
        for i in range(k):
            b = sub[idx[i]]
            if code == 0:
                v = upper[b] - lower[b]
            elif code == 1:
                v = (upper[b] - lower[b]) * size[b]
            elif code == 2:
                v = left[first[b]:end[b]].max()
            elif code == 3:
                v = size[b]
            elif code == 4:
                v = lower[b]
            else:
                v = upper[b]
            key[i] = -v
        idx = idx[np.argsort(key, kind="mergesort")]
    out = np.empty(k, np.int64)
    for r in range(k):
        out[idx[r]] = r
    return out


# Frame kinds, the phases of a frame, and _candidates' "candidates follow" (none equals a result).
_SPLIT, _NODE = 0, 1
_MORE = 2
_ENTER, _NEXT, _BACK = 0, 1, 2
# Columns of a frame's scalars.
_S_LO, _S_HI, _LAST_OFF, _LAST_RANK, _I, _PHASE, _TOP, _A, _C = range(9)


@numba.njit(cache=True)
def run(st, dy) -> int:
    """One run from the root: every buffer unplaced, all sections.

    The depth-first search keeps its frames on explicit stacks (numba's compiled recursion is
    neither cached nor bounded by Python's recursion limit): a *split* frame solves the independent
    sub-problems of its buffers one after the other, a *node* frame tries its candidates in turn.
    A finished frame leaves its result in ``result`` for the frame below it."""
    kinds, parts, cands, ovs, olds, ints = [_SPLIT], [np.arange(len(st.size))], [_empty()], [_empty()], [_empty()], [
        _frame(0, len(dy.left), -1, -1, 1)]
    result = FOUND
    while len(kinds):
        f = ints[-1]
        if kinds[-1] == _SPLIT:
            if f[_PHASE] == _BACK:  # a sub-problem returned
                if len(cands[-1]):
                    dy.rank[olds[-1]] = cands[-1]  # its ranks before re-ranking
                if result != FOUND:
                    _pop(kinds, parts, cands, ovs, olds, ints)
                    continue
            sub, a, b = _next_sub(st, dy, parts[-1], f)
            if len(sub) == 0:
                _pop(kinds, parts, cands, ovs, olds, ints)
                result = FOUND
                continue
            f[_PHASE] = _BACK
            saved = _empty()
            if not (f[_TOP] or len(st.letters) == 0 or len(sub) < 2):
                saved = dy.rank[sub]
                dy.rank[sub] = heuristic_ranks(st.lower, st.upper, st.size, st.first, st.end, sub,
                                               st.letters, dy.left)
            cands[-1], olds[-1] = saved, sub
            _push(kinds, parts, cands, ovs, olds, ints, _NODE, sub, _frame(a, b, -1, -1, 0))
            continue

        if f[_PHASE] == _ENTER:
            dy.nodes[0] += 1
            if dy.nodes[0] > st.limit or (dy.nodes[0] % 256 == 0 and st.deadline < np.inf
                                          and _now() > st.deadline):
                return ABORTED
            status, cs = _candidates(st, dy, parts[-1], f[_S_LO], f[_S_HI], f[_LAST_OFF], f[_LAST_RANK])
            if status != _MORE:
                _pop(kinds, parts, cands, ovs, olds, ints)
                result = status
                continue
            cands[-1] = cs
            f[_PHASE] = _NEXT
        elif f[_PHASE] == _BACK:  # the search below the placement of c returned
            c = f[_C]
            s0, s1 = st.first[c], st.end[c]
            dy.cuts[s0:s1 - 1] += 1
            _unplace(st, dy, c, ovs[-1], olds[-1])
            if result == FOUND:
                dy.solution[c] = dy.off[c]
                _pop(kinds, parts, cands, ovs, olds, ints)
                continue
            if len(ovs[-1]) == 0:
                # Hatless: nothing unplaced sits above c, so placing it changed no other
                # buffer's options: every sibling branch fails the same way.
                _pop(kinds, parts, cands, ovs, olds, ints)
                result = FAILED
                continue
            f[_PHASE] = _NEXT
        pushed = False
        cs = cands[-1]
        while f[_I] < len(cs) and not pushed:
            c = cs[f[_I]]
            f[_I] += 1
            if _mirrored(st, dy, c):
                continue
            off = dy.mo[c]
            ov, old = _place(st, dy, c)
            if _still_fits(st, dy, parts[-1], c, ov, old, f[_S_LO], f[_S_HI], off):
                s0, s1 = st.first[c], st.end[c]
                dy.cuts[s0:s1 - 1] -= 1
                split = False
                for s in range(s0, s1 - 1):
                    split = split or dy.cuts[s] == 0
                f[_C], f[_PHASE] = c, _BACK
                ovs[-1], olds[-1] = ov, old
                child = _frame(f[_S_LO], f[_S_HI], off, dy.rank[c], 0)
                _push(kinds, parts, cands, ovs, olds, ints, _SPLIT if split else _NODE, parts[-1], child)
                pushed = True
            else:
                _unplace(st, dy, c, ov, old)
                if len(ov) == 0:
                    break  # hatless, as above
        if not pushed:
            _pop(kinds, parts, cands, ovs, olds, ints)
            result = FAILED
    return result


@numba.njit(cache=True)
def _empty():
    return np.zeros(0, np.int64)


@numba.njit(cache=True)
def _frame(s_lo, s_hi, last_off, last_rank, top):
    f = np.zeros(9, np.int64)
    f[_S_LO], f[_S_HI], f[_LAST_OFF], f[_LAST_RANK], f[_TOP], f[_A] = s_lo, s_hi, last_off, last_rank, top, s_lo
    return f


@numba.njit(cache=True)
def _push(kinds, parts, cands, ovs, olds, ints, kind, part, f):
    kinds.append(kind)
    parts.append(part)
    cands.append(_empty())
    ovs.append(_empty())
    olds.append(_empty())
    ints.append(f)


@numba.njit(cache=True)
def _pop(kinds, parts, cands, ovs, olds, ints):
    kinds.pop()
    parts.pop()
    cands.pop()
    ovs.pop()
    olds.pop()
    ints.pop()


@numba.njit(cache=True)
def _next_sub(st, dy, part, f):
    """The next sub-problem of a split frame: the unplaced buffers of ``part`` between the next two
    boundaries no unplaced buffer crosses (empty when none is left), and those boundaries."""
    s_hi = f[_S_HI]
    while f[_I] < s_hi - f[_S_LO]:
        s = f[_S_LO] + f[_I]
        f[_I] += 1
        if s < s_hi - 1 and dy.cuts[s] != 0:
            continue
        a, b = f[_A], s + 1
        f[_A] = b
        keep = np.zeros(len(part), np.bool_)
        for i in range(len(part)):
            p = part[i]
            keep[i] = st.first[p] < b and st.end[p] > a and not dy.placed[p]
        sub = part[keep]
        if len(sub):
            return sub, a, b
    return _empty(), 0, 0


@numba.njit(cache=True)
def _unplaced(dy, part):
    keep = np.zeros(len(part), np.bool_)
    for i in range(len(part)):
        keep[i] = not dy.placed[part[i]]
    return part[keep]


@numba.njit(cache=True)
def _candidates(st, dy, part, s_lo, s_hi, last_off, last_rank):
    """(FOUND, -) when nothing is left to place, (FAILED, -) on an orphan, else (_MORE, the
    candidates in the order to try them: by min offset, then rank)."""
    un = _unplaced(dy, part)
    if len(un) == 0:
        return FOUND, _empty()
    mo, rank, size = dy.mo, dy.rank, st.size
    lowest_top = np.iinfo(np.int64).max
    for u in un:
        if mo[u] < last_off and dy.free_nb[u] == 0:
            # An orphan: offsets never decrease, so it lands at or above last_off, higher than
            # its min offset, and nothing left can lift it there.
            return FAILED, _empty()
        lowest_top = min(lowest_top, mo[u] + size[u])
    # Placing c at mo[c] leaves every section's remaining bytes to stack above mo[c]
    # (offsets never decrease): the fullest section decides. Dominance: a candidate at or
    # above the lowest top of any unplaced buffer leaves a gap that buffer could slide into.
    room = st.cap - dy.left[s_lo:s_hi].max()
    keep = np.zeros(len(un), np.bool_)
    for i in range(len(un)):
        u = un[i]
        keep[i] = (mo[u] < lowest_top and mo[u] <= room
                   and (mo[u] > last_off or (mo[u] == last_off and rank[u] > last_rank)))
    cs = un[keep]
    cs = cs[np.argsort(rank[cs], kind="mergesort")]
    return _MORE, cs[np.argsort(mo[cs], kind="mergesort")]


@numba.njit(cache=True)
def _place(st, dy, c):
    """Place ``c`` at its min offset; its unplaced neighbours and their min offsets before."""
    height = dy.mo[c] + st.size[c]
    ov = _unplaced(dy, st.ov_idx[st.ov_ptr[c]:st.ov_ptr[c + 1]])
    old = dy.mo[ov]
    for o in ov:
        a = st.align[o]
        dy.mo[o] = max(dy.mo[o], -(-height // a) * a)
        dy.free_nb[o] -= 1
    dy.placed[c] = True
    dy.off[c] = dy.mo[c]
    dy.left[st.first[c]:st.end[c]] -= st.size[c]
    return ov, old


@numba.njit(cache=True)
def _unplace(st, dy, c, ov, old):
    dy.left[st.first[c]:st.end[c]] += st.size[c]
    for o in ov:
        dy.free_nb[o] += 1
    dy.placed[c] = False
    dy.mo[ov] = old


@numba.njit(cache=True)
def _mirrored(st, dy, c) -> bool:
    """Symmetry: c would sit right on a twin (same lifetime) of higher rank. Two twins stacked
    directly can swap places without touching anything else, so only the order with ranks
    increasing upwards is searched."""
    for i in range(st.tw_ptr[c], st.tw_ptr[c + 1]):
        t = st.tw_idx[i]
        if dy.placed[t] and dy.off[t] + st.size[t] == dy.mo[c] and dy.rank[t] > dy.rank[c]:
            return True
    return False


@numba.njit(cache=True)
def _still_fits(st, dy, part, c, ov, old_mo, s_lo, s_hi, off) -> bool:
    """Re-check the stacking bound where placing ``c`` changed it: its own sections and those of
    the buffers whose min offset rose. Elsewhere only the raised last offset matters, which the
    candidate filter covered."""
    lo, hi = st.first[c], st.end[c]
    for i in range(len(ov)):
        o = ov[i]
        if dy.mo[o] > old_mo[i]:
            lo, hi = min(lo, st.first[o]), max(hi, st.end[o])
    return _floors_fit(st, dy, _unplaced(dy, part), max(lo, s_lo), min(hi, s_hi), off)


@numba.njit(cache=True)
def _floors_fit(st, dy, un, lo, hi, last_off) -> bool:
    """Stacking bound per clique section: buffers with min offset >= m all lie above m.

    In a section, sort the unplaced buffers by min offset (raised to the last placed offset:
    offsets never decrease); for each, its min offset plus the sizes of all those at or above it
    must fit in the capacity. Only maximal cliques (sections just before a lifetime end) are
    checked: a section whose buffers are a subset of another's gives a weaker bound. A clique
    that overflows counts as a failure of its section (the weighted-degree restarts learn from it).
    """
    a, b = np.searchsorted(st.cliques, lo), np.searchsorted(st.cliques, hi)
    if a == b:
        return True
    keep = np.zeros(len(un), np.bool_)
    for i in range(len(un)):
        keep[i] = st.first[un[i]] < hi and st.end[un[i]] > lo
    rows = un[keep]
    if len(rows) == 0:
        return True
    rows = rows[np.argsort(-dy.mo[rows], kind="mergesort")]
    floor = np.maximum(dy.mo[rows], last_off)  # once per row, not once per row and clique
    bad = np.zeros(b - a, np.bool_)
    nbad = 0
    for j in range(a, b):
        q = st.cliques[j]
        stacked = 0
        for i in range(len(rows)):
            r = rows[i]
            if st.first[r] <= q < st.end[r]:
                stacked += st.size[r]
                if stacked + floor[i] > st.cap:
                    bad[j - a] = True
                    nbad += 1
                    break
    if nbad:
        for j in range(a, b):
            if bad[j - a]:
                dy.failures[st.cliques[j]] += 1.0 / nbad
    return nbad == 0
