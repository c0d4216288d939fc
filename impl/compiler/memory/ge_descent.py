"""Level 2's descent into a tree of blocks (ge_blocks ``_adopt``), compiled by numba, for one-stream block lists.

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


@numba.njit(cache=True)
def _refresh(yf, yl, n, yreach):
    """The offered block's order flag, begin and end, and the running maximum of its lasts, over its
    ``n`` remaining members (ge_blocks ``_Timeline`` and ``Block.keep_only``)."""
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
def _gate(c, nbegin, nend, nlo, nhi, mstart, mlen, psorted, preach, yf, yl, yidx, yreach, cross, moved_at, n,
          ordered, ybegin, yend, events):
    """ge_blocks ``_may_share`` on one stream: the spans do not meet, or interval reuse keeps some
    members (``_interval``, ``_crossing``), the crossing ones leaving as split number ``events``.
    Returns (shared, and the offered block's new n, ordered, begin, end and split count)."""
    if yend < nbegin[c] or ybegin > nend[c]:
        return True, n, ordered, ybegin, yend, events
    lo, hi = nlo[c], nhi[c]
    if ordered:
        a = np.searchsorted(yreach[:n], lo, side="left")
        b = np.searchsorted(yf[:n], hi, side="right")
    else:
        a, b = 0, n
    k = 0
    if a < b:
        s, m = mstart[c], mlen[c]
        sorted_firsts = psorted[s:s + m]
        for i in range(a, b):
            last, first = yl[i], yf[i]
            if last >= lo and first <= hi:
                j = np.searchsorted(sorted_firsts, last, side="right")
                if j > 0 and preach[s + j - 1] >= first:
                    cross[k] = i
                    k += 1
    if k == n:
        return False, n, ordered, ybegin, yend, events
    if k > 0:
        kept, ci = 0, 0
        for i in range(n):
            if ci < k and cross[ci] == i:
                moved_at[yidx[i]] = events
                ci += 1
            else:
                yf[kept], yl[kept], yidx[kept] = yf[i], yl[i], yidx[i]
                kept += 1
        n = kept
        events += 1
        ordered, ybegin, yend = _refresh(yf, yl, n, yreach)
    return True, n, ordered, ybegin, yend, events


@numba.njit(cache=True)
def descend(root, gate_root, size, slack, max_depth, first_child, next_sibling, nbegin, nend, nlo, nhi, noffset,
            nalign, mstart, mlen, psorted, preach, yf, yl, moved_at):
    """The walk of ge_blocks ``_adopt`` from ``root`` for an offered block of aligned ``size`` whose
    members' firsts and lasts are ``yf``/``yl`` (member order), after judging ``root`` itself first
    when ``gate_root`` (level 2's ``_may_share``). Returns (the node that takes the block, -1 if none,
    -2 if ``root`` refused it; the number of splits); ``moved_at[i]`` is set to the split that took
    member ``i`` away."""
    n = yf.shape[0]
    yf, yl = yf.copy(), yl.copy()
    yidx = np.arange(n)
    yreach = np.empty(n, np.int64)
    cross = np.empty(n, np.int64)
    ordered, ybegin, yend = _refresh(yf, yl, n, yreach)
    events = 0
    if gate_root:
        ok, n, ordered, ybegin, yend, events = _gate(root, nbegin, nend, nlo, nhi, mstart, mlen, psorted, preach,
                                                     yf, yl, yidx, yreach, cross, moved_at, n, ordered, ybegin,
                                                     yend, events)
        if not ok:
            return -2, events
    stack_node = np.empty(max_depth + 2, np.int64)
    stack_next = np.empty(max_depth + 2, np.int64)
    depth = 0
    stack_node[0] = root
    stack_next[0] = first_child[root] if max_depth > 0 else -1
    while True:
        node = stack_node[depth]
        c = stack_next[depth]
        descended = False
        while c != -1:
            nxt = next_sibling[c]
            ok, n, ordered, ybegin, yend, events = _gate(c, nbegin, nend, nlo, nhi, mstart, mlen, psorted, preach,
                                                         yf, yl, yidx, yreach, cross, moved_at, n, ordered, ybegin,
                                                         yend, events)
            if ok:
                if first_child[c] != -1:
                    stack_next[depth] = nxt
                    depth += 1
                    stack_node[depth] = c
                    stack_next[depth] = first_child[c] if depth < max_depth else -1
                    descended = True
                    break
                if noffset[c] + size <= nalign[c] + slack:
                    return c, events
            c = nxt
        if descended:
            continue
        if noffset[node] + size <= nalign[node] + slack:
            return node, events
        if depth == 0:
            return -1, events
        depth -= 1


def _grow(a: np.ndarray, need: int, fill: int) -> np.ndarray:
    if need <= a.shape[0]:
        return a
    out = np.full(max(need, 2 * a.shape[0]), fill, dtype=a.dtype)
    out[:a.shape[0]] = a
    return out


class Mirror:
    """The level-2 trees as flat arrays for :func:`descend`; a block enters when it first becomes a
    parent or is taken into a tree, and its members never change after that (only an offered block,
    which has no children and no parent yet, is ever split)."""

    def __init__(self, members: int, nodes: int):
        self.count = 0
        self.slot: dict[int, int] = {}   # block id -> node
        self.blocks: list = []
        z = lambda k, fill=0: np.full(max(k, 1), fill, dtype=np.int64)  # noqa: E731
        self.first_child, self.last_child, self.next_sibling = z(nodes, -1), z(nodes, -1), z(nodes, -1)
        self.begin, self.end, self.lo, self.hi = z(nodes), z(nodes), z(nodes), z(nodes)
        self.offset, self.align, self.mstart, self.mlen = z(nodes), z(nodes), z(nodes), z(nodes)
        self.pool = 0
        self.sorted_firsts, self.reach = z(members), z(members)

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
        k = self.count
        self.count += 1
        self.slot[block.id] = k
        self.blocks.append(block)
        for name, fill in (("first_child", -1), ("last_child", -1), ("next_sibling", -1), ("begin", 0),
                           ("end", 0), ("lo", 0), ("hi", 0), ("offset", 0), ("align", 0), ("mstart", 0),
                           ("mlen", 0)):
            setattr(self, name, _grow(getattr(self, name), k + 1, fill))
        m = len(timeline.sorted_firsts)
        self.sorted_firsts = _grow(self.sorted_firsts, self.pool + m, 0)
        self.reach = _grow(self.reach, self.pool + m, 0)
        self.sorted_firsts[self.pool:self.pool + m] = timeline.sorted_firsts
        self.reach[self.pool:self.pool + m] = timeline.reach
        self.mstart[k], self.mlen[k] = self.pool, m
        self.pool += m
        self.begin[k], self.end[k], self.lo[k], self.hi[k] = block.begin, block.end, timeline.lo, timeline.hi
        self.offset[k], self.align[k] = block.child_offset, align
        return k

    def link(self, parent: int, child: int, size: int) -> None:
        """``child`` becomes the last child of ``parent``, whose used room grows by ``size``."""
        if self.last_child[parent] == -1:
            self.first_child[parent] = child
        else:
            self.next_sibling[self.last_child[parent]] = child
        self.last_child[parent] = child
        self.offset[parent] += size

    def descend(self, root: int, gate_root: bool, timeline, size: int, slack: int, max_depth: int):
        """:func:`descend` over the mirror for an offered block of ``timeline``: (node, -1 or -2,
        splits, member -> split that took it or -1). The member arrays are kept on the timeline
        (a block is offered to several parents; a split gives it a new timeline)."""
        if timeline.arrays is None:
            timeline.arrays = (np.array(timeline.firsts, dtype=np.int64), np.array(timeline.lasts, dtype=np.int64))
        yf, yl = timeline.arrays
        moved_at = np.full(len(yf), -1, dtype=np.int64)
        node, events = descend(root, gate_root, size, slack, max_depth, self.first_child, self.next_sibling,
                               self.begin, self.end, self.lo, self.hi, self.offset, self.align, self.mstart,
                               self.mlen, self.sorted_firsts, self.reach, yf, yl, moved_at)
        return int(node), int(events), moved_at
