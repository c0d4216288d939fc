"""An independent self-check of a MemoryPlan against its graph (used by the tests only), and ``plan_or_reject``.

It does not trust the planner: lifetimes are recomputed here from the graph
and the plan's order, memory classes (tensors allowed to share bytes) from the
op table, and an alias the plan claims for an in-place output is accepted only
if the op may write in place and nothing reads the input afterwards. Then a
sweep per region: tensors of different classes alive at a common step (and not
in two different dynamic-batch branches) must have disjoint
[offset, offset + aligned_size). Continuous inputs must sit back to back.
"""
from __future__ import annotations

from hypothesis import reject

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.memory.errors import PlanError
from zcspec.impl.compiler.memory.plan import plan_memory


def _padded(nbytes: int, o) -> int:
    return (-(-nbytes // o.size_align)) * o.size_align + o.size_padding


def _aligned(x: int, a: int) -> int:
    return -(-x // a) * a


class _Classes:
    def __init__(self):
        self.parent = {}

    def find(self, x):
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        self.parent[self.find(a)] = self.find(b)


def _own_lifetimes(graph, order):
    step = {n: i for i, n in enumerate(order)}
    end = len(order) - 1
    life = {}
    for n in graph.nodes:
        for t in n.outputs:
            first = 0 if n.op_type == "Data" else step[n.name]
            last = max([step[c] for c in graph.consumers.get(t, ())] + [first])
            life[t] = (first, end if t in graph.outputs else last)
        for i, size in enumerate(n.attr("_workspace_bytes", ()) or ()):
            if size:
                life[f"{n.name}#ws{i}"] = (step[n.name], step[n.name])
    for w in graph.weights:
        life[w.name] = (0, end)
    return life, step


def check_plan(graph, plan) -> list[str]:
    """Every violation found (empty when the plan is safe for ``graph``)."""
    o = plan.options
    errors = []
    placed = {t.name: t for t in plan.tensors}
    order = tuple(plan.order)
    if sorted(order) != sorted(n.name for n in graph.nodes):
        return [f"order {order!r} is not a permutation of the graph's nodes"]
    life, step = _own_lifetimes(graph, order)
    for n in graph.nodes:
        if any(step[graph.producer[t]] >= step[n.name] for t in n.inputs if t in graph.producer):
            errors.append(f"order runs {n.name!r} before one of its producers")
    missing = set(life) - set(placed)
    if missing:
        errors.append(f"tensors without a placement: {sorted(missing)!r}")
        return errors
    classes = _memory_classes(graph, placed, life, step, errors)
    errors += _sweep(graph, plan, placed, life, classes)
    errors += _continuous(graph, placed, o)
    for t in plan.tensors:
        if t.offset + t.size > plan.regions[t.region]:
            errors.append(f"{t.name!r} ends at {t.offset + t.size}, past region {t.region!r} of {plan.regions[t.region]}")
    return errors


def _plan_root(placed, t: str) -> str:
    while placed[t].alias_of is not None:
        t = placed[t].alias_of
    return t


def _memory_classes(graph, placed, life, step, errors) -> _Classes:
    cls = _Classes()
    for name in sorted(graph.node, key=step.__getitem__):
        n = graph.node[name]
        info = ops.info(n.op_type)
        if ops.is_view(n) and n.inputs:
            for t, off in zip(n.outputs, ops.view_offsets(n)):
                cls.union(t, n.inputs[0])
                if placed[t].offset != placed[n.inputs[0]].offset + off:
                    errors.append(f"view output {t!r} at {placed[t].offset}, not {n.inputs[0]!r} + {off}")
        if info.continuous_input == "nopadding":
            for t in n.inputs:
                cls.union(n.outputs[0], t)
        for out_i, in_i in dict.fromkeys(ops.ref_outputs(n) + ops.inplace_pairs(n)):  # a ref may also be a pair
            out, src = n.outputs[out_i], n.inputs[in_i]
            if _plan_root(placed, out) != _plan_root(placed, src) or placed[out].offset != placed[src].offset:
                continue  # the plan gives the output its own memory (maybe another piece of one concat)
            root = cls.find(src)
            later = [t for t, (_, last) in life.items() if cls.find(t) == root and last > step[name]]
            if later:
                errors.append(f"in-place {out!r} shares {src!r}'s memory but {later[0]!r} is read later")
            cls.union(out, src)
    for t in placed.values():  # any other claimed alias is an error: it would hide overlaps
        if t.alias_of is not None and cls.find(t.name) != cls.find(t.alias_of):
            errors.append(f"{t.name!r} claims alias_of={t.alias_of!r}, which no op rule allows")
    return cls


def _label(graph, t: str) -> str:
    node = graph.node.get(graph.producer.get(t, t.split("#ws")[0]))
    return node.attr("_batch_label", "") if node is not None else ""


def _sweep(graph, plan, placed, life, cls) -> list[str]:
    span = {}
    for t, (a, b) in life.items():
        c = cls.find(t)
        lo, hi = span.get(c, (a, b))
        span[c] = (min(lo, a), max(hi, b))
    errors = []
    by_region = {}
    for t in placed.values():
        by_region.setdefault(t.region, []).append(t)
    for region, ts in by_region.items():
        ts.sort(key=lambda t: span[cls.find(t.name)][0])
        active = []
        for t in ts:
            c = cls.find(t.name)
            first, last = span[c]
            active = [a for a in active if span[cls.find(a.name)][1] >= first]
            for a in active:
                la, lt = _label(graph, a.name), _label(graph, t.name)
                if cls.find(a.name) == c or (la and lt and la != lt):
                    continue
                if a.offset < t.offset + t.aligned_size and t.offset < a.offset + a.aligned_size:
                    errors.append(f"{region}: {a.name!r} [{a.offset}, {a.offset + a.aligned_size}) and {t.name!r} "
                                  f"[{t.offset}, {t.offset + t.aligned_size}) overlap while both alive")
            active.append(t)
    return errors


def _continuous(graph, placed, o) -> list[str]:
    errors = []
    for n in graph.nodes:
        kind = ops.info(n.op_type).continuous_input
        if kind is None:
            continue
        for a, b in zip(n.inputs, n.inputs[1:]):
            pa, pb = placed[a], placed[b]
            step = _aligned(_padded(graph.desc[a].nbytes, o), o.block_align) if kind == "padding" else graph.desc[a].nbytes
            if pb.region != pa.region or pb.offset != pa.offset + step:
                errors.append(f"{n.name!r}: input {b!r} at {pb.offset} does not follow {a!r} at {pa.offset} (+{step})")
    return errors


def plan_or_reject(graph, options):
    """Plan ``graph``, which must already have gone through ``mem_layout_conflict``."""
    try:
        return plan_memory(graph, options)
    except PlanError as e:  # pragma: no cover - the pass makes every drawn graph plannable
        assert "continuous" in e.rule
        reject()
