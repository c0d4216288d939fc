"""ZeroCopyOffset per model input and output, slot registration, and which I/O is copied.

``build_io(model, soc, options, refs)`` takes every task argument slot resolved against the
logical allocation table (classify.py), registers the slots that point into each zero-copy
input or output (GE's ``ZeroCopyOffset::SetOutsideAddrsValue``, ``zero_copy_offset.cc``),
cross-checks them against the compiler's zero-copy table (a disagreement is an InternalError:
the model file and the runtime must agree on which slots hold model I/O), and decides which I/O
is copied (copied in before / out after every execution, its own slots never refreshed);
``reasons`` records why.

By default the decision is GE's execute path (``davinci_model.cc`` ``GenMemAllocations``, read by
``NnExecute``): an I/O is copied exactly when its logical address lies inside an allocation built
before its own (``GetMemAllocationByLogicAddr``, which tests the start address only):

- zero copy is off for this load (zcspec's switch: the whole I/O region is then the model's);
- it lives in the feature map (or the weight or fixed region), inside an allocation of the model
  (``GenInputMemAllocations`` / ``GenOutputMemAllocations``);
- its address lies inside an earlier input's or output's allocation (inputs come first, then
  outputs; only I/O that is not itself copied has one): a Data feeding NetOutput, an output
  listed twice. ``copy_from`` names that I/O and the byte offset: the copy goes to (an input) or
  comes from (an output) where that I/O is in the call (``CopyInputForNoZeroCopy`` /
  ``CopyOutputForNoZeroCopy`` use the allocation's active base), and the earlier I/O stays zero copy;
- a task pointing into it cannot have its arguments refreshed on this SoC. GE takes the
  fixed-address path here (``TaskArgsRefreshTypeClassifier``, ``FixedAddrInferrer``); zcspec copies
  (docs/ge-deviations.md).

An input no task reads and an output no task writes are refreshable allocations with no slot:
nothing is copied for them.

With ``legacy_copy_only_addrs`` the decision is GE's legacy paths' instead (the set
``DavinciModel::copy_only_addrs_``, which ``NnExecute`` never reads): the rules above, an output
held in an earlier I/O only when all its bytes are, and also copied when

- its range overlaps another I/O's otherwise (``DisableZeroCopy`` from ``InitNetOutput``);
- no task argument references it (``SetCopyOnlyOutput``);
- reuseZeroCopyMemory is 1 and its block is not a zero-copy block (``InitInputZeroCopy``,
  ``DisableZeroCopyInReuseMemoryMode``);
- an HCCL task reads or writes it through a buffer whose zero-copy flag is off
  (``HcclTaskInfo::InitZeroCopyInfos`` then ``DisableZeroCopy``).
"""
from __future__ import annotations

import attrs

from zcspec.impl.runtime.io_names import io_names
from zcspec.impl.runtime.v1 import classify
from zcspec.impl.runtime.v1.errors import InternalError

ZERO_COPY_OFF = "zero copy is off for this load"


@attrs.frozen
class ZeroCopyOffset:
    """One model input or output, named as ``impl.runtime.io_names`` says. ``slots`` are the
    registered (task, slot, relative offset) triples; ``copy_only`` I/O is copied and its slots
    are never refreshed. ``copy_from``: for I/O whose address lies inside an earlier I/O's
    allocation, that I/O's key and the byte offset: an input is copied to, an output from, where
    that I/O is in the call."""

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
                            f"(zero_copy_offset.cc SetOutsideAddrsValue against set_input_output_offset_pass.cc); "
                            f"first differences (task, slot) -> offset: {diff}")


def _hccl_flag(task, slot: int) -> bool:
    n_in = sum(1 for s in task.slots if s.role == "in")
    flags, i = (task.zero_copy_in, slot) if slot < n_in else (task.zero_copy_out, slot - n_in)
    return bool(flags[i]) if i < len(flags) else False


def _zero_copy_block(model, role: str, index: int) -> bool:
    """GE's _is_zero_copy_block attribute of model input/output ``index`` (``block_mem_assigner.cc``
    ``IsZeroCopyBlock``, carried by the plan)."""
    table = model.plan.attributes.inputs if role == "input" else model.plan.attributes.outputs
    return table[index].is_zero_copy_block


def copy_sources(model) -> dict[tuple, tuple[tuple, int]]:
    """Legacy rule: output key -> (key of the first earlier I/O whose range holds all of it, byte offset in
    it), in GE's allocation order (inputs, then outputs)."""
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
    """Legacy rule: I/O key -> the other I/O its range overlaps, leaving out each copy source and the
    output it holds."""
    ranges = classify.io_ranges(model)
    names = {(d.role, d.index): d.name for d in model.tasks.inputs + model.tasks.outputs}
    out: dict[tuple, list[str]] = {}
    for k, s, e in ranges:
        for k2, s2, e2 in ranges:
            held = sources.get(k, (None,))[0] == k2 or sources.get(k2, (None,))[0] == k
            if k2 != k and s < e2 and s2 < e and not held:
                out.setdefault(k, []).append(f"{k2[0]} {names[k2]!r}")
    return out


