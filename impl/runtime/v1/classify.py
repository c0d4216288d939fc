"""MemoryAppType and TaskArgsRefreshType (``davinci_model.cc`` ``GenMemAllocations``,
``memory_app_type_classifier.cc``, ``task_args_refresh_type_classifier.cc``).

Each task argument slot holds a logical address (region + offset). At load it is
resolved against the logical allocation table, in GE's order (``GenMemAllocations``): the
feature-map segment, then the model inputs, then the outputs, then ABSOLUTE
(GE: base 0; here the weight and fixed regions, whose bases never change, and
copy-only addresses). Its value
on every execution is ``active_base[allocation] + offset`` (``args_io_addrs_updater.cc``).

- MemoryAppType (``memory_app_type_classifier.cc``): weight and fixed memory are FIX; the feature-map
  region is FEATURE_MAP; any address in the zero-copy region is MODEL_IO.
- Refresh bits (``task_args_refresh_type_classifier.cc``): MODEL_IO always gets REFRESH_BY_MODEL_IO; FEATURE_MAP gets
  REFRESH_BY_FM only when the feature base is refreshable; FIX gets none.
- No update policy: GE's ``ModelArgsManager::CalcUpdatePolicy`` (``model_args_manager.cc``) chooses how much of
  its host-side copy of the argument tables to send to the device again; here each slot of an allocation whose
  base changed is written to the device directly (refresh.py), so the slots written are the whole effect.
"""
from __future__ import annotations

import enum

import attrs

REFRESH_BY_MODEL_IO = 1 << 0
REFRESH_BY_FM = 1 << 1

FM = ("fm", 0)
WEIGHT = ("weight", 0)      # ABSOLUTE in GE: fixed for the model's life
FIXED = ("fixed", 0)
ABSOLUTE = (WEIGHT, FIXED)


class MemoryAppType(enum.Enum):
    FIX = "fix"
    FEATURE_MAP = "feature_map"
    MODEL_IO = "model_io"


_APP_TYPE = {"weight": MemoryAppType.FIX, "fixed": MemoryAppType.FIX,
             "feature_map": MemoryAppType.FEATURE_MAP, "zero_copy": MemoryAppType.MODEL_IO}


def memory_app_type(region: str) -> MemoryAppType:
    """``memory_app_type_classifier.cc``: any feature-map-typed address outside the FM segment is model I/O."""
    return _APP_TYPE[region]


def refresh_type(app: MemoryAppType, *, fm_refreshable: bool) -> int:
    if app is MemoryAppType.MODEL_IO:
        return REFRESH_BY_MODEL_IO
    if app is MemoryAppType.FEATURE_MAP and fm_refreshable:
        return REFRESH_BY_FM
    return 0


@attrs.frozen
class SlotRef:
    """Slot ``slot`` of task ``task`` resolves to ``alloc`` + ``offset``; ``app`` and ``refresh``
    are its MemoryAppType and refresh bits."""

    task: int
    slot: int
    alloc: tuple
    offset: int
    app: MemoryAppType
    refresh: int


def io_ranges(model) -> list[tuple[tuple, int, int]]:
    """The zero-copy-region I/O allocations in GE's order: inputs, then outputs ((role, index), start, end)."""
    out = []
    for io in model.tasks.inputs + model.tasks.outputs:
        if io.region == "zero_copy":
            out.append(((io.role, io.index), io.offset, io.offset + io.size))
    return out


def resolve(region: str, offset: int, ranges, *, fm_refreshable: bool, task: int, slot: int) -> SlotRef | None:
    """The allocation holding logical address (region, offset), or None for a zero-copy-region
    address inside no I/O (which a correct model never has)."""
    app = memory_app_type(region)
    bits = refresh_type(app, fm_refreshable=fm_refreshable)
    if app is MemoryAppType.FEATURE_MAP:
        return SlotRef(task, slot, FM, offset, app, bits)
    if app is MemoryAppType.FIX:
        return SlotRef(task, slot, (region, 0), offset, app, 0)
    for key, start, end in ranges:   # first containing allocation wins, as GE's lookup does
        if start <= offset < end:
            return SlotRef(task, slot, key, offset - start, app, bits)
    return None
