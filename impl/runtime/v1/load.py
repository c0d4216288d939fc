"""Loading a CompiledModel onto a device: memory at load (davinci_model.cc ``InitWeightMem``,
``InitFeatureMapAndP2PMem``), slot registration, unload.

``load(device, model, options, work=None, weight=None)``:

- weights: the caller's ``weight=(ptr, size)`` (size >= the weight region, else
  ParamInvalid E13025, ``InitWeightMem``) or a read-only model allocation; the weights are
  copied into it by one H2D copy either way;
- feature map: the caller's ``work=(ptr, size)`` (size >= the feature map, else
  ParamInvalid E19999, ``InitFeatureMapAndP2PMem``), or, for a model loaded into a session under
  its extend-size static memory policy (``LoadOptions.session``), memory of the session's
  ActiveMemoryAllocator shared with the session's other models (``MallocFeatureMapMem``,
  session.py; with zero copy off the I/O region comes from it too), else a model allocation of
  the feature-map size;
- the zero-copy (I/O) region: allocated only when zero copy is off (every I/O is
  then copied through it). With zero copy on it is left unbacked (a deliberate
  difference from GE, which backs it unless reuseZeroCopyMemory=1) except when
  the caller's work memory covers it and reuseZeroCopyMemory is 0; its logical
  addresses then point past the end of device memory, so a slot nobody
  refreshed faults instead of reading stale data. Copy-only I/O in an unbacked
  region gets a small model allocation of its own (its "model address");
- argument tables: one model allocation, written once (args.py).

``load`` builds the whole :class:`~zcspec.impl.runtime.v1.loaded.LoadedModel` here, in
one place: resolved slots and I/O (zero_copy.py), region bases, device tasks, the
refresh table (the slots registered under each refreshable allocation) and the initial
state. A failing load frees whatever it allocated and raises. ``query_size(model)`` is
aclmdlQuerySize: work = ``memory_size`` (including the zero-copy region), weight
= the weight region (``model_manager.cc`` ``GetModelMemAndWeightSize``).
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.platform import storage
from zcspec.impl.runtime.v1 import args as task_args
from zcspec.impl.runtime.v1 import classify
from zcspec.impl.runtime.v1.allocator import V1Allocator
from zcspec.impl.runtime.v1.config import LoadOptions
from zcspec.impl.runtime.v1.errors import InvalidParam, ParamInvalid
from zcspec.impl.runtime.v1.loaded import (
    WEIGHT_MEMORY, WORK_MEMORY, LoadedModel, ModelState, RegionBases, SessionMemory,
)
from zcspec.impl.runtime.v1.refresh import Registration, RefreshTable
from zcspec.impl.runtime.v1.session import malloc_feature_map
from zcspec.impl.runtime.v1.zero_copy import build_io, resolve_slots

_UNBACKED_ALIGN = 1 << 20


def query_size(model) -> tuple[int, int]:
    """(work bytes, weight bytes) a caller must provide to load ``model`` with its own memory."""
    return model.memory_size, model.regions.get("weight", 0)


def _check_caller_memory(model, work, weight) -> None:
    for what, mem in (("work", work), ("weight", weight)):
        if mem is not None and (len(mem) != 2 or not mem[0] or mem[1] < 0):
            raise InvalidParam(f"{what} memory {mem!r} must be (non-null pointer, size >= 0)", buffer=what)
    w_need = model.regions.get("weight", 0)
    if weight is not None and weight[1] < w_need:
        raise ParamInvalid(f"The weight size of model {model.name!r} is {w_need}, but the input size set by user "
                           f"is {weight[1]} (davinci_model.cc InitWeightMem)", buffer="weight")
    fm_need = model.regions.get("feature_map", 0)
    if work is not None and work[1] < fm_need:
        raise ParamInvalid(f"Invalid mem param: work memory of {work[1]} bytes is less than the {fm_need} bytes the "
                           f"feature map needs (memory_size {model.memory_size} - zero_copy_size "
                           f"{model.zero_copy_size}, davinci_model.cc InitFeatureMapAndP2PMem)", buffer="work", message_id="E19999")


def _weight_image(device, model, base: int) -> None:
    """Copy every weight into the weight region at ``base`` by one H2D copy of the whole region."""
    size = model.regions.get("weight", 0)
    if size == 0:
        return
    host = device.host_malloc(size, tag="v1 weight staging")
    try:
        device.host_write(host, np.zeros(size, np.uint8))
        for w in model.weights:
            device.host_write(host + w.offset, storage.image(w.data, w.shape, w.dtype, w.splat))
        device.memcpy(base, host, size, "h2d")
    finally:
        device.host_free(host)


def _unbacked_base(device) -> int:
    """A logical base past the end of the device's memory: any access there faults as unmapped."""
    end = device.mem.base + device.mem.capacity
    return (end + _UNBACKED_ALIGN - 1) // _UNBACKED_ALIGN * _UNBACKED_ALIGN


