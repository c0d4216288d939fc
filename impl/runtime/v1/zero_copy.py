"""ZeroCopyOffset per model input and output, slot registration, and copy-only addresses.

``build_io(model, soc, options)`` resolves every task argument slot against the
logical allocation table (classify.py), registers the slots that point into
each zero-copy input or output (GE's ``SetZeroCopyAddr`` / ``SetOutsideAddrsValue``,
zero_copy_offset.cc), cross-checks them against the compiler's zero-copy
table (a disagreement is an InternalError: the model file and the runtime must
agree on which slots hold model I/O), and decides which I/O is copy-only.

An I/O is copy-only (copied in before / out after every execution, its slots
never refreshed) when any of these holds; ``reasons`` records which:

- zero copy is off for this load;
- it lives in the feature map, not the zero-copy region (6.5.2-6.5.3);
- it is an output whose bytes lie inside an earlier I/O's (a Data feeding NetOutput, an output
  listed twice): GE's ``GenOutputMemAllocations`` finds its address inside that allocation and copies
  it once after the run from that allocation's active base (6.5.3, 6.5.7): ``copy_from`` names the
  I/O and the byte offset, and the earlier I/O stays zero copy;
- its range overlaps another I/O's otherwise (a partial overlap: ``DisableZeroCopy``, 6.4.4-6.4.5);
- no task argument references it (6.4.6);
- reuseZeroCopyMemory is 1 and its block is not a zero-copy block (6.4.3);
- a task that references it cannot have its arguments refreshed on this SoC
  (a fixed address, 6.7.4; raw MemcpyAsync, 6.8.5);
- an HCCL task reads or writes it through a buffer whose zero-copy flag is off
  (6.8.2-6.8.3).
"""
from __future__ import annotations

import attrs

from zcspec.impl.runtime.io_names import io_names
from zcspec.impl.runtime.v1 import classify
from zcspec.impl.runtime.v1.errors import InternalError


@attrs.frozen
class ZeroCopyOffset:
    """One model input or output, named as ``impl.runtime.io_names`` says. ``slots`` are the
    registered (task, slot, relative offset) triples; ``copy_only`` I/O is copied and its slots
    are never refreshed. ``copy_from``: for an output whose bytes lie inside an earlier I/O's, that
    I/O's key and the byte offset: the output is copied from where that I/O is in the call."""

    role: str
    index: int
    name: str
    desc: object = attrs.field(repr=False)
    slots: tuple = ()
    copy_only: bool = False
    reasons: tuple = ()
    zero_copy_block: bool = True
    hccl_no_zero_copy: bool = False
    copy_from: tuple | None = None

    @property
    def key(self) -> tuple:
        return (self.role, self.index)


def resolve_slots(model, *, fm_refreshable: bool) -> list[list[classify.SlotRef]]:
    """Every task's slots resolved to (allocation, offset); InternalError for a dangling I/O-region slot."""
    ranges = classify.io_ranges(model)
    out = []
    for t in model.tasks.tasks:
        refs = []
        for i, s in enumerate(t.slots):
            ref = classify.resolve(s.region, s.offset, ranges, fm_refreshable=fm_refreshable, task=t.index, slot=i)
            if ref is None:
                raise InternalError(f"slot {i} ({s.tensor!r}) points at zero_copy+{s.offset}, inside no model input "
                                    "or output", task=t.node)
            refs.append(ref)
        out.append(refs)
    return out


def cross_check(model, refs) -> None:
    """The slots resolved into I/O must be exactly the compiler's zero-copy table, at the same addresses."""
    io = {(d.role, d.index): d for d in model.tasks.inputs + model.tasks.outputs}
    ours = {(r.task, r.slot): io[r.alloc].offset + r.offset
            for task in refs for r in task if r.app is classify.MemoryAppType.MODEL_IO}
    theirs = {}
    for z in model.tasks.zero_copy:
        d = io.get((z.role, z.index))
        if d is None:
            raise InternalError(f"zero-copy table names {z.role} {z.index}, which the model does not have", task=str(z.task))
        theirs[(z.task, z.slot)] = d.offset + z.relative_offset
    if ours != theirs:
        diff = sorted(set(ours.items()) ^ set(theirs.items()))[:3]
        raise InternalError(f"argument slots resolved into model I/O disagree with the compiler's zero-copy table "
                            f"(GE 6.3.5 vs 5.2); first differences (task, slot) -> offset: {diff}")


def _hccl_flag(task, slot: int) -> bool:
    n_in = sum(1 for s in task.slots if s.role == "in")
    flags, i = (task.zero_copy_in, slot) if slot < n_in else (task.zero_copy_out, slot - n_in)
    return bool(flags[i]) if i < len(flags) else False


