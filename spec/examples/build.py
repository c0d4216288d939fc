"""Compact builders for the hand-made example observations.

Examples read like data: a plan is a list of rows
``(name, region, offset, size, first, last[, alias_of])``; an execution is a
small fixed model (input ``x``, output ``y``, one task) with the few facts an
example changes. Every derived field (aligned sizes, blocks, region sizes,
the lower bound) is computed here from the rows, the way a planner would
export them; a violating example then overrides exactly one thing.
"""
from __future__ import annotations

from typing import Any

import attrs

from zcspec.spec.invariants._util import align_up
from zcspec.spec.invariants.layout_bound import recompute_lower_bound
from zcspec.spec.observables import (
    ArgSlot, Block, CallResult, Event, ExecutionObservation, Header, IoTensor, LoadObservation, LoadOptionsObservation,
    LoadOutcome, ModelFileObservation, NodeInfo, OutputResult, PlanObservation, Range, RegionBinding, SlotValue,
    SocProfile, Task, PlacedTensor, UserBuffer, ZeroCopyEntry,
)

BLOCK = 512


@attrs.frozen
class Example:
    """One invariant's smallest satisfying and violating observations; ``culprit`` is what the
    violation must name, ``why`` says in words what the violating one breaks."""

    invariant_id: str
    satisfies: Any = attrs.field(repr=False)
    violates: Any = attrs.field(repr=False)
    culprit: str
    why: str


def plan(rows, *, blocks=(), regions=None, steps=None, lower_bound=None, nbytes=None, **extra: Any) -> PlanObservation:
    """A plan from rows; ``blocks`` lists groups of tensor names that share one block (others get their own);
    ``nbytes`` gives tensors' raw bytes by name. A plan with ``arenas`` (another planner's) has no blocks
    and no block granularity: each arena is as large as its last byte used."""
    tensors = [_row(r) for r in rows]
    for t in tensors:
        t["nbytes"] = (nbytes or {}).get(t["name"])
    if extra.get("arenas"):
        return _arena_plan(tensors, regions, steps, lower_bound, extra)
    by_name = {t["name"]: t for t in tensors}
    groups = [list(g) for g in blocks]
    grouped = {n for g in groups for n in g}
    groups += [[t["name"]] for t in tensors if t["name"] not in grouped and t["alias_of"] is None]
    out_blocks = []
    for i, members in enumerate(groups):
        ts = [by_name[n] for n in members]
        lo, hi = min(t["offset"] for t in ts), max(t["offset"] + t["size"] for t in ts)
        for t in ts:
            t["block"] = i
        out_blocks.append(Block(id=i, region=ts[0]["region"], offset=lo, size=align_up(hi - lo, BLOCK),
                                zero_copy=ts[0]["region"] == "zero_copy", tensors=tuple(members)))
    for t in tensors:  # aliases live in their root's block
        if t["alias_of"] is not None:
            root = t
            while root["alias_of"] is not None:
                root = by_name[root["alias_of"]]
            t["block"] = root["block"]
            out_blocks[root["block"]] = _add_member(out_blocks[root["block"]], t["name"])
    n_steps = steps if steps is not None else max(t["last"] for t in tensors) + 1
    if regions is None:
        regions = {}
        for b in out_blocks:
            regions[b.region] = max(regions.get(b.region, 0), b.end)
    placed = tuple(PlacedTensor(**t) for t in tensors)
    draft = PlanObservation(order=tuple(f"n{i}" for i in range(n_steps)), tensors=placed, blocks=tuple(out_blocks),
                            regions=regions, lower_bound=0, naive=0, **extra)
    naive = sum(t.aligned_size for t in placed if t.region == "feature_map" and t.alias_of is None)
    lb = recompute_lower_bound(draft) if lower_bound is None else lower_bound
    return PlanObservation(order=draft.order, tensors=placed, blocks=draft.blocks, regions=regions,
                           lower_bound=lb, naive=naive, **extra)


