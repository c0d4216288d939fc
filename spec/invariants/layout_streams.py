"""Layout across streams: memory two tensors share is handed over in an order the streams guarantee
(applies to plans that put their nodes on two or more streams; part of the layout concern, listed in
spec/invariants/layout.py).

LAYOUT-NO-OVERLAP judges lifetimes by steps, a total order. On several streams the steps are only one
order the nodes may run in: tasks of one stream run in step order, and across streams only a chain of
data edges, control edges and same-stream successions orders two tasks (each edge between streams is an
event). A node without a task where such an edge lands (``stream_labels``) holds its stream there: the
edge's receive event sits in front of it, so the next task of its stream waits for it. This claim
recomputes that happens-before order from the plan's own facts (``streams``, ``stream_labels``,
``producers``, ``consumers``, ``control``) as a vector clock per node, and asks of every two pieces of
memory that share bytes that one is done with before the other is first touched, in every schedule.
"""
from __future__ import annotations

import bisect

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._util import GE_MEM, families
from zcspec.spec.observables.plan import Family, PlanObservation

START, END = "the start of the model (a graph input)", "the end of the model (a graph output)"


def _multi_stream(plan: PlanObservation) -> bool:
    return len(set(plan.streams.values())) > 1


def _clocks(plan: PlanObservation):
    """Node -> {stream: latest step of that stream known to have run before the node, the node itself
    included}; and the edges that point backwards in ``order`` (which no schedule can keep).

    A node with a stream runs a task there, after the stream's previous task; a node without one
    (a view, the NetOutput) passes on what its predecessors know, and when an edge from a node of
    another stream lands on it, it is a point of the stream it is labelled with (``stream_labels``:
    GE puts the edge's receive event in front of it), after the stream's previous point and before
    its next. The node producing a graph input runs nothing and passes nothing on, whatever edges
    reach it, so an edge from it orders nothing."""
    at = {n: i for i, n in enumerate(plan.order)}
    preds: dict[str, set[str]] = {n: set(plan.control.get(n, ())) for n in plan.order}
    for t, steps in plan.consumers.items():
        p = plan.producers.get(t)
        if p is not None:
            for s in steps:
                preds[plan.order[s]].add(p)
    sources = {plan.producers[t] for t in plan.graph_inputs if t in plan.producers}
    clock: dict[str, dict[int, int]] = {}
    backwards = []
    last_on: dict[int, str] = {}
    labels = plan.stream_labels
    for node in plan.order:
        stream = plan.streams.get(node)
        mine: dict[int, int] = {}
        ps = set() if node in sources else set(preds[node])
        if stream is None and node in labels and any(
                p not in sources and plan.streams.get(p, labels.get(p, labels[node])) != labels[node] for p in ps):
            stream = labels[node]
        if stream is not None and stream in last_on:
            ps.add(last_on[stream])
        for p in sorted(ps):
            if at[p] >= at[node]:
                backwards.append((p, node))
                continue
            for s, k in clock[p].items():
                if k > mine.get(s, -1):
                    mine[s] = k
        if stream is not None:
            mine[stream] = at[node]
            last_on[stream] = node
        clock[node] = mine
    return clock, backwards


class _Uses:
    """What one family's memory is touched by: per stream the last step of a task that writes or reads
    it, per stream the latest step known to have run before every such task, and whether it is live
    at the model's start (a graph input, a fixed tensor) or end (a graph output, a fixed tensor)."""

    def __init__(self, plan: PlanObservation, f: Family, clock, tasks: dict[str, list[int]]):
        self.family = f
        members = set(f.members)
        self.start = any(m in members for m in plan.graph_inputs + plan.fixed)
        self.end = any(m in members for m in plan.graph_outputs + plan.netoutput_inputs + plan.fixed)
        steps = sorted({s for m in f.members for s in tasks.get(m, ())})
        self.steps = steps
        self.last: dict[int, int] = {}
        self.known: dict[int, int] | None = None
        for s in steps:
            node = plan.order[s]
            stream = plan.streams[node]
            self.last[stream] = max(self.last.get(stream, -1), s)
            mine = {k: v for k, v in clock[node].items() if k != stream}
            mine[stream] = s - 1
            self.known = mine if self.known is None else {k: min(v, mine[k]) for k, v in self.known.items() if k in mine}

    def before(self, other: "_Uses") -> bool:
        """Every task using this memory is known to have run before every task using ``other``'s."""
        if self.end or other.start:
            return False
        if other.known is None:  # no task touches the other memory
            return True
        return all(k <= other.known.get(s, -1) for s, k in self.last.items())


