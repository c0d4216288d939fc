"""Per-execution address refresh (ge-facts.md 6.5.4c-e, 6.5.6, 6.7.5).

``refresh(lm, bases)`` takes the active base each refreshable allocation should
have for this execution (a zero-copy input or output: the user's device buffer,
or the staging buffer of a host one; the feature map: its current base) and
rewrites exactly the registered slots of the allocations whose base changed, to
``base + relative offset``. Executing again with the same buffers rewrites
nothing; with fresh buffers, every registered slot once.

``move_feature_map`` is the work-memory move of a feature-base-refreshable
model: the FM base changes, so the next refresh rewrites the FM slots too.
"""
from __future__ import annotations

import attrs

from zcspec.impl.device import DeviceError
from zcspec.impl.runtime.v1 import classify
from zcspec.impl.runtime.v1.errors import InternalError, ParamInvalid


@attrs.frozen
class RefreshResult:
    policy: classify.UpdatePolicy
    changed: tuple
    slots: int


def refresh(lm, bases: dict, *, host_staged: bool) -> RefreshResult:
    """Point the slots of every allocation whose base changed at its new base; returns what was done."""
    bases = dict(bases)
    bases[classify.FM] = lm.bases["feature_map"]
    changed = tuple(k for k in lm.slots_by_alloc if bases.get(k, lm.active.get(k)) != lm.active.get(k))
    io_hits = sum(len(v) for k, v in lm.slots_by_alloc.items() if k != classify.FM)
    policy = classify.calc_policy(first=False, changed=set(changed), io_hits=io_hits, host_staged=host_staged)
    updates: dict[int, dict[int, int]] = {}
    for k in changed:
        for task, slot, rel in lm.slots_by_alloc[k]:
            updates.setdefault(task, {})[slot] = bases[k] + rel
    for k in changed:
        lm.active[k] = None        # unknown until every task is rewritten (a failure leaves them stale)
    try:
        for task, upd in sorted(updates.items()):
            lm.device.refresh_args(lm.tasks[task], upd)
    except DeviceError as e:
        raise InternalError(f"argument refresh failed: {e}", task=getattr(e, "task", "")) from e
    for k in changed:
        lm.active[k] = bases[k]
    if classify.FM not in lm.slots_by_alloc:
        lm.active[classify.FM] = bases[classify.FM]
    return RefreshResult(policy, changed, sum(len(u) for u in updates.values()))


def move_feature_map(lm, ptr: int, size: int) -> None:
    """Rebind the feature map to the caller's ``(ptr, size)``; only for feature-base-refreshable loads."""
    need = lm.model.regions.get("feature_map", 0)
    if not lm.options.feature_base_refreshable:
        raise ParamInvalid("the work memory can only move when the model was loaded with "
                           "feature_base_refreshable=True (ge.featureBaseRefreshable)", buffer="work")
    if not ptr or size < need:
        raise ParamInvalid(f"Invalid mem param: work memory {ptr:#x} of {size} bytes, the feature map needs {need}",
                           buffer="work", message_id="E19999")
    with lm.lock:
        old = lm.bases["feature_map"]
        if old in lm.owned:
            lm.owned.remove(old)
            lm.alloc.free(old)
        lm.user_ranges = [r for r in lm.user_ranges if r[0] != "caller work memory"]
        lm.user_ranges.append(("caller work memory", ptr, ptr + size))
        lm.bases["feature_map"] = ptr