def _arena_plan(tensors, regions, steps, lower_bound, extra) -> PlanObservation:
    for t in tensors:
        t["aligned_size"], t["zero_copy"] = t["size"], False
    placed = tuple(PlacedTensor(**t) for t in tensors)
    if regions is None:
        regions = dict.fromkeys(extra["arenas"], 0)
        for t in placed:
            regions[t.region] = max(regions.get(t.region, 0), t.end)
    n_steps = steps if steps is not None else max(t.last for t in placed) + 1
    return PlanObservation(order=tuple(f"n{i}" for i in range(n_steps)), tensors=placed, regions=regions,
                           lower_bound=lower_bound, **extra)


def _row(r) -> dict:
    name, region, offset, size, first, last, *alias = r
    return dict(name=name, region=region, offset=offset, size=size, aligned_size=align_up(size, BLOCK),
                first=first, last=last, block=None, zero_copy=region == "zero_copy",
                alias_of=alias[0] if alias else None)


def _add_member(b: Block, name: str) -> Block:
    return Block(b.id, b.region, b.offset, b.size, b.zero_copy, b.tensors + (name,))


# -- model files ------------------------------------------------------------------------------

GOOD_HEADER = Header(magic="ZCM", version=1, expected_magic="ZCM", supported_versions=(1,), declared_length=4096,
                     actual_length=4096, stored_checksum="9f2c", computed_checksum="9f2c")


def model_file(**fields: Any) -> ModelFileObservation:
    fields.setdefault("header", GOOD_HEADER)
    return ModelFileObservation(**fields)


def node(name: str, type_: str, *inputs: str, view: bool = False) -> NodeInfo:
    return NodeInfo(name=name, type=type_, inputs=inputs, view=view)


def soc(supports: bool = True) -> SocProfile:
    """A SoC of the spec's capability table: ``legacy`` (zero-copy memcpy; loop and HCCL tasks keep
    fixed addresses) or ``nozc`` (no zero-copy capability)."""
    return SocProfile(name="legacy" if supports else "nozc")


def node_task(id_: int, node_name: str, kind: str = "kernel", *, in_loop: bool = False,
              roles: tuple[str, ...] = ("in", "out")) -> Task:
    """A task of ``node_name`` with one feature-map slot per role (``in``/``out``)."""
    return Task(id=id_, kind=kind, node=node_name, in_loop=in_loop,
                slots=tuple(ArgSlot(i, "feature_map", 0, 0, r) for i, r in enumerate(roles)))


def task(id_: int, *slots: tuple) -> Task:
    return Task(id=id_, kind="kernel", slots=tuple(ArgSlot(i, *s) for i, s in enumerate(slots)))


# -- loads and executions ---------------------------------------------------------------------
# One small model: input x and output y live in the zero-copy region; task 0 reads x (slot 0)
# and writes y (slot 1). User buffers: x at 0x80000, y at 0x90000, 400 bytes each (raw size);
# the model's own I/O tensors are 432 bytes (GE's padded size).

FM, ZC = 0x10000, 0x11000
X_MODEL, Y_MODEL = ZC + 0x200, ZC
X_BUF, Y_BUF = 0x80000, 0x90000
RAW = 400
PADDED = 432  # GE's tensor size: align32(400) + 32 padding (GE: op_tensor_utils.cc CalibrateTensorSize)


Y_FM_OFFSET = 0x100   # where y sits when an example puts it in the feature map


