"""Values no memory plan can hold: negative or overflowing bytes, steps outside the order.

A plan is a planner's claim about memory; a negative size or offset is not a layout to judge but
bad input, and must be refused as such (exit 2), naming the JSON path of the culprit, rather than
reported as a broken claim (a region of size -5 "not covering" a tensor). Bytes must also fit a
signed 64-bit integer, what every planner's arithmetic uses: a size of 2**64 is an overflow in the
planner that wrote it, not a plan. Checked on every :class:`PlanObservation` when it is built
(``__attrs_post_init__``), so the file reader, the Python API and the importers refuse the same.
"""
from __future__ import annotations

from zcspec.spec.errors import ObservationConsistencyError

MAX_BYTES = 2**63 - 1   # int64: the largest byte count or offset a plan may hold


def _bytes(value: int | None, path: str, culprit: str) -> None:
    if value is None:
        return
    if value < 0:
        raise ObservationConsistencyError(f"{value} is negative: bytes and offsets are at least 0",
                                          culprit=culprit, path=path)
    if value > MAX_BYTES:
        raise ObservationConsistencyError(f"{value} does not fit a signed 64-bit integer (at most {MAX_BYTES})",
                                          culprit=culprit, path=path)


def _granule(value: int, path: str, culprit: str) -> None:
    """An alignment: a positive multiple (1 means none)."""
    if value < 1:
        raise ObservationConsistencyError(f"{value} is not an alignment: give a multiple of at least 1 (1: none)",
                                          culprit=culprit, path=path)
    _bytes(value, path, culprit)


def check_values(plan) -> None:
    """ObservationConsistencyError, naming the JSON path, for the first value ``plan`` cannot hold."""
    for i, t in enumerate(plan.tensors):
        for key in ("offset", "size", "aligned_size", "nbytes", "set_size"):
            _bytes(getattr(t, key), f"tensors[{i}].{key}", t.name)
        _bytes(t.offset + t.size, f"tensors[{i}]", t.name)   # its end, offset + size, must fit too
    for i, b in enumerate(plan.blocks):
        for key in ("offset", "size"):
            _bytes(getattr(b, key), f"blocks[{i}].{key}", str(b.id))
    for name, size in plan.regions.items():
        _bytes(size, f"regions.{name}", name)
    for key in ("lower_bound", "naive"):
        _bytes(getattr(plan, key), key, key)
    if plan.attributes is not None:
        a = plan.attributes
        _bytes(a.memory_size, "attributes.memory_size", "memory_size")
        _bytes(a.zero_copy_memory_size, "attributes.zero_copy_memory_size", "zero_copy_memory_size")
        for name, offset in a.basic_offsets.items():
            _bytes(offset, f"attributes.basic_offsets.{name}", name)
    for i, g in enumerate(plan.continuous_groups):
        for j, piece in enumerate(g.pieces):
            _bytes(piece, f"continuous_groups[{i}].pieces[{j}]", g.consumer)
    for region, granule in plan.alignment.block.items():
        _granule(granule, f"alignment.block.{region}", region)
    _granule(plan.alignment.tensor, "alignment.tensor", "tensor")
    for name, arena in plan.arenas.items():
        _granule(arena.alignment, f"arenas.{name}.alignment", name)
    for key in ("streams", "stream_labels"):
        for node, stream in getattr(plan, key).items():
            if stream < 0:
                raise ObservationConsistencyError(f"stream {stream} is negative", culprit=node, path=f"{key}.{node}")
    _check_in_place(plan)


def _check_in_place(plan) -> None:
    for i, s in enumerate(plan.in_place):
        for key, ranges in (("writes", s.writes), ("reads", s.reads)):
            for j, r in enumerate(ranges):
                path = f"in_place[{i}].{key}[{j}]"
                _bytes(r.lo, f"{path}.lo", s.tensor)
                _bytes(r.hi, f"{path}.hi", s.tensor)
                if r.hi < r.lo:
                    raise ObservationConsistencyError(f"the range [{r.lo}, {r.hi}) ends before it starts",
                                                      culprit=s.tensor, path=path)
                if key == "reads":
                    _bytes(r.to, f"{path}.to", s.tensor)


def check_steps(plan) -> None:
    """Lifetimes and accesses must lie in ``order``'s steps; the error names the JSON path."""
    n = len(plan.order)
    seen: dict[str, int] = {}
    for i, node in enumerate(plan.order):
        if node in seen:
            raise ObservationConsistencyError(f"node {node!r} is step {seen[node]} and step {i}: each step of "
                                              "order must name a node of its own", culprit=node, path=f"order[{i}]")
        seen[node] = i
    for i, t in enumerate(plan.tensors):
        if not 0 <= t.first <= t.last < max(n, 1):
            raise ObservationConsistencyError(
                f"tensor {t.name!r} lives during steps {t.first}..{t.last}, outside the {n} steps of order "
                "(or the lifetime is inverted)", culprit=t.name, path=f"tensors[{i}]")
    accessed = [(f"writes.{k}", k, v) for k, v in plan.writes.items()]
    accessed += [(f"consumers.{k}", k, v) for k, v in plan.consumers.items()]
    accessed += [(f"in_place[{i}].step", s.tensor, (s.step,)) for i, s in enumerate(plan.in_place)]
    for path, name, steps in accessed:
        bad = [s for s in steps if not 0 <= s < n]
        if bad:
            raise ObservationConsistencyError(f"tensor {name!r} is accessed at step(s) {bad}, outside the "
                                              f"{n} steps of order", culprit=name, path=path)
    for name, steps in plan.arena_allocations.items():
        bad = [s for s in steps if not 0 <= s < n]
        if bad:
            raise ObservationConsistencyError(f"arena {name!r} is allocated at step(s) {bad}, outside the {n} steps "
                                              "of order", culprit=name, path=f"arena_allocations.{name}")
