"""The per-execution refresh rule on hand-built tables, without a device (GE: davinci_model.cc
UpdateAllNodeArgs, args_io_addrs_updater.cc, model_args_manager.cc UpdateForExecute).

``refresh(table, active, bindings, feature_map)`` says which registered slots get which address;
these tests pin the rule: base + relative offset, only the allocations whose base changed,
nothing when no address changed, copy-only I/O never, the feature map when it moved.
"""
from __future__ import annotations

from zcspec.impl.runtime.user_buffers import UserBuffer
from zcspec.impl.runtime.v1.bind import Binding
from zcspec.impl.runtime.v1.classify import FM
from zcspec.impl.runtime.v1.refresh import Registration, RefreshTable, SlotUpdate, refresh
from zcspec.impl.runtime.v1.zero_copy import ZeroCopyOffset

X, Y, Z = ("input", 0), ("output", 0), ("output", 1)
FM_BASE = 0x10_0000
# x feeds task 0 slot 0 and task 2 slot 1 (16 bytes into it: a fused view); y is written by task 1 slot 1;
# z is copy-only (no registered slots); task 1 slot 0 points into the feature map.
TABLE = RefreshTable((
    Registration(X, 0, 0, 0),
    Registration(FM, 1, 0, 64),
    Registration(Y, 1, 1, 0),
    Registration(X, 2, 1, 16),
))
LOADED = {FM: FM_BASE, X: 0xdead_0000, Y: 0xdead_1000}   # the model's own I/O addresses, as at load


def io(key, name: str, *, copy_only: bool = False) -> ZeroCopyOffset:
    return ZeroCopyOffset(key[0], key[1], name, desc=None, copy_only=copy_only)


def bound(key, name: str, addr: int, mode: str = "refresh") -> Binding:
    return Binding(io(key, name, copy_only=mode == "copy"), UserBuffer(name, addr, 64), mode, addr)


def call(x: int, y: int, z: int = 0x9000) -> list[Binding]:
    return [bound(X, "x", x), bound(Y, "y", y), bound(Z, "z", z, "copy")]


def test_fresh_buffers_rewrite_every_registered_io_slot_to_base_plus_relative_offset():
    r = refresh(TABLE, LOADED, call(0x1000, 0x2000), FM_BASE)
    assert r.updates == (SlotUpdate(0, 0, 0x1000), SlotUpdate(1, 1, 0x2000), SlotUpdate(2, 1, 0x1000 + 16))
    assert set(r.changed) == {X, Y}
    assert r.active[X] == 0x1000 and r.active[Y] == 0x2000 and r.active[FM] == FM_BASE
    assert r.per_task == ((0, {0: 0x1000}), (1, {1: 0x2000}), (2, {1: 0x1010}))


def test_the_same_buffers_again_rewrite_nothing():
    first = refresh(TABLE, LOADED, call(0x1000, 0x2000), FM_BASE)
    again = refresh(TABLE, first.active, call(0x1000, 0x2000), FM_BASE)
    assert again.updates == () and again.changed == ()
    assert again.active == first.active


def test_a_buffer_rebound_between_calls_rewrites_only_its_own_slots():
    first = refresh(TABLE, LOADED, call(0x1000, 0x2000), FM_BASE)
    second = refresh(TABLE, first.active, call(0x1000, 0x3000), FM_BASE)
    assert second.updates == (SlotUpdate(1, 1, 0x3000),) and second.changed == (Y,)
    third = refresh(TABLE, second.active, call(0x4000, 0x3000), FM_BASE)
    assert third.updates == (SlotUpdate(0, 0, 0x4000), SlotUpdate(2, 1, 0x4010)) and third.changed == (X,)


def test_copy_only_io_is_never_refreshed_whatever_its_buffer():
    first = refresh(TABLE, LOADED, call(0x1000, 0x2000, z=0x9000), FM_BASE)
    second = refresh(TABLE, first.active, call(0x1000, 0x2000, z=0xa000), FM_BASE)
    assert Z not in first.active and second.updates == ()


def test_a_moved_feature_map_rewrites_its_slots():
    first = refresh(TABLE, LOADED, call(0x1000, 0x2000), FM_BASE)
    moved = refresh(TABLE, first.active, call(0x1000, 0x2000), 0x20_0000)
    assert moved.updates == (SlotUpdate(1, 0, 0x20_0000 + 64),) and moved.changed == (FM,)
    assert moved.active[FM] == 0x20_0000


def test_an_unregistered_feature_map_is_tracked_without_any_write():
    table = RefreshTable(tuple(r for r in TABLE.registrations if r.alloc != FM))
    first = refresh(table, LOADED, call(0x1000, 0x2000), FM_BASE)
    moved = refresh(table, first.active, call(0x1000, 0x2000), 0x20_0000)
    assert moved.updates == () and moved.active[FM] == 0x20_0000


def test_the_same_staging_buffer_again_rewrites_nothing():
    staged = [bound(X, "x", 0x5000, "stage"), bound(Y, "y", 0x2000), bound(Z, "z", 0x9000, "copy")]
    first = refresh(TABLE, LOADED, staged, FM_BASE)
    assert SlotUpdate(0, 0, 0x5000) in first.updates
    again = refresh(TABLE, first.active, staged, FM_BASE)
    assert again.updates == () and again.changed == ()


def test_a_table_with_only_feature_map_slots_ignores_the_io_buffers():
    table = RefreshTable((Registration(FM, 1, 0, 64),))
    r = refresh(table, LOADED, call(0x1000, 0x2000), FM_BASE)
    assert r.updates == () and table.io_slots == 0


def test_refresh_leaves_its_inputs_alone():
    active = dict(LOADED)
    refresh(TABLE, active, call(0x1000, 0x2000), FM_BASE)
    assert active == LOADED
