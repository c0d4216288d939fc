"""A model loaded by runtime v1: what ``load`` built (frozen) and the little that changes after (``ModelState``).

``load()`` (load.py) builds every field of a :class:`LoadedModel` in one place. What stays
fixed for the model's life is a frozen field: the device tasks and their streams, each I/O's
``ZeroCopyOffset`` (copy-only decision included), the resolved slots, the refresh table (the
registered slots of each refreshable allocation), where the weight, fixed and I/O regions
are. What an execute or a work-memory move changes lives in the one mutable
:class:`ModelState`: the feature map's base, the base each allocation's slots hold now, the
model's own allocations, the last call's record, whether the model is unloaded.
"""
from __future__ import annotations

import threading

import attrs

from zcspec.impl.runtime.record import ExecutionRecord
from zcspec.impl.runtime.v1.allocator import V1Allocator
from zcspec.impl.runtime.v1.config import LoadOptions
from zcspec.impl.runtime.v1.errors import ParamInvalid
from zcspec.impl.runtime.v1.execute import execute
from zcspec.impl.runtime.v1.refresh import RefreshTable

WORK_MEMORY = "caller work memory"
WEIGHT_MEMORY = "caller weight memory"


@attrs.frozen
class RegionBases:
    """Device addresses of the model's weight, fixed and I/O (zero-copy) regions, fixed at load.

    ``zero_copy_backed`` is False when no memory backs the I/O region (its base then lies past
    the end of device memory); ``shadows`` are the model's own allocations for copy-only I/O in
    an unbacked region: ``(start offset, end offset, address)``. The feature map's base may move
    after load and is ``ModelState.feature_map``.
    """

    weight: int
    fixed: int
    zero_copy: int   # at load; with work_offset, it moves with the feature map
    zero_copy_backed: bool
    shadows: tuple[tuple[int, int, int], ...] = ()
    work_offset: int | None = None   # the I/O region lies in the caller's work memory, this far after the feature map

    def address(self, desc, feature_map: int) -> int:
        """Where the model itself keeps the I/O described by ``desc`` (region + offset), the feature
        map being at ``feature_map``: a shadow allocation for copy-only I/O in an unbacked I/O region."""
        off, region = desc.offset, desc.region
        if region == "zero_copy" and not self.zero_copy_backed:
            for s, e, addr in self.shadows:
                if s <= off < e:
                    return addr + off - s
        if region == "zero_copy" and self.work_offset is not None:
            return feature_map + self.work_offset + off
        return feature_map + off if region == "feature_map" else getattr(self, region) + off


@attrs.frozen(eq=False)
class SessionMemory:
    """The model's hold on its session's ActiveMemoryAllocator (``allocator``, named ``name`` in the
    device trace): the ``(address, size)`` ranges it was given at load, shared with the session's other
    models; unload gives the hold back (GE: ``FreeFeatureMapMem`` -> ``ActiveMemoryAllocator::FreeMemory``)."""

    name: str
    allocator: object
    ranges: tuple[tuple[int, int], ...]


@attrs.define
class ModelState:
    """What changes after load, all under the device lock.

    - ``feature_map``: the feature map's base now (``update_work_memory`` moves it);
    - ``active``: allocation (``classify.FM``/``WEIGHT``/``FIXED`` or an I/O's ``(role, index)``)
      -> the base its registered slots hold now; None while unknown (a refresh failed part way);
    - ``owned``: the model's own allocations, freed at unload;
    - ``user_ranges``: ``(what, start, end)`` of the caller's work and weight memory;
    - ``executions``: successful execute calls; ``last_call``: the last call's record;
    - ``unloaded`` and ``unload_span`` (the unload's ``[begin, end)`` trace positions);
    - ``session_memory``: the model's hold on its session's feature-map memory (None: it has none).
    """

    feature_map: int
    active: dict
    owned: list[int]
    user_ranges: list[tuple[str, int, int]]
    executions: int = 0
    last_call: ExecutionRecord | None = None
    unloaded: bool = False
    unload_span: tuple[int, int] | None = None
    session_memory: SessionMemory | None = None