def _task_steps(plan: PlanObservation) -> dict[str, list[int]]:
    """Tensor -> the steps of tasks (nodes with a stream) that write or read it."""
    out: dict[str, list[int]] = {}
    at = {n: i for i, n in enumerate(plan.order)}

    def add(t: str, step: int) -> None:
        if plan.order[step] in plan.streams:
            out.setdefault(t, []).append(step)
    for t, node in plan.producers.items():
        add(t, at[node])
    for t, node in plan.workspaces.items():
        add(t, at[node])
    for t, steps in list(plan.consumers.items()) + list(plan.writes.items()):
        for s in steps:
            add(t, s)
    return out


def _stream_order(plan: PlanObservation):
    clock, backwards = _clocks(plan)
    # An edge backwards in order is wrong on any plan, streams or not: worded without them.
    for p, node in backwards:
        yield violation(f"node {node!r}", f"waits for node {p!r} (a data or control edge), which comes later in "
                        "order: a node cannot run before what it waits for", node=node, waits_for=p)
    if not _multi_stream(plan):
        # One stream or none: the steps are the only order the tasks run in, and LAYOUT-NO-OVERLAP judges
        # sharing by them. The sweep would repeat its finds here in terms of the streams' schedules (and
        # call every node "no task"), on a plan that declares no such thing.
        return
    tasks = _task_steps(plan)
    by_region: dict[str, list[_Uses]] = {}
    for f in families(plan):
        if f.end > f.offset:
            u = _Uses(plan, f, clock, tasks)
            if u.steps or u.start or u.end:  # memory no task touches conflicts with nothing
                by_region.setdefault(f.region, []).append(u)
    for region, uses in sorted(by_region.items()):
        for a, b in _unordered_pairs(plan, uses):
            fa, fb = a.family, b.family
            lo, hi = max(fa.offset, fb.offset), min(fa.end, fb.end)
            yield violation(
                f"tensor {fa.root!r} and tensor {fb.root!r}",
                f"share bytes [{lo}, {hi}) of region {region!r}, but neither is done with before the other is "
                f"touched in every schedule of the streams: {_describe(plan, a)}; {_describe(plan, b)}",
                region=region, tensors=[fa.root, fb.root], bytes=[lo, hi])


def _unordered_pairs(plan: PlanObservation, uses: list[_Uses]):
    """The pairs of one region that share bytes and are not ordered, by a sweep in order of first use.

    Happens-before is transitive, so a piece of memory need only be compared with the latest holders of
    the bytes it takes (a holder it does not replace is one of an exclusive branch, or one a piece of a
    branch follows: a piece of another branch skips that one and must meet the holder); a valid plan is then
    checked in near-linear time, however many tensors reuse one block. Bytes are kept as segments
    [lo, hi) with their holders. After an unordered pair the later piece takes over the bytes, so a
    second violation behind a first may go unreported (the first is)."""
    def first(u: _Uses) -> float:
        # live from the start; else from its first task; memory only held to the end, with no task
        # touching it, can follow anything and goes last
        return -1 if u.start else u.steps[0] if u.steps else float("inf")
    bounds: list[int] = []           # segment starts, sorted
    segs: dict[int, tuple] = {}      # segment start -> (end, holders)
    reported: set[tuple[str, str]] = set()
    for b in sorted(uses, key=lambda u: (first(u), u.family.root)):
        lo, hi = b.family.offset, b.family.end
        _split(bounds, segs, lo)
        _split(bounds, segs, hi)
        i = bisect.bisect_left(bounds, lo)
        while i < len(bounds) and bounds[i] < hi:
            end, held = segs[bounds[i]]
            kept = []
            for a in held:
                if plan.exclusive(a.family.root, b.family.root):
                    kept.append(a)
                elif not a.before(b):
                    if (a.family.root, b.family.root) not in reported:
                        reported.add((a.family.root, b.family.root))
                        yield a, b
                elif plan.branched(b.family.root):
                    # b runs in one branch: a later piece of another branch is exclusive with b, not with a,
                    # and must still meet a (b's being after a says nothing of it)
                    kept.append(a)
            segs[bounds[i]] = (end, kept + [b])
            i += 1
        _fill(bounds, segs, lo, hi, b)
        _coalesce(bounds, segs, lo, hi)