def _zero_copy_block(model, role: str, index: int) -> bool:
    """GE's _is_zero_copy_block attribute of model input/output ``index`` (GE: block_mem_assigner.cc
    `MarkZeroCopyBlockAttr`)."""
    table = model.plan.attributes.inputs if role == "input" else model.plan.attributes.outputs
    return table[index].is_zero_copy_block


def copy_sources(model) -> dict[tuple, tuple[tuple, int]]:
    """Output key -> (key of the first earlier I/O whose range holds all of it, byte offset in it), in GE's
    allocation order (inputs, then outputs): GenOutputMemAllocations finds the output inside it (6.5.7)."""
    ranges = classify.io_ranges(model)
    out = {}
    for i, (k, s, e) in enumerate(ranges):
        if k[0] != "output":
            continue
        for k2, s2, e2 in ranges[:i]:
            if s2 <= s and e <= e2 and k2 not in out:
                out[k] = (k2, s - s2)
                break
    return out


def _overlaps(model, sources) -> dict[tuple, list[str]]:
    """I/O key -> the other I/O its range overlaps, leaving out each copy source and the output it holds."""
    ranges = classify.io_ranges(model)
    names = {(d.role, d.index): d.tensor for d in model.tasks.inputs + model.tasks.outputs}
    out: dict[tuple, list[str]] = {}
    for k, s, e in ranges:
        for k2, s2, e2 in ranges:
            held = sources.get(k, (None,))[0] == k2 or sources.get(k2, (None,))[0] == k
            if k2 != k and s < e2 and s2 < e and not held:
                out.setdefault(k, []).append(f"{k2[0]} {names[k2]!r}")
    return out


def _reasons(model, soc, options, d, users, overlaps, sources) -> tuple[list[str], bool]:
    """Why I/O ``d`` must be copied (empty: it can be zero copy), and whether HCCL forbids it."""
    why, hccl_no_zc = [], False
    if not options.zero_copy:
        why.append("zero copy is off for this load")
    if d.region != "zero_copy":
        why.append(f"it lives in the {d.region} region, inside the feature-map allocation "
                   "(GE: davinci_model.cc GenInputMemAllocations / GenOutputMemAllocations)")
    if (d.role, d.index) in sources:
        src = sources[(d.role, d.index)][0]
        why.append(f"its bytes lie inside {src[0]} {src[1]}'s, from where it is copied after the run "
                   f"(GenOutputMemAllocations, 6.5.7)")
    if (d.role, d.index) in overlaps:
        why.append(f"its address is shared with {', '.join(overlaps[(d.role, d.index)])} (DisableZeroCopy, 6.4.4)")
    if d.region == "zero_copy" and not users:
        why.append("no task argument references it (SetCopyOnlyOutput, 6.4.6)")
    if options.reuse_zero_copy_memory and not _zero_copy_block(model, d.role, d.index):
        why.append("reuseZeroCopyMemory=1 and its block is not a zero-copy block (6.4.3)")
    for task, slot in users:
        if d.region == "zero_copy" and not soc.can_refresh(task.kind, in_loop=task.in_loop):
            why.append(f"task {task.node!r} ({task.kind}) cannot have its arguments refreshed on {soc.name} (6.7.4)")
        if task.kind == "hccl" and not _hccl_flag(task, slot):
            hccl_no_zc = True
            why.append(f"HCCL task {task.node!r} has no zero-copy support for it (6.8.2)")
    return why, hccl_no_zc


def _users_outside_zc(model, d) -> list[tuple]:
    """(task, slot) pairs pointing into a feature-map I/O's range (for the HCCL flag only)."""
    return [(t, i) for t in model.tasks.tasks for i, s in enumerate(t.slots)
            if s.region == d.region and d.offset <= s.offset < d.offset + d.size]


def build_io(model, soc, options, refs) -> tuple[ZeroCopyOffset, ...]:
    """One ZeroCopyOffset per model input then output, with registered slots and copy-only decision."""
    cross_check(model, refs)
    tasks = model.tasks.tasks
    users: dict[tuple, list] = {}
    for task_refs in refs:
        for r in task_refs:
            if r.app is classify.MemoryAppType.MODEL_IO:
                users.setdefault(r.alloc, []).append(r)
    sources = copy_sources(model)
    overlaps = _overlaps(model, sources)
    ios = model.tasks.inputs + model.tasks.outputs
    names = io_names(model)
    out = []
    for d in ios:
        mine = users.get((d.role, d.index), [])
        slot_users = [(tasks[r.task], r.slot) for r in mine] if d.region == "zero_copy" else _users_outside_zc(model, d)
        why, hccl = _reasons(model, soc, options, d, slot_users, overlaps, sources)
        out.append(ZeroCopyOffset(
            d.role, d.index, names[(d.role, d.index)], d, tuple((r.task, r.slot, r.offset) for r in mine), bool(why), tuple(why),
            _zero_copy_block(model, d.role, d.index), hccl, sources.get((d.role, d.index))))
    return tuple(out)