@attrs.frozen(eq=False)
class LoadedModel:
    """A model loaded on a device. Not built directly: use :func:`zcspec.impl.runtime.v1.load`.

    - ``io``: one ``ZeroCopyOffset`` per model input then output;
    - ``refs``: every task's slots resolved to (allocation, offset), per task;
    - ``tasks``: the device tasks (model order), ``streams``: logical -> device stream,
      ``waits``: per task, the other logical streams it must wait for;
    - ``refresh_table``: the registered slots the per-execution refresh rewrites;
    - ``bases``: where the fixed regions are; ``load_span``: the load's trace positions.
    """

    device: object
    model: object
    options: LoadOptions
    alloc: V1Allocator
    io: tuple
    refs: tuple
    tasks: tuple
    streams: dict
    waits: tuple
    refresh_table: RefreshTable
    bases: RegionBases
    load_span: tuple[int, int]
    state: ModelState

    # -- read-only views -------------------------------------------------------------

    @property
    def lock(self) -> threading.RLock:
        return self.alloc.lock

    @property
    def n_inputs(self) -> int:
        return len(self.model.tasks.inputs)

    @property
    def registered(self) -> int:
        """Registered slots that point into model I/O."""
        return self.refresh_table.io_slots

    @property
    def last_call(self) -> ExecutionRecord | None:
        return self.state.last_call

    @property
    def unloaded(self) -> bool:
        return self.state.unloaded

    def base(self, region: str) -> int:
        """The device address of ``region`` (feature_map, zero_copy, weight or fixed) now."""
        if region == "feature_map":
            return self.state.feature_map
        if region == "zero_copy" and self.bases.work_offset is not None:
            return self.state.feature_map + self.bases.work_offset
        return getattr(self.bases, region)

    def model_address(self, z) -> int:
        """Where the model itself keeps I/O ``z`` (its copy target/source when copy-only)."""
        return self.bases.address(z.desc, self.state.feature_map)

    def model_ranges(self) -> list[tuple[str, int, int]]:
        """(what, start, end) of all memory the model uses: its allocations and the caller's work/weight."""
        out = [(f"model allocation {self.device.allocation(a).tag!r}", a, self.device.allocation(a).end)
               for a in self.state.owned if self.device.allocation(a) is not None]
        shared = self.state.session_memory
        out += [(f"session memory of {shared.name!r}", a, a + n) for a, n in shared.ranges] if shared else []
        return out + self.state.user_ranges

    # -- public calls ----------------------------------------------------------------

    def execute(self, inputs, outputs, *, batch: str | None = None) -> ExecutionRecord:
        """Run once with the user's buffers (model order); returns the call's ExecutionRecord.
        ``batch``: the dynamic-batch branch to run, for a model that has branches (runtime/branches.py)."""
        return execute(self, list(inputs), list(outputs), batch)

    def update_work_memory(self, ptr: int, size: int) -> None:
        """Move the feature map to the caller's ``(ptr, size)``; the next execute refreshes the FM slots
        (``davinci_model.cc`` ``UpdateHbmFmMemBases``). Only for models loaded with ``feature_base_refreshable``."""
        in_work = self.bases.work_offset is not None   # the I/O region moves with it: it needs room too
        need = self.model.memory_size if in_work else self.model.regions.get("feature_map", 0)
        if not self.options.feature_base_refreshable:
            raise ParamInvalid("the work memory can only move when the model was loaded with "
                               "feature_base_refreshable=True (ge.featureBaseRefreshable)", buffer="work")
        if not ptr or size < need:
            raise ParamInvalid(f"Invalid mem param: work memory {ptr:#x} of {size} bytes, the feature map"
                               f"{' and the I/O region it holds' if in_work else ''} need {need}", buffer="work",
                               message_id="E19999")
        with self.lock:
            state = self.state
            if state.feature_map in state.owned:
                state.owned.remove(state.feature_map)
                self.alloc.free(state.feature_map)
            state.user_ranges = [r for r in state.user_ranges if r[0] != WORK_MEMORY]
            state.user_ranges.append((WORK_MEMORY, ptr, ptr + size))
            state.feature_map = ptr

    def unload(self) -> None:
        """Free everything the model owns; later executes raise ModelUnloadedError. Idempotent."""
        with self.lock:
            state = self.state
            if state.unloaded:
                return
            state.unloaded = True
            owned, state.owned = state.owned, []
            start = self.device.trace.mark()
            shared, state.session_memory = state.session_memory, None
            try:
                try:
                    self.alloc.free_all(owned)
                finally:
                    if shared is not None:
                        shared.allocator.free_memory()
            finally:
                state.unload_span = (start, self.device.trace.mark())
