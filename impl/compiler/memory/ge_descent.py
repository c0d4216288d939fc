"""Level 2's descent into a tree of blocks (ge_level2 ``_adopt``), compiled by numba, for one-stream block lists.

Level 2 offers every later block to every top-level block, and each offer walks the
top-level block's tree depth first, judging at every node whether the offered block's
members may share its memory (interval reuse, which may split the offered block). On a
deep CNN the trees are chains about ``MAX_DEPTH`` deep, so a 100k-node graph makes
millions of such judgements: in Python they were most of the planner's time.

:class:`Mirror` keeps a copy of the trees in flat arrays (nodes' spans, room and members'
timelines, children as linked lists) and :func:`descend` makes the same walk over them,
node for node in the same order with the same judgements: it returns the node that takes
the offered block (or none) and which of its members left it at which split, in the order
the splits happened. The caller replays them on the Python blocks (same clones, same ids,
same order), which stay the planner's real state. Only lists whose blocks are all on one
stream, none continuous and none used on another stream qualify (``Mirror.eligible``):
there the rules a node applies reduce to spans and interval reuse; any other list takes
the Python walk.
"""
from __future__ import annotations

import numba
import numpy as np


# Rows of Mirror.tree (one column per node) and of Mirror.members (one column per member of a node).
FIRST_CHILD, NEXT_SIBLING, LAST_CHILD, BEGIN, END, LO, HI, OFFSET, ALIGN, MSTART, MLEN = range(11)
SORTED_FIRST, REACH = range(2)


@numba.njit(cache=True)
def _refresh(yf, yl, n, yreach):
    """The offered block's order flag, begin and end, and the running maximum of its lasts, over its
    ``n`` remaining members (ge_level2 ``_Timeline`` and ``Block.keep_only``)."""
    ordered = True
    for i in range(n - 1):
        if yf[i] > yf[i + 1]:
            ordered = False
            break
    end = yl[0]
    for i in range(n):
        if yl[i] > end:
            end = yl[i]
        yreach[i] = end
    return ordered, yf[0], end


@numba.njit(cache=True)
def _crossing(c, tree, members, yf, yl, yreach, n, ordered, ybegin, yend, cross):
    """ge_level2 ``_may_share`` on one stream for node ``c``: -1 when the spans do not meet, else how
    many of the offered block's ``n`` members cross one of ``c``'s (``_interval``, ``_crossing``),
    their positions written to ``cross``. All of them: ``c`` refuses it; some: they leave it."""
    if yend < tree[BEGIN, c] or ybegin > tree[END, c]:
        return -1
    lo, hi = tree[LO, c], tree[HI, c]
    if ordered:
        a = np.searchsorted(yreach[:n], lo, side="left")
        b = np.searchsorted(yf[:n], hi, side="right")
    else:
        a, b = 0, n
    k = 0
    if a < b:
        s, m = tree[MSTART, c], tree[MLEN, c]
        sorted_firsts = members[SORTED_FIRST, s:s + m]
        for i in range(a, b):
            last, first = yl[i], yf[i]
            if last >= lo and first <= hi:
                j = np.searchsorted(sorted_firsts, last, side="right")
                if j > 0 and members[REACH, s + j - 1] >= first:
                    cross[k] = i
                    k += 1
    return k


@numba.njit(cache=True)
def _leave(yf, yl, yidx, cross, k, n, moved_at, event):
    """The ``k`` crossing members leave the offered block as split ``event``; returns how many stay."""
    kept, ci = 0, 0
    for i in range(n):
        if ci < k and cross[ci] == i:
            moved_at[yidx[i]] = event
            ci += 1
        else:
            yf[kept], yl[kept], yidx[kept] = yf[i], yl[i], yidx[i]
            kept += 1
    return kept


