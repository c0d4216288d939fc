"""Loading a CompiledModel onto a device: memory at load (ge-facts.md 6.1), slot registration, unload.

``load(device, model, options, work=None, weight=None)``:

- weights: the caller's ``weight=(ptr, size)`` (size >= the weight region, else
  ParamInvalid E13025, 6.1.2) or a read-only model allocation; the weights are
  copied into it by one H2D copy either way;
- feature map: the caller's ``work=(ptr, size)`` (size >= the feature map, else
  ParamInvalid E19999, 6.1.3) or a model allocation of the feature-map size;
- the zero-copy (I/O) region: allocated only when zero copy is off (every I/O is
  then copied through it). With zero copy on it is left unbacked (a deliberate
  difference from GE, which backs it unless reuseZeroCopyMemory=1) except when
  the caller's work memory covers it and reuseZeroCopyMemory is 0; its logical
  addresses then point past the end of device memory, so a slot nobody
  refreshed faults instead of reading stale data. Copy-only I/O in an unbacked
  region gets a small model allocation of its own (its "model address");
- argument tables: one model allocation, written once (args.py).

A failing load frees whatever it allocated and raises. ``query_size(model)`` is
aclmdlQuerySize: work = ``memory_size`` (including the zero-copy region), weight
= the weight region (6.1.5).
"""
from __future__ import annotations

import numpy as np

from zcspec.impl.platform import dtypes
from zcspec.impl.runtime.v1 import args as task_args
from zcspec.impl.runtime.v1 import classify
from zcspec.impl.runtime.v1.allocator import V1Allocator
from zcspec.impl.runtime.v1.config import LoadOptions
from zcspec.impl.runtime.v1.errors import InvalidParam, ParamInvalid
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
                           f"is {weight[1]} (ge-facts.md 6.1.2)", buffer="weight")
    fm_need = model.regions.get("feature_map", 0)
    if work is not None and work[1] < fm_need:
        raise ParamInvalid(f"Invalid mem param: work memory of {work[1]} bytes is less than the {fm_need} bytes the "
                           f"feature map needs (memory_size {model.memory_size} - zero_copy_size "
                           f"{model.zero_copy_size}, ge-facts.md 6.1.3)", buffer="work", message_id="E19999")


def _weight_image(device, model, base: int) -> None:
    """Copy every weight into the weight region at ``base`` by one H2D copy of the whole region."""
    size = model.regions.get("weight", 0)
    if size == 0:
        return
    host = device.host_malloc(size, tag="v1 weight staging")
    try:
        device.host_write(host, np.zeros(size, np.uint8))
        for w in model.weights:
            dt = np.dtype(dtypes.numpy_dtype(w.dtype))
            data = np.frombuffer(w.data, dt)
            arr = np.broadcast_to(data, w.shape) if w.splat else data
            device.host_write(host + w.offset, np.ascontiguousarray(arr))
        device.memcpy(base, host, size, "h2d")
    finally:
        device.host_free(host)


def _unbacked_base(device) -> int:
    """A logical base past the end of the device's memory: any access there faults as unmapped."""
    end = device.mem.base + device.mem.capacity
    return (end + _UNBACKED_ALIGN - 1) // _UNBACKED_ALIGN * _UNBACKED_ALIGN


def _merged_copy_only(io) -> list[tuple[int, int]]:
    """Merged [start, end) zero-copy-region ranges of copy-only I/O (shared addresses share memory)."""
    spans = sorted((z.desc.offset, z.desc.offset + z.desc.size) for z in io if z.copy_only and z.desc.region == "zero_copy")
    merged: list[list[int]] = []
    for s, e in spans:
        if merged and s < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [tuple(m) for m in merged]