def _merged_copy_only(io) -> list[tuple[int, int]]:
    """Merged [start, end) zero-copy-region ranges of copy-only I/O (shared addresses share memory)."""
    spans = sorted((z.desc.offset, z.desc.offset + z.desc.size) for z in io
                   if z.copy_only and z.copy_from is None and z.desc.region == "zero_copy")
    merged: list[list[int]] = []
    for s, e in spans:
        if merged and s < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [tuple(m) for m in merged]


def load(device, model, options: LoadOptions = LoadOptions(), *, work=None, weight=None) -> LoadedModel:
    """Load ``model`` on ``device``; ``work``/``weight`` are the caller's (ptr, size) memory or None."""
    if model.soc != device.soc.name:
        raise ParamInvalid(f"model {model.name!r} was compiled for SoC {model.soc!r}, the device is "
                           f"{device.soc.name!r}; compile it for this SoC", buffer="model")
    _check_caller_memory(model, work, weight)
    refs = resolve_slots(model, fm_refreshable=options.feature_base_refreshable)
    io = build_io(model, device.soc, options, refs)
    if options.feature_base_refreshable:
        _check_fm_refreshable(model, device.soc, refs)
        if _io_in_work(model, options, work):
            _check_io_refreshable(model, device.soc, io)
    alloc = V1Allocator(device)
    owned: list[int] = []
    own = _Owner(alloc, owned)
    with alloc.lock:
        start = device.trace.mark()
        try:
            bases, feature_map, user_ranges = _place_regions(device, model, options, io, own, work, weight)
            tasks = tuple(task_args.build_tasks(model, own(task_args.args_bytes(model), "argument tables")))
            streams = _streams(device, model)
            table, active = _write_tasks(device, io, refs, tasks, bases, feature_map,
                                         movable=options.feature_base_refreshable)
        except BaseException:
            try:
                alloc.free_all(owned)
            finally:
                for h in own.held:
                    h.allocator.free_memory()
            raise
        span = (start, device.trace.mark())
    return LoadedModel(device, model, options, alloc, io, tuple(tuple(t) for t in refs), tasks, streams,
                       tuple(cross_stream_waits(model)), table, bases, span,
                       ModelState(feature_map, active, owned, user_ranges, session_memory=own.held[0] if own.held else None))


def cross_stream_waits(model) -> list[tuple[int, ...]]:
    """For each task, the other logical streams whose earlier tasks wrote memory it reads, or ran a
    task its control edges order it after (``TaskDef.after``): an event recorded there and waited for
    here orders them (GE's stream-assignment events).

    Reads and writes are matched by the bytes they touch (region, offset, size), not by tensor name:
    a view or an in-place output is another name for its root's memory, and a piece of a continuous
    group lies inside the group's tensor, so a reader of any of them waits for the writer of the bytes.
    """
    writes: dict[str, list[tuple[int, int, int]]] = {}   # region -> [(start, end, stream)] of earlier writes
    out = []
    tasks = model.tasks.tasks
    for t in tasks:
        others = {tasks[a].stream for a in t.after}
        for s in t.slots:
            if s.role == "in":
                start, end = s.offset, s.offset + s.nbytes
                others |= {w for a, b, w in writes.get(s.region, ()) if a < end and start < b}
        out.append(tuple(sorted(others - {t.stream})))
        for s in t.slots:
            if s.role == "out":
                writes.setdefault(s.region, []).append((s.offset, s.offset + s.nbytes, t.stream))
    return out


def _check_fm_refreshable(model, soc, refs) -> None:
    """A movable feature map needs every task that points into it to be refreshable
    (``task_args_refresh_type_classifier.cc``)."""
    for t, task_refs in zip(model.tasks.tasks, refs):
        if any(r.alloc == classify.FM for r in task_refs) and not soc.can_refresh(t.kind, in_loop=t.in_loop):
            raise ParamInvalid(f"feature_base_refreshable needs refreshable tasks, but {t.kind} tasks cannot be "
                               f"refreshed on {soc.name} and this one points into the feature map", task=t.node)


def _io_in_work(model, opts, work) -> bool:
    """Whether the I/O (zero-copy) region lies in the caller's work memory, after the feature map: the work
    memory covers the model's whole memory size and reuseZeroCopyMemory does not leave the region unbacked."""
    return work is not None and work[1] >= model.memory_size and not opts.reuse_zero_copy_memory


def _check_io_refreshable(model, soc, io) -> None:
    """A movable work memory holding the I/O region moves the copy-only I/O with it: the tasks that point
    at such I/O (their slots are otherwise never refreshed) must be refreshable."""
    for z in io:
        for t, _slot, _rel in (z.slots if z.copy_only else ()):
            task = model.tasks.tasks[t]
            if not soc.can_refresh(task.kind, in_loop=task.in_loop):
                raise ParamInvalid(f"feature_base_refreshable with the I/O region in the work memory needs "
                                   f"refreshable tasks, but {task.kind} tasks cannot be refreshed on {soc.name} and "
                                   f"this one points at copy-only I/O {z.name!r}", task=task.node)


