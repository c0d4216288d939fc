"""The per-execution address refresh rule (``davinci_model.cc`` ``UpdateAllNodeArgs``,
``model_args_manager.cc`` ``UpdateForExecute``, ``args_io_addrs_updater.cc``), as a pure function.

``refresh(table, active, bindings, feature_map) -> Refresh`` takes the loaded model's
:class:`RefreshTable` (the registered slots of each refreshable allocation, fixed at load),
the base each allocation's slots hold now (``active``), this call's bindings and the
feature map's current base, and returns what must be written: the slot writes grouped by
task (``per_task``; ``updates`` lists them as ``(task, slot, new address)``) and the active
bases afterwards. It touches no device; ``execute.py`` applies the writes.

The rule: an allocation's active base for this call is the address its I/O's tasks use (the
user's device buffer, or the staging buffer of a host one; the feature map: its current
base). Exactly the registered slots of the allocations whose base changed are rewritten, to
``base + relative offset``. The same buffers again rewrite nothing; fresh buffers every
registered slot once. Copy-only I/O has no registered slots and is never refreshed.
"""
from __future__ import annotations

from typing import Mapping, NamedTuple, Sequence

import attrs

from zcspec.impl.runtime.v1 import classify
from zcspec.impl.runtime.v1.bind import Binding


class Registration(NamedTuple):
    """Slot ``slot`` of task ``task`` holds allocation ``alloc``'s base + ``offset`` (GE's zero-copy
    args entry). ``alloc`` is ``classify.FM`` or a model I/O's ``(role, index)``. (Named tuples, like
    SlotUpdate: refresh() walks every registration of a moved allocation on every call.)"""

    alloc: tuple
    task: int
    slot: int
    offset: int


@attrs.frozen
class RefreshTable:
    """The registered slots of a loaded model, in registration order (task, then slot)."""

    registrations: tuple[Registration, ...] = attrs.field(default=())

    @registrations.validator
    def _in_task_slot_order(self, attribute, value) -> None:
        keys = [(r.task, r.slot) for r in value]
        if keys != sorted(keys):
            raise ValueError("registrations must be in (task, slot) order: refresh() relies on it")

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


class SlotUpdate(NamedTuple):
    """Write ``address`` into slot ``slot`` of task ``task``. (A named tuple: an execution that
    re-binds every input of a 10,000-task model makes ten thousand of them.)"""

    task: int
    slot: int
    address: int


@attrs.frozen
class Refresh:
    """One execution's refresh: the allocations whose base ``changed``, the slot writes grouped by task (``per_task``: ``(task, {slot: address})`` in task
    order) and the ``active`` bases once they are applied (allocation -> base)."""

    changed: tuple
    per_task: tuple[tuple[int, Mapping[int, int]], ...]
    active: Mapping[tuple, int | None]

    @property
    def updates(self) -> tuple[SlotUpdate, ...]:
        """Every slot write, in (task, slot) order."""
        return tuple(SlotUpdate(task, slot, address) for task, slots in self.per_task for slot, address in slots.items())


def refresh(table: RefreshTable, active: Mapping[tuple, int | None], bindings: Sequence[Binding],
            feature_map: int) -> Refresh:
    """What this call's refresh writes; see the module docstring. ``bindings`` must carry the address
    each I/O's tasks use (``Binding.address``, staging resolved)."""
    bases = {b.io.key: b.address for b in bindings if b.mode != "copy"}
    bases[classify.FM] = feature_map
    allocs = table.allocs
    changed = tuple(k for k in allocs if bases.get(k, active.get(k)) != active.get(k))
    moved = set(changed)
    # The table is in (task, slot) order, so one pass groups the writes by task, in order.
    per_task: list[tuple[int, dict[int, int]]] = []
    current = None
    for alloc, task, slot, offset in table.registrations:
        if alloc in moved:
            if task != current:
                current, slots = task, {}
                per_task.append((task, slots))
            slots[slot] = bases[alloc] + offset
    after = dict(active)
    after.update({k: bases[k] for k in changed})
    if classify.FM not in allocs:
        after[classify.FM] = bases[classify.FM]   # no slot holds it: nothing to rewrite, just track it
    return Refresh(changed, tuple(per_task), after)