def _own_reasons(soc, options, d, users) -> list[str]:
    """The rules of GE's execute path that need no other I/O: zero copy off, an I/O outside the
    zero-copy region, an unrefreshable task pointing into it."""
    why = []
    if not options.zero_copy:
        why.append(ZERO_COPY_OFF)
    if d.region != "zero_copy":
        why.append(f"it lives in the {d.region} region, inside an allocation of the model "
                   "(davinci_model.cc GenInputMemAllocations / GenOutputMemAllocations)")
    for task, _slot in users:
        if d.region == "zero_copy" and not soc.can_refresh(task.kind, in_loop=task.in_loop):
            why.append(f"task {task.node!r} ({task.kind}) cannot have its arguments refreshed on {soc.name}; GE "
                       "would fix its address (task_args_refresh_type_classifier.cc), zcspec copies")
    return why


def _legacy_reasons(model, soc, options, d, users, overlaps, sources) -> tuple[list[str], bool]:
    """GE's legacy copy-only rules (``copy_only_addrs_``), on top of the execute path's own rules."""
    why, hccl_no_zc = [], False
    if (d.role, d.index) in sources:
        src = sources[(d.role, d.index)][0]
        why.append(f"its bytes lie inside {src[0]} {src[1]}'s, from where it is copied after the run "
                   f"(davinci_model.cc GenOutputMemAllocations)")
    if (d.role, d.index) in overlaps:
        why.append(f"its address is shared with {', '.join(overlaps[(d.role, d.index)])} "
                   "(davinci_model.cc DisableZeroCopy)")
    if d.region == "zero_copy" and not users:
        why.append("no task argument references it (davinci_model.cc SetCopyOnlyOutput)")
    if options.reuse_zero_copy_memory and not _zero_copy_block(model, d.role, d.index):
        why.append("reuseZeroCopyMemory=1 and its block is not a zero-copy block (davinci_model.cc InitInputZeroCopy)")
    for task, slot in users:
        if task.kind == "hccl" and not _hccl_flag(task, slot):
            hccl_no_zc = True
            why.append(f"HCCL task {task.node!r} has no zero-copy support for it (hccl_task_info.cc InitZeroCopyInfos)")
    return why, hccl_no_zc


def _reasons(model, soc, options, d, users, overlaps, sources) -> tuple[list[str], bool]:
    """Why I/O ``d`` must be copied (empty: it can be zero copy), and whether HCCL forbids it.
    ``sources``: the I/O whose allocation holds ``d`` (execute path) or all of its bytes (legacy)."""
    why = _own_reasons(soc, options, d, users)
    if options.legacy_copy_only_addrs:
        more, hccl = _legacy_reasons(model, soc, options, d, users, overlaps, sources)
        return why + more, hccl
    if (d.role, d.index) in sources:
        (role, index), offset = sources[(d.role, d.index)]
        verb = "copied into it before" if d.role == "input" else "copied from it after"
        why.append(f"its address lies inside {role} {index}'s allocation, at byte {offset}: {verb} the run "
                   "(davinci_model.cc GenMemAllocations, GetMemAllocationByLogicAddr)")
    return why, False


def _slot_users(model, d) -> list[tuple]:
    """(task, slot) for every argument slot whose logical address lies inside ``d``'s bytes (also slots
    resolved to an earlier I/O holding the same bytes: they read or write ``d``'s bytes all the same)."""
    end = d.offset + max(d.size, 1)
    return [(t, i) for t in model.tasks.tasks for i, s in enumerate(t.slots)
            if s.region == d.region and d.offset <= s.offset < end]


def allocation_sources(model, soc, options) -> dict[tuple, tuple[tuple, int]]:
    """GE's execute path: I/O key -> (key of the earlier I/O whose allocation holds its address, byte
    offset). Allocations are built in order (inputs, then outputs), one per I/O that is not copied; an
    I/O's address is looked up in those built before it by its start (``GetMemAllocationByLogicAddr``).
    With zero copy off the allocations are laid out as if it were on, so an output held in an input
    is still copied from where that input is (the model's own address), as one copy.
    """
    built: list[tuple[tuple, int, int]] = []
    out = {}
    for d in model.tasks.inputs + model.tasks.outputs:
        key = (d.role, d.index)
        if d.region != "zero_copy":
            continue
        hit = next(((k, d.offset - s) for k, s, e in built if s <= d.offset < e), None)
        if hit is not None:
            out[key] = hit
        elif not set(_own_reasons(soc, options, d, _slot_users(model, d))) - {ZERO_COPY_OFF}:
            built.append((key, d.offset, d.offset + d.size))
    return out


def build_io(model, soc, options, refs) -> tuple[ZeroCopyOffset, ...]:
    """One ZeroCopyOffset per model input then output, with registered slots and the copy decision."""
    cross_check(model, refs)
    users: dict[tuple, list] = {}
    for task_refs in refs:
        for r in task_refs:
            if r.app is classify.MemoryAppType.MODEL_IO:
                users.setdefault(r.alloc, []).append(r)
    if options.legacy_copy_only_addrs:
        sources = copy_sources(model)
        overlaps = _overlaps(model, sources)
    else:
        sources, overlaps = allocation_sources(model, soc, options), {}
    names = io_names(model)
    out = []
    for d in model.tasks.inputs + model.tasks.outputs:
        mine = users.get((d.role, d.index), [])
        why, hccl = _reasons(model, soc, options, d, _slot_users(model, d), overlaps, sources)
        out.append(ZeroCopyOffset(
            d.role, d.index, names[(d.role, d.index)], d, tuple((r.task, r.slot, r.offset) for r in mine), bool(why),
            tuple(why), _zero_copy_block(model, d.role, d.index), hccl, sources.get((d.role, d.index))))
    return tuple(out)