class _Owner:
    """Allocates model memory and remembers it in ``owned`` (freed at unload, or if the load fails);
    ``held``: the model's hold on its session's memory (given back at unload, or if the load fails)."""

    def __init__(self, alloc: V1Allocator, owned: list[int]):
        self.alloc, self.owned = alloc, owned
        self.held: list[SessionMemory] = []

    def __call__(self, size: int, what: str, **kw) -> int:
        addr = self.alloc.malloc(size, what, **kw)
        self.owned.append(addr)
        return addr


def _place_regions(device, model, opts, io, own: _Owner, work, weight) -> tuple[RegionBases, int, list]:
    """Back (or not) each region: (the fixed region bases, the feature map's base, the caller's memory ranges).
    Memory taken from the session's allocator is recorded in ``own.held`` (one hold, given back at unload)."""
    regions, user_ranges = model.regions, []
    if weight is not None:
        weight_base = weight[0]
        user_ranges.append((WEIGHT_MEMORY, weight[0], weight[0] + weight[1]))
    else:
        weight_base = own(regions.get("weight", 0), "weights", read_only=True)
    _weight_image(device, model, weight_base)
    fm = regions.get("feature_map", 0)
    session_io = None
    if work is not None:
        feature_map = work[0]
        user_ranges.append((WORK_MEMORY, work[0], work[0] + work[1]))
    elif opts.shares_feature_map and fm:
        allocator = opts.session.allocator(device)
        io_backed = not opts.zero_copy
        feature_map, session_io = malloc_feature_map(allocator, model.name, fm, model.zero_copy_size, io_backed)
        ranges = ((feature_map, fm),) + (((session_io, model.zero_copy_size),) if session_io is not None else ())
        own.held.append(SessionMemory(allocator.name, allocator, ranges))
    else:
        feature_map = own(fm, "feature map")
    fixed = own(regions["fixed"], "fixed memory") if regions.get("fixed", 0) else _unbacked_base(device)
    shadows = []
    in_work = None
    if _io_in_work(model, opts, work):
        zero_copy, backed, in_work = work[0] + fm, True, fm
    elif session_io is not None:
        zero_copy, backed = session_io, True
    elif not opts.zero_copy:
        zero_copy, backed = own(model.zero_copy_size, "I/O region"), True
    else:
        zero_copy, backed = _unbacked_base(device), False
        for s, e in _merged_copy_only(io):
            shadows.append((s, e, own(e - s, f"copy-only I/O [{s}, {e})")))
    return RegionBases(weight_base, fixed, zero_copy, backed, tuple(shadows), in_work), feature_map, user_ranges


def _streams(device, model) -> dict[int, int]:
    """Logical stream -> device stream: stream 0 is the device's default, each other a new one."""
    streams = {0: 0}
    for t in model.tasks.tasks:
        if t.stream not in streams:
            streams[t.stream] = device.create_stream()
    return streams


def _write_tasks(device, io, refs, tasks, bases: RegionBases, feature_map: int, movable: bool
                 ) -> tuple[RefreshTable, dict]:
    """Register slots per allocation and write every argument table once; (refresh table, active bases).
    ``movable``: the work memory may move (feature_base_refreshable); copy-only I/O in an I/O region that
    lies in the work memory is then registered under the feature map, and moves with it."""
    active = {classify.FM: feature_map, classify.WEIGHT: bases.weight, classify.FIXED: bases.fixed}
    # Copy-only I/O slots hold a fixed address (never refreshed); every other slot with a
    # refresh bit (kRefreshByModelIo, or kRefreshByFm when the feature base moves:
    # task_args_refresh_type_classifier.cc)
    # is registered under its allocation.
    fixed_values, with_work = {}, []
    for z in io:
        if z.copy_only:
            base = bases.address(z.desc, feature_map)
            fixed_values.update({(t, s): base + rel for t, s, rel in z.slots})
            if movable and bases.work_offset is not None and z.desc.region == "zero_copy":
                with_work += [Registration(classify.FM, t, s, base + rel - feature_map) for t, s, rel in z.slots]
        elif z.desc.region == "zero_copy":
            active[z.key] = bases.zero_copy + z.desc.offset
    table = RefreshTable(tuple(sorted(
        [Registration(r.alloc, r.task, r.slot, r.offset) for task in refs for r in task
         if r.refresh and (r.task, r.slot) not in fixed_values] + with_work, key=lambda r: (r.task, r.slot))))
    for task, values in zip(tasks, task_args.initial_values(refs, active, fixed_values)):
        device.write_args(task, values)
    return table, active