class LoadedModel:
    """A model loaded on a device. Not built directly: use :func:`load`.

    State the execute path reads and updates: ``bases`` (region -> device address),
    ``active`` (allocation -> the base its slots hold now), ``slots_by_alloc``
    (the registered slots of each refreshable allocation).
    """

    def __init__(self, device, model, options: LoadOptions):
        self.device, self.model, self.options = device, model, options
        self.alloc = V1Allocator(device)
        self.lock = self.alloc.lock
        self.owned: list[int] = []         # model allocations, freed at unload
        self.user_ranges: list[tuple[str, int, int]] = []   # caller work/weight memory
        self.bases: dict[str, int] = {}
        self.backed: dict[str, bool] = {}
        self.shadows: list[tuple[int, int, int]] = []       # (start offset, end offset, address)
        self.unloaded = False
        self.executions = 0
        self.last_call = None
        self.unload_span = None

    # -- addresses ---------------------------------------------------------------------

    def model_address(self, z) -> int:
        """Where the model itself keeps I/O ``z`` (its copy target/source when copy-only)."""
        off, region = z.desc.offset, z.desc.region
        if region == "zero_copy" and not self.backed["zero_copy"]:
            for s, e, addr in self.shadows:
                if s <= off < e:
                    return addr + off - s
        return self.bases[region] + off

    def model_ranges(self) -> list[tuple[str, int, int]]:
        """(what, start, end) of all memory the model uses: its allocations and the caller's work/weight."""
        out = [(f"model allocation {self.device.allocation(a).tag!r}", a, self.device.allocation(a).end)
               for a in self.owned if self.device.allocation(a) is not None]
        return out + self.user_ranges

    # -- public calls ------------------------------------------------------------------

    def execute(self, inputs, outputs):
        """Run once with the user's buffers (model order); returns the call's ExecutionRecord."""
        from zcspec.impl.runtime.v1.execute import execute

        return execute(self, list(inputs), list(outputs))

    def update_work_memory(self, ptr: int, size: int) -> None:
        """Move the feature map to the caller's memory; the next execute refreshes the FM slots (6.5.4d)."""
        from zcspec.impl.runtime.v1.refresh import move_feature_map

        move_feature_map(self, ptr, size)

    def unload(self) -> None:
        """Free everything the model owns; later executes raise ModelUnloadedError. Idempotent."""
        with self.lock:
            if self.unloaded:
                return
            self.unloaded = True
            owned, self.owned = self.owned, []
            start = self.device.trace.mark()
            try:
                self.alloc.free_all(owned)
            finally:
                self.unload_span = (start, self.device.trace.mark())


def load(device, model, options: LoadOptions = LoadOptions(), *, work=None, weight=None) -> LoadedModel:
    """Load ``model`` on ``device``; ``work``/``weight`` are the caller's (ptr, size) memory or None."""
    if model.soc != device.soc.name:
        raise ParamInvalid(f"model {model.name!r} was compiled for SoC {model.soc!r}, the device is "
                           f"{device.soc.name!r}; compile it for this SoC", buffer="model")
    _check_caller_memory(model, work, weight)
    lm = LoadedModel(device, model, options)
    lm.refs = resolve_slots(model, fm_refreshable=options.feature_base_refreshable)
    lm.io = build_io(model, device.soc, options, lm.refs)
    lm.n_inputs = len(model.tasks.inputs)
    if options.feature_base_refreshable:
        _check_fm_refreshable(model, device.soc, lm.refs)
    with lm.lock:
        start = device.trace.mark()
        try:
            _place_regions(lm, work, weight)
            _write_tasks(lm)
        except BaseException:
            lm.alloc.free_all(lm.owned)
            lm.owned = []
            raise
        lm.load_span = (start, device.trace.mark())
    return lm


def cross_stream_waits(model) -> list[tuple[int, ...]]:
    """For each task, the other logical streams whose earlier tasks wrote a tensor it reads: an
    event recorded there and waited for here orders them (GE's stream-assignment events)."""
    writer_stream: dict[str, int] = {}
    out = []
    for t in model.tasks.tasks:
        others = {writer_stream[s.tensor] for s in t.slots if s.role == "in" and s.tensor in writer_stream}
        out.append(tuple(sorted(others - {t.stream})))
        for s in t.slots:
            if s.role == "out":
                writer_stream[s.tensor] = t.stream
    return out