def _split(bounds: list[int], segs: dict, at: int) -> None:
    """Make ``at`` a segment boundary if it falls inside a segment."""
    i = bisect.bisect_right(bounds, at) - 1
    if i < 0 or bounds[i] == at:
        return
    end, held = segs[bounds[i]]
    if at < end:
        segs[bounds[i]] = (at, held)
        segs[at] = (end, list(held))
        bounds.insert(i + 1, at)


def _fill(bounds: list[int], segs: dict, lo: int, hi: int, b: _Uses) -> None:
    """Give the bytes of [lo, hi) that no segment covers to ``b`` alone."""
    gaps, cursor = [], lo
    i = bisect.bisect_left(bounds, lo)
    while i < len(bounds) and bounds[i] < hi:
        if bounds[i] > cursor:
            gaps.append((cursor, bounds[i]))
        cursor = segs[bounds[i]][0]
        i += 1
    if cursor < hi:
        gaps.append((cursor, hi))
    for g0, g1 in gaps:
        bisect.insort(bounds, g0)
        segs[g0] = (g1, [b])


def _coalesce(bounds: list[int], segs: dict, lo: int, hi: int) -> None:
    """Merge neighbouring segments of [lo, hi) that have the same holders (the piece just placed alone,
    typically), so the segments stay as few as the distinct holder sets."""
    i = bisect.bisect_left(bounds, lo)
    while i + 1 < len(bounds) and bounds[i + 1] < hi:
        end, held = segs[bounds[i]]
        nxt_end, nxt_held = segs[bounds[i + 1]]
        if end == bounds[i + 1] and [id(x) for x in held] == [id(x) for x in nxt_held]:
            segs[bounds[i]] = (nxt_end, held)
            del segs[bounds[i + 1]]
            bounds.pop(i + 1)
        else:
            i += 1


def _describe(plan: PlanObservation, u: _Uses) -> str:
    where = [f"{plan.order[s]!r} (stream {plan.streams[plan.order[s]]}, step {s})" for s in u.steps[:4]]
    more = f" and {len(u.steps) - 4} more" if len(u.steps) > 4 else ""
    live = [x for x, on in ((START, u.start), (END, u.end)) if on]
    what = ", ".join(where) + more if where else "no task"
    return f"{u.family.root!r} is used by {what}" + (f", live at {' and '.join(live)}" if live else "")


STREAM_ORDER = Invariant(
    id="LAYOUT-STREAM-ORDER",
    title="On several streams, shared memory changes hands only in an order the streams guarantee",
    statement="When the plan puts its nodes on two or more streams (streams: node -> stream, for the nodes that "
              "run a task), for any two tensors of one region whose bytes intersect (an alias counted with its "
              "root, exclusive branches exempt), every task that writes or reads one of them happens before every "
              "task that writes or reads the other. Happens-before is recomputed from the plan: tasks of one "
              "stream run in step order, and a data edge (producers, consumers) or a control edge (control) from "
              "one node to another orders them across streams; a node without a stream passes its predecessors' "
              "order on, and one labelled with a stream (stream_labels) that such an edge from a node of another "
              "stream reaches also holds that stream at its step, after the stream's earlier nodes and before its "
              "later ones (the edge's receive event sits in front of it); the producer of a graph input passes "
              "on none. A graph input's memory is live from the start and a "
              "graph output's to the end. Every edge must point forward in order.",
    rationale="Step lifetimes (LAYOUT-NO-OVERLAP) assume one order of execution; on several streams a task with a "
              "later step may run before one with an earlier step of another stream, so two tensors whose steps "
              "never meet can still be live together, and two whose step spans do meet may be strictly ordered "
              "by an event. GE's planner shares memory across streams only through the stream edges it builds from "
              "the graph (GetDiffStreamEdgeLife, GetDiffStreamMaxLifeTime, CanBlockLifeReuse); this claim checks "
              "the result from the graph's edges, never from those tables. A plan that reuses across two streams "
              "with no event between them fails here, where only a run on the device (EXEC-NO-RACE) saw it before.",
    ge_source=GE_MEM + "block_mem_assigner.cc (GetDiffStreamEdgeLife, GetDiffStreamMaxLifeTime, CanBlockLifeReuse); "
              "compiler/graph/build/stream/stream_allocator.cc (InsertSyncEvents: an event on every data and "
              "control edge between streams; GenerateSyncEventNodes: its receive node in front of the edge's "
              "destination, a node without a task too)",
    applies_to="plan", concern="layout", predicate=_stream_order, precondition=_multi_stream,
)
