"""The per-execution address refresh rule (ge-facts.md 6.5.4c-e, 6.5.6, 6.7.5), as a pure function.

``refresh(table, active, bindings, feature_map) -> Refresh`` takes the loaded model's
:class:`RefreshTable` (the registered slots of each refreshable allocation, fixed at load),
the base each allocation's slots hold now (``active``), this call's bindings and the
feature map's current base, and returns what must be written: the slot updates
``(task, slot, new address)`` and the active bases afterwards. It touches no device;
``execute.py`` applies the updates.

The rule: an allocation's active base for this call is the address its I/O's tasks use (the
user's device buffer, or the staging buffer of a host one; the feature map: its current
base). Exactly the registered slots of the allocations whose base changed are rewritten, to
``base + relative offset``. The same buffers again rewrite nothing; fresh buffers every
registered slot once. Copy-only I/O has no registered slots and is never refreshed.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import attrs

from zcspec.impl.runtime.v1 import classify
from zcspec.impl.runtime.v1.bind import Binding


@attrs.frozen
class Registration:
    """Slot ``slot`` of task ``task`` holds allocation ``alloc``'s base + ``offset`` (GE's zero-copy
    args entry). ``alloc`` is ``classify.FM`` or a model I/O's ``(role, index)``."""

    alloc: tuple
    task: int
    slot: int
    offset: int


@attrs.frozen
class RefreshTable:
    """The registered slots of a loaded model, in registration order (task, then slot)."""

    registrations: tuple[Registration, ...] = ()

    @property
    def allocs(self) -> tuple:
        """The allocations with registered slots, in the order their first slot was registered."""
        return tuple(dict.fromkeys(r.alloc for r in self.registrations))

    def of(self, alloc: tuple) -> tuple[Registration, ...]:
        return tuple(r for r in self.registrations if r.alloc == alloc)

    @property
    def io_slots(self) -> int:
        """How many registered slots point into model I/O (the feature map's excluded)."""
        return sum(1 for r in self.registrations if r.alloc != classify.FM)


@attrs.frozen
class SlotUpdate:
    """Write ``address`` into slot ``slot`` of task ``task``."""

    task: int
    slot: int
    address: int


@attrs.frozen
class Refresh:
    """One execution's refresh: its update ``policy`` (6.7.5), the allocations whose base
    ``changed``, the slot ``updates`` (sorted by task, then slot) and the ``active`` bases once
    they are applied (allocation -> base)."""

    policy: classify.UpdatePolicy
    changed: tuple
    updates: tuple[SlotUpdate, ...]
    active: Mapping[tuple, int | None]

    def by_task(self) -> list[tuple[int, dict[int, int]]]:
        """``(task, {slot: address})`` per task with updates, in task order."""
        out: dict[int, dict[int, int]] = {}
        for u in self.updates:
            out.setdefault(u.task, {})[u.slot] = u.address
        return sorted(out.items())


def refresh(table: RefreshTable, active: Mapping[tuple, int | None], bindings: Sequence[Binding],
            feature_map: int) -> Refresh:
    """What this call's refresh writes; see the module docstring. ``bindings`` must carry the address
    each I/O's tasks use (``Binding.address``, staging resolved)."""
    bases = {b.io.key: b.address for b in bindings if b.mode != "copy"}
    bases[classify.FM] = feature_map
    allocs = table.allocs
    changed = tuple(k for k in allocs if bases.get(k, active.get(k)) != active.get(k))
    policy = classify.calc_policy(first=False, changed=set(changed), io_hits=table.io_slots,
                                  host_staged=any(b.mode == "stage" for b in bindings))
    moved = set(changed)
    updates = sorted((SlotUpdate(r.task, r.slot, bases[r.alloc] + r.offset) for r in table.registrations
                      if r.alloc in moved), key=lambda u: (u.task, u.slot))
    after = dict(active)
    after.update({k: bases[k] for k in changed})
    if classify.FM not in allocs:
        after[classify.FM] = bases[classify.FM]   # no slot holds it: nothing to rewrite, just track it
    return Refresh(policy, changed, tuple(updates), after)
