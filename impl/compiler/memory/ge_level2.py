"""GE's ReuseBlocksByLifeTime (block_mem_assigner.cc): level 2 of BlockMemAssigner, which nests the
first stage's blocks into one another (ge_blocks.assign_blocks runs it for the binary-block planner).

Level 2 (2.7, reuse on, binary planner only: 2.7.6): blocks sorted by aligned size descending, ties
fewer members then earlier begin (2.7.1); each top-level block is offered every later block, which
it passes to its children first and otherwise takes while it fits (+512 slack, 2.7.3). A block may
go where its span lies wholly before or after the other's (across streams: after a stream edge,
``_follows``), or, on one stream, by interval reuse: its members that cross none of the other's
stay, the crossing ones leave for a clone block inserted after it (``_interval``), even when it is
not taken in the end. Both must be reusable and of one batch label; zero-copy and atomic blocks
never merge (2.5.10). A continuous input's block takes GE's own path (``AddContinuousLifeReuseBlock``,
:func:`_continuous_pair`): whole lifetimes only, real sizes, no slack, no descent into children, and
a later one of equal aligned size may take the earlier block instead. A continuous output's block is
an ordinary block there, as in GE (``ApplyContinuousMemory`` asks for it without ``continuous``).

Scale: since an offer may split a block that does not fit, level 2 offers every pair, as GE does; only
the candidate's members near the parent are tested, each by a binary search over the parent's sorted
lifetimes (``_crossing``). On a deep CNN the trees are chains about ``MAX_DEPTH`` deep, so each offer
walks a hundred nodes: on one-stream lists that walk runs compiled (ge_descent, the same judgements in
the same order; tests/memory/test_compiled_descent.py holds it to the Python walk, which multi-stream
lists and any replaced ``_interval``/``_crossing`` still take). benchmarks/plan_scale.py measures the
cost, benchmarks/plan_identity.py shows a speed-up changed no plan.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import accumulate

from zcspec.impl.compiler.memory.ge_descent import Mirror
from zcspec.impl.compiler.memory.memory_block import Block

MAX_DEPTH = 100  # kMaxDepthNum (GE: block_mem_assigner.h)
COMPILED_DESCENT = True  # level 2 walks one-stream lists with ge_descent (False: the Python walk, to compare)


def _sort_key(block: Block, options):
    # CompareLifeInterval, ascending mode: aligned size descending, then fewer members, then earlier begin.
    return -block.align_size(options), len(block.units), block.begin


def _mergeable(block: Block) -> bool:
    return block.reusable and block.zero_copy is None and not block.virtual


def _follows(a: Block, b: Block) -> bool:
    """Whether ``b`` (on another stream) may reuse ``a``'s memory, as GE's ``CanBlockLifeReuse`` judges it
    (block_mem_assigner.cc, default memory mode): the latest step of ``a``'s stream known to have run
    before ``b`` begins (``GetDependLifeBegin``) is at or after the node of ``a``'s last unit and after
    ``a``'s life end (``GetLifeEnd``): the last read on ``b``'s stream when ``a``'s last unit is read on
    that one other stream only, else ``a``'s end on its own stream, which already reaches the first node
    there known to run after every read on another stream (``GetDiffStreamMaxLifeTime``). In the first
    case the step must also be at or after every use of ``a`` on its own stream (that use has then run
    before ``b``): GE counts the consumers' streams with its own (``out_stream_count_``), a unit's
    ``uses`` keep them apart. And, unlike GE, every step of ``a``'s tensors' own lifetimes (a reader
    without a task too) comes before ``b`` begins: the plan's lifetimes of two tensors sharing bytes
    never meet, so LAYOUT-NO-OVERLAP and the lower bound over steps hold for such plans too."""
    last = a.units[-1]
    depend = dict(b.units[0].known).get(a.stream, -1)
    uses = dict(last.uses)
    own = uses.pop(a.stream, last.alloc_step)
    end = uses[b.stream] if len(uses) == 1 and b.stream in uses else a.end
    return depend >= max(last.alloc_step, own) and depend > end and last.reach < b.begin


def _remote(unit) -> bool:
    """GE's ``diff_stream_life_time_`` is not empty on the member (``CanIntervalLifeReuse`` then refuses its
    block): ``SetReleaseBlockLifeEnd`` sets it only when every task reading the member runs on one other
    stream and for some of them no node of the member's stream is known to run after it (``Unit.remote``).
    A member also read on its own stream gets its end there and keeps interval reuse
    (graph_continuous_input_memory_reuse_multi_ref_diff_stream: GE's 20480 needs it)."""
    return unit.remote


class _Timeline:
    """What level 2 reads of a block's members, computed once until the members change (``keep_only``;
    the first stage has finished appending by then): each member's first and last step in member
    order, the firsts in ascending order with the running maximum of the lasts in that order, whether
    that order is the members' own (a first-stage block takes members as they are allocated, so it is;
    a split keeps the order), the first member's begin and the last member's end (GE's quick check), and
    whether the last member is used on another stream (:func:`_remote`)."""

    __slots__ = ("firsts", "lasts", "sorted_firsts", "reach", "ordered", "lo", "hi", "remote", "arrays")

    def __init__(self, units):
        self.firsts = [u.first for u in units]
        self.lasts = [u.last for u in units]
        firsts = self.firsts
        self.ordered = all(a <= b for a, b in zip(firsts, firsts[1:]))
        if self.ordered:
            self.sorted_firsts, lasts = firsts, self.lasts
        else:
            spans = sorted(zip(firsts, self.lasts))
            self.sorted_firsts, lasts = [f for f, _ in spans], [last for _, last in spans]
        self.reach = list(accumulate(lasts, max))
        self.lo, self.hi = (firsts[0], self.lasts[-1]) if units else (0, -1)
        self.remote = bool(units) and bool(units[-1].uses) and _remote(units[-1])
        self.arrays = None  # firsts and lasts as arrays, for ge_descent


    @classmethod
    def in_order(cls, units, firsts, lasts, reach) -> "_Timeline":
        """The timeline of ``units`` (members in order of their firsts) from the arrays of their firsts,
        lasts and the running maximum of the lasts, as :class:`_Timeline` computes them."""
        self = cls.__new__(cls)
        self.firsts, self.lasts, self.ordered = firsts.tolist(), lasts.tolist(), True
        self.sorted_firsts, self.reach = self.firsts, reach.tolist()
        self.lo, self.hi = self.firsts[0], self.lasts[-1]
        self.remote = bool(units[-1].uses) and _remote(units[-1])
        self.arrays = (firsts, lasts, reach)
        return self


def _timeline(block: Block) -> _Timeline:
    if block.timeline is None:
        block.timeline = _Timeline(block.units)
    return block.timeline


def _crossing(parent: _Timeline, child: _Timeline, window) -> list[int]:
    """GE's ``CrossLifeTimeNode``: the indexes, among ``window``, of a later block's members (``child``)
    whose lifetimes share a step with a member of ``parent`` (``CrossLifeTime``: inclusive). A member
    outside the span from the parent's first member's begin to its last member's end crosses nothing
    (GE's quick check); inside it, a binary search over the parent's timeline answers."""
    lo, hi = parent.lo, parent.hi
    pf, reach = parent.sorted_firsts, parent.reach
    firsts, lasts = child.firsts, child.lasts
    out = []
    for i in window:
        last, first = lasts[i], firsts[i]
        if last >= lo and first <= hi:
            k = bisect_right(pf, last)
            if k and reach[k - 1] >= first:
                out.append(i)
    return out


def _interval(parent: Block, child: Block, options, clones: list, new_id) -> bool:
    """``CanIntervalLifeReuse`` (AddLifeReuseBlock): on one stream, the child's members whose lifetimes cross none of
    the parent's may live in the parent's memory; the crossing ones leave the child for a clone block
    (appended to ``clones``), which level 2 offers to later parents. The child stays split even when it
    is not adopted in the end, as in GE. Whether any member may stay is returned.

    GE first asks whether a member is near the parent at all (between the parent's first member's begin
    and its last member's end, ``CrossLifeTimeNode``); on the child's timeline the near members lie in
    one window, found by two binary searches, so only they are tested (``_crossing``)."""
    if (parent.stream != child.stream or not parent.units or not child.units or parent.continuous
            or child.continuous):
        return False
    pt, ct = _timeline(parent), _timeline(child)
    if pt.remote or ct.remote:
        return False
    units = child.units
    if ct.ordered:
        window = range(bisect_left(ct.reach, pt.lo), bisect_right(ct.sorted_firsts, pt.hi))
        if not window:
            return True
    else:
        window = range(len(units))
    crossing = _crossing(pt, ct, window)
    if len(crossing) == len(units):
        return False
    if crossing:
        gone = set(crossing)
        moved = [units[i] for i in crossing]
        clone = Block(new_id(), moved[0], options)
        clone.keep_only(moved)
        child.keep_only([u for i, u in enumerate(units) if i not in gone])
        clones.append(clone)
    return True


def _may_share(parent: Block, child: Block, options, clones: list, new_id) -> bool:
    """Whether ``child`` may go into ``parent``'s memory, as far as lifetimes go: ``CanBlockLifeReuse``
    either way round (AddLifeReuseBlock): on one stream the spans of steps do not meet; on two, one block's last use
    is known to be over where the other begins (:func:`_follows`). Otherwise interval reuse may keep part
    of ``child`` (:func:`_interval`, which may split it)."""
    if parent.stream == child.stream:
        if child.end < parent.begin or child.begin > parent.end:
            return True
    elif _follows(parent, child) or _follows(child, parent):
        return True
    return _interval(parent, child, options, clones, new_id)


def _try_adopt(parent: Block, child: Block, options, clones: list, new_id) -> bool:
    """``parent.AddLifeReuseBlock(child)``, once :func:`_may_share` holds: into a child of the
    parent first, else at its end. The child's aligned size does not change while it is offered (a
    split keeps it, see ``Block.align_size``), so it is computed once for the whole descent."""
    size = child.align_size(options)
    slack = 0 if size == options.block_align else options.block_align
    return _adopt(parent, child, size, slack, options, clones, new_id, 0)


def _mirrored_offer(parent: Block, child: Block, options, clones: list, new_id, mirror: Mirror) -> bool:
    """:func:`_may_share`, then :func:`_try_adopt` if it holds, by ge_descent.descend (one-stream lists):
    the splits it reports are replayed here in their order (one clone each, ids drawn in that order, as
    ``_interval`` makes them), then the take. Returns whether ``child`` was taken."""
    size = child.align_size(options)
    slack = 0 if size == options.block_align else options.block_align
    root = mirror.node(parent, _timeline(parent), parent.align_size(options))
    node, splits, moved_at, firsts, lasts, reach, n, ordered = mirror.descend(root, True, child, _timeline(child),
                                                                             size, slack, MAX_DEPTH)
    if splits:
        kept, gone = [], [[] for _ in range(splits)]
        for u, at in zip(child.units, moved_at.tolist()):
            (kept if at < 0 else gone[at]).append(u)
        for moved in gone:
            clone = Block(new_id(), moved[0], options)
            clone.keep_only(moved)
            clones.append(clone)
        child.keep_only(kept)
        if ordered:  # the walk's arrays of the members that stay are their timeline
            child.timeline = _Timeline.in_order(kept, firsts[:n], lasts[:n], reach[:n])
    if node < 0:
        return False
    _take(mirror.blocks[node], child, size)
    mirror.link(node, mirror.node(child, _timeline(child), size), size)
    return True


def _adopt(parent: Block, child: Block, size: int, slack: int, options, clones: list, new_id, depth: int) -> bool:
    if depth > MAX_DEPTH:
        return False
    # GE refuses a child deeper than kMaxDepthNum before judging lifetimes, so no split happens there
    for c in parent.children if depth < MAX_DEPTH else ():
        # _may_share, inlined (this loop is level 2's hottest); the child's span is re-read each time,
        # as a split by _interval changes it
        if c.stream == child.stream:
            if not (child.end < c.begin or child.begin > c.end or _interval(c, child, options, clones, new_id)):
                continue
        elif not (_follows(c, child) or _follows(child, c) or _interval(c, child, options, clones, new_id)):
            continue
        if c.children:
            if _adopt(c, child, size, slack, options, clones, new_id, depth + 1):
                return True
        elif c.child_offset + size <= c.align_size(options) + slack:  # a leaf: only its own room is left
            _take(c, child, size)
            return True
    if parent.child_offset + size > parent.align_size(options) + slack:
        return False
    _take(parent, child, size)
    return True


def _take(parent: Block, child: Block, size: int) -> None:
    parent.children.append(child)
    child.parent = parent
    parent.child_offset += size


def _feeds_continuous_input(block: Block) -> bool:
    """GE's ``continuous_block_`` (``IsNoAlignSizeReuseBlock``): the block of a continuous input, which
    ``ApplyOutMemory`` asks for with ``continuous`` set; a continuous output's block is not one."""
    return block.continuous and block.units[0].kind == "group" and block.units[0].id.endswith("#in")


def _continuous_pair(parent: Block, child: Block, options) -> bool:
    """GE's ``AddContinuousLifeReuseBlock`` (block_mem_assigner.cc), the path ``AddLifeReuseBlock`` takes when
    either block is a continuous input's: only whole lifetimes count (no interval reuse); never two
    continuous blocks, nor a continuous one smaller than the other (largest real sizes, GE's no-align
    sizes); the continuous parent takes the child at its ``child_offset`` if it fits in the parent's real
    size, with no 512 B slack and not through its children; else a continuous child of the same aligned
    size takes the parent, if the parent has no children and fits in the child's real size. Returns
    whether the child took the parent."""
    if parent.stream == child.stream:
        whole = child.end < parent.begin or child.begin > parent.end
    else:
        whole = _follows(parent, child) or _follows(child, parent)
    p_cont, c_cont = _feeds_continuous_input(parent), _feeds_continuous_input(child)
    if (not whole or (p_cont and c_cont) or (p_cont and parent.real < child.real)
            or (c_cont and parent.real > child.real)):
        return False
    size, other = child.align_size(options), parent.align_size(options)
    if p_cont and parent.child_offset + size <= parent.real:
        _take(parent, child, size)
    elif c_cont and other == size and not parent.children and child.child_offset + other <= child.real:
        _take(child, parent, other)
        return True
    return False


def level_two(blocks: list[Block], options) -> list[Block]:
    """ReuseBlocksByLifeTime: returns the sorted block list with children adopted.

    Every later block is offered to every top-level block, whether or not it fits: an offer may split
    it (interval reuse) before the size check refuses it. Clones go right after the block they came
    from; the rest of the list is sorted again when a clone is smaller than the block after them."""
    key = lambda b: _sort_key(b, options)  # noqa: E731
    blocks = sorted(blocks, key=key)
    mirror = (Mirror(sum(len(b.units) for b in blocks), 2 * len(blocks))
              if _compiled_walk(blocks) else None)
    ids = iter(range(max((b.id for b in blocks), default=-1) + 1, 10**9))
    new_id = ids.__next__
    i = 0
    while i < len(blocks):
        parent = blocks[i]
        i += 1
        if parent.parent is not None or not _mergeable(parent):
            continue
        j = i
        while j < len(blocks):
            child = blocks[j]
            j += 1
            if not (child.parent is None and _mergeable(child) and not child.children and child.batch == parent.batch):
                continue
            if _feeds_continuous_input(parent) or _feeds_continuous_input(child):
                if _continuous_pair(parent, child, options):
                    break   # the parent went into the child: GE's later offers to it all fail (child_block_)
                continue
            clones: list[Block] = []
            if mirror is not None:
                _mirrored_offer(parent, child, options, clones, new_id, mirror)
            elif _may_share(parent, child, options, clones, new_id):
                _try_adopt(parent, child, options, clones, new_id)
            if clones:
                blocks[j:j] = clones
                nxt = j + len(clones)
                smallest = min(c.align_size(options) for c in clones + [parent])
                if nxt < len(blocks) and smallest < blocks[nxt].align_size(options):
                    blocks[j:] = sorted(blocks[j:], key=key)
    return blocks


# The Python judgements of interval reuse, as defined here: the compiled walk makes the same ones.
_PYTHON_JUDGES = (_interval, _crossing)


def _compiled_walk(blocks) -> bool:
    """Whether level 2 walks ``blocks`` with ge_descent: a one-stream list (``Mirror.eligible``), and only
    while ``_interval`` and ``_crossing`` are this module's own; when one is replaced (a fault variant of
    checks.faults, a test breaking interval reuse on purpose) the Python walk runs, which calls it."""
    return COMPILED_DESCENT and (_interval, _crossing) == _PYTHON_JUDGES and Mirror.eligible(blocks)