def _check_fm_refreshable(model, soc, refs) -> None:
    """A movable feature map needs every task that points into it to be refreshable (6.7.4)."""
    for t, task_refs in zip(model.tasks.tasks, refs):
        if any(r.alloc == classify.FM for r in task_refs) and not soc.can_refresh(t.kind, in_loop=t.in_loop):
            raise ParamInvalid(f"feature_base_refreshable needs refreshable tasks, but {t.kind} tasks cannot be "
                               f"refreshed on {soc.name} and this one points into the feature map", task=t.node)


def _own(lm, size: int, what: str, **kw) -> int:
    addr = lm.alloc.malloc(size, what, **kw)
    lm.owned.append(addr)
    return addr


def _place_regions(lm, work, weight) -> None:
    model, opts = lm.model, lm.options
    regions = model.regions
    if weight is not None:
        lm.bases["weight"] = weight[0]
        lm.user_ranges.append(("caller weight memory", weight[0], weight[0] + weight[1]))
    else:
        lm.bases["weight"] = _own(lm, regions.get("weight", 0), "weights", read_only=True)
    _weight_image(lm.device, model, lm.bases["weight"])
    fm = regions.get("feature_map", 0)
    if work is not None:
        lm.bases["feature_map"] = work[0]
        lm.user_ranges.append(("caller work memory", work[0], work[0] + work[1]))
    else:
        lm.bases["feature_map"] = _own(lm, fm, "feature map")
    lm.bases["fixed"] = _own(lm, regions["fixed"], "fixed memory") if regions.get("fixed", 0) else _unbacked_base(lm.device)
    covered = work is not None and work[1] >= model.memory_size and not opts.reuse_zero_copy_memory
    if covered:
        lm.bases["zero_copy"], lm.backed["zero_copy"] = work[0] + fm, True
    elif not opts.zero_copy:
        lm.bases["zero_copy"], lm.backed["zero_copy"] = _own(lm, model.zero_copy_size, "I/O region"), True
    else:
        lm.bases["zero_copy"], lm.backed["zero_copy"] = _unbacked_base(lm.device), False
        for s, e in _merged_copy_only(lm.io):
            lm.shadows.append((s, e, _own(lm, e - s, f"copy-only I/O [{s}, {e})")))


def _write_tasks(lm) -> None:
    """Build the device tasks, register slots per allocation, write every argument table once."""
    model, dev = lm.model, lm.device
    lm.tasks = task_args.build_tasks(model, _own(lm, task_args.args_bytes(model), "argument tables"))
    lm.streams = {0: 0}
    for t in model.tasks.tasks:
        if t.stream not in lm.streams:
            lm.streams[t.stream] = dev.create_stream()
    active = {classify.FM: lm.bases["feature_map"], classify.WEIGHT: lm.bases["weight"],
              classify.FIXED: lm.bases["fixed"]}
    # Copy-only I/O slots hold a fixed address (never refreshed); every other slot with a
    # refresh bit (kRefreshByModelIo, or kRefreshByFm when the feature base moves, 6.7.3)
    # is registered under its allocation.
    fixed_values = {}
    for z in lm.io:
        if z.copy_only:
            base = lm.model_address(z)
            fixed_values.update({(t, s): base + rel for t, s, rel in z.slots})
        elif z.desc.region == "zero_copy":
            active[z.key] = lm.bases["zero_copy"] + z.desc.offset
    lm.slots_by_alloc = {}
    for r in (r for task in lm.refs for r in task):
        if r.refresh and (r.task, r.slot) not in fixed_values:
            lm.slots_by_alloc.setdefault(r.alloc, []).append((r.task, r.slot, r.offset))
    lm.active = active
    lm.waits = cross_stream_waits(model)
    for task, values in zip(lm.tasks, task_args.initial_values(lm.refs, active, fixed_values)):
        dev.write_args(task, values)
    lm.registered = sum(len(v) for k, v in lm.slots_by_alloc.items() if k != classify.FM)