@numba.njit(cache=True)
def descend(root, gate_root, size, slack, max_depth, tree, members, yf, yl, yreach, ordered, ybegin, yend):
    """The walk of ge_level2 ``_adopt`` from ``root`` for an offered block of aligned ``size`` whose
    members' firsts and lasts are ``yf``/``yl`` (member order; ``yreach``, ``ordered``, ``ybegin`` and
    ``yend`` as its ``_Timeline`` and span give them; none is written), after judging ``root`` itself
    when ``gate_root`` (level 2's ``_may_share``). Returns (the node that takes the block, -1 if none,
    -2 if ``root`` refused it; the number of splits; per member, the split that took it away or -1; the
    remaining members' firsts, lasts and running maximum of the lasts in the first ``n`` places of the
    arrays returned, ``n``, and whether they are in order)."""
    n = yf.shape[0]
    moved_at = np.full(n, -1, np.int64)
    cross = np.empty(n, np.int64)
    yidx = np.arange(0)
    own = False   # the member arrays are the caller's until the first split
    events = 0
    if gate_root:
        k = _crossing(root, tree, members, yf, yl, yreach, n, ordered, ybegin, yend, cross)
        if k == n:
            return -2, events, moved_at, yf, yl, yreach, n, ordered
        if k > 0:
            yf, yl, yreach, yidx, own = yf.copy(), yl.copy(), yreach.copy(), np.arange(n), True
            n = _leave(yf, yl, yidx, cross, k, n, moved_at, events)
            events += 1
            ordered, ybegin, yend = _refresh(yf, yl, n, yreach)
    stack_node = np.empty(max_depth + 2, np.int64)
    stack_next = np.empty(max_depth + 2, np.int64)
    depth = 0
    stack_node[0] = root
    stack_next[0] = tree[FIRST_CHILD, root] if max_depth > 0 else -1
    while True:
        node = stack_node[depth]
        c = stack_next[depth]
        descended = False
        while c != -1:
            nxt = tree[NEXT_SIBLING, c]
            k = _crossing(c, tree, members, yf, yl, yreach, n, ordered, ybegin, yend, cross)
            shared = k != n
            if k > 0 and shared:
                if not own:
                    yf, yl, yreach, yidx, own = yf.copy(), yl.copy(), yreach.copy(), np.arange(n), True
                n = _leave(yf, yl, yidx, cross, k, n, moved_at, events)
                events += 1
                ordered, ybegin, yend = _refresh(yf, yl, n, yreach)
            if shared:
                if tree[FIRST_CHILD, c] != -1:
                    stack_next[depth] = nxt
                    depth += 1
                    stack_node[depth] = c
                    stack_next[depth] = tree[FIRST_CHILD, c] if depth < max_depth else -1
                    descended = True
                    break
                if tree[OFFSET, c] + size <= tree[ALIGN, c] + slack:
                    return c, events, moved_at, yf, yl, yreach, n, ordered
            c = nxt
        if descended:
            continue
        if tree[OFFSET, node] + size <= tree[ALIGN, node] + slack:
            return node, events, moved_at, yf, yl, yreach, n, ordered
        if depth == 0:
            return -1, events, moved_at, yf, yl, yreach, n, ordered
        depth -= 1


def _grow(a: np.ndarray, need: int) -> np.ndarray:
    """``a`` with at least ``need`` columns (doubling), new columns -1."""
    if need <= a.shape[1]:
        return a
    out = np.full((a.shape[0], max(need, 2 * a.shape[1])), -1, dtype=np.int64)
    out[:, :a.shape[1]] = a
    return out


class Mirror:
    """The level-2 trees as flat arrays for :func:`descend`; a block enters when it first becomes a
    parent or is taken into a tree, and its members never change after that (only an offered block,
    which has no children and no parent yet, is ever split)."""

    def __init__(self, members: int, nodes: int):
        self.slot: dict[int, int] = {}   # block id -> node
        self.blocks: list = []           # node -> block
        self.tree = np.full((11, max(nodes, 1)), -1, dtype=np.int64)
        self.members = np.full((2, max(members, 1)), -1, dtype=np.int64)
        self.pool = 0

    @staticmethod
    def eligible(blocks) -> bool:
        """One stream, no continuous block, no member used on another stream (so ``_follows`` and the
        continuous path never apply, and interval reuse is never refused for a remote member)."""
        streams = {b.stream for b in blocks}
        return (len(streams) <= 1 and not any(b.continuous for b in blocks)
                and not any(s != u.stream for b in blocks for u in b.units for s, _ in u.uses))

    def node(self, block, timeline, align: int) -> int:
        """The node of ``block``, added with its current members if it has none yet."""
        k = self.slot.get(block.id)
        if k is not None:
            return k
        k = len(self.blocks)
        self.slot[block.id] = k
        self.blocks.append(block)
        self.tree = tree = _grow(self.tree, k + 1)
        m, start = len(timeline.sorted_firsts), self.pool
        self.members = _grow(self.members, start + m)
        self.members[SORTED_FIRST, start:start + m] = timeline.sorted_firsts
        self.members[REACH, start:start + m] = timeline.reach
        self.pool += m
        tree[BEGIN:, k] = (block.begin, block.end, timeline.lo, timeline.hi, block.child_offset, align, start, m)
        return k

    def link(self, parent: int, child: int, size: int) -> None:
        """``child`` becomes the last child of ``parent``, whose used room grows by ``size``."""
        tree = self.tree
        last = tree[LAST_CHILD, parent]
        tree[FIRST_CHILD if last == -1 else NEXT_SIBLING, parent if last == -1 else last] = child
        tree[LAST_CHILD, parent] = child
        tree[OFFSET, parent] += size

    def descend(self, root: int, gate_root: bool, block, timeline, size: int, slack: int, max_depth: int):
        """:func:`descend` over the mirror for ``block`` offered (``timeline`` its members'): (node, -1 or
        -2; splits; member -> split that took it, or -1; the arrays of the members that stay, as
        :func:`descend` returns them). The member arrays are kept on the timeline (a block is offered to
        several parents; a split gives it a new timeline)."""
        if timeline.arrays is None:
            timeline.arrays = (np.array(timeline.firsts, dtype=np.int64), np.array(timeline.lasts, dtype=np.int64),
                               np.array(timeline.reach, dtype=np.int64))
        yf, yl, yreach = timeline.arrays
        return descend(root, gate_root, size, slack, max_depth, self.tree, self.members, yf, yl, yreach,
                       timeline.ordered, block.begin, block.end)