def load(runtime: str = "v1", *, copy_only=(), zc_backed: bool = True, io=None, events=None, y_region: str = "zero_copy",
         hccl_flags: tuple[bool, bool] | None = None, soc: str = "ascend910b", **options: Any) -> LoadObservation:
    """The small model loaded; by default its events are the allocations of its regions (the model's).
    Task 0 reads x (slot 0) and writes y (slot 1): a kernel, or with ``hccl_flags`` an HCCL task whose two
    buffers carry those zero-copy flags. ``y_region="feature_map"`` puts y in the feature map.
    ``copy_only`` is only the runtime's label (no verdict reads it)."""
    y_offset = 0 if y_region == "zero_copy" else Y_FM_OFFSET
    y_address = Y_MODEL if y_region == "zero_copy" else FM + Y_FM_OFFSET
    io = io if io is not None else (
        IoTensor("x", "input", X_MODEL, PADDED, RAW, offset=X_MODEL - ZC),
        IoTensor("y", "output", y_address, PADDED, RAW, region=y_region, offset=y_offset))
    if events is None:
        events = (Event(0, "alloc", address=FM, size=0x1000, owner="model", purpose="feature_map"),) + (
            (Event(1, "alloc", address=ZC, size=0x400, owner="model", purpose="zero_copy"),) if zc_backed else ())
    flags = hccl_flags or (None, None)
    slots = (ArgSlot(0, "zero_copy", X_MODEL - ZC, RAW, "in", "x", flags[0]),
             ArgSlot(1, y_region, y_offset, RAW, "out", "y", flags[1]))
    table = (ZeroCopyEntry(0, 0, "x", "input"),) + ((ZeroCopyEntry(0, 1, "y", "output"),) if y_region == "zero_copy" else ())
    return LoadObservation(
        options=LoadOptionsObservation(runtime=runtime, **options),
        regions=(RegionBinding("feature_map", FM, 0x1000), RegionBinding("zero_copy", ZC, 0x400, backed=zc_backed)),
        io=tuple(io), zero_copy_table=table, copy_only=tuple(copy_only), events=tuple(events),
        tasks=(Task(0, "hccl" if hccl_flags else "kernel", slots, node="k"),), soc=soc,
    )


def buffers(x_size: int = RAW, y_size: int = RAW, *, y_address: int = Y_BUF, y_placement: str = "device"):
    return (UserBuffer("x", "input", X_BUF, x_size), UserBuffer("y", "output", y_address, y_size, y_placement))


def events(*specs: dict) -> tuple[Event, ...]:
    """Events from dicts, numbered in order; ``writes``/``reads`` given as (address, size[, tensor]) tuples."""
    out = []
    for seq, spec in enumerate(specs):
        spec = dict(spec)
        for key in ("reads", "writes"):
            spec[key] = tuple(Range(*r) for r in spec.get(key, ()))
        out.append(Event(seq=seq, **spec))
    return tuple(out)


def launch(writes=((Y_BUF, RAW, "y"),), reads=((X_BUF, RAW, "x"),), task: int = 0, **fields: Any) -> dict:
    """Task ``task`` reading and writing ``(address, size[, tensor])`` ranges (by default: x's buffer into y's)."""
    return dict(kind="launch", task=task, reads=reads, writes=writes, **fields)


def execution(ld: LoadObservation | None = None, *, bufs=None, slots=None, io_addresses=None, evs=None,
              outputs=(), ok: bool = True, error: str | None = None, culprit: str | None = None,
              counters: dict | None = None, out_tensors=()) -> ExecutionObservation:
    ld = ld or load()
    return ExecutionObservation(
        load=ld,
        buffers=bufs if bufs is not None else buffers(),
        slots=tuple(SlotValue(*s) for s in (slots if slots is not None else ((0, 0, X_BUF), (0, 1, Y_BUF)))),
        io_addresses=io_addresses if io_addresses is not None else {"x": X_BUF, "y": Y_BUF},
        events=evs if evs is not None else events(launch()),
        outputs=tuple(outputs),
        result=CallResult(ok=ok, error=error, culprit=culprit),
        counters=dict(counters or {}),
        out_tensors=tuple(out_tensors),
    )


def output(digest: str = "sha1:5e1f", peer: str | None = None, diff: float | None = None) -> OutputResult:
    return OutputResult(name="y", digest=digest, peer_digest=peer, oracle_max_abs_diff=diff)


def accepted(ok: bool = True) -> LoadOutcome:
    return LoadOutcome(accepted=ok, error=None if ok else "rejected")
