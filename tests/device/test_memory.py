"""The allocator and the allocation table: a model-based property test plus SoC profile checks."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from zcspec.impl.device import DEVICE_BASE, Device, OutOfMemory
from zcspec.impl.device.memory import AddressSpace
from zcspec.impl.platform.errors import BadInput, UnknownSocError
from zcspec.impl.platform.soc import PROFILES, get_soc

ops = st.lists(st.one_of(
    st.tuples(st.just("malloc"), st.integers(1, 5000), st.sampled_from([None, 64, 1024, 4096])),
    st.tuples(st.just("free"), st.integers(0, 50), st.none()),
), max_size=60)


@given(ops)
def test_allocations_are_disjoint_aligned_and_accounted(script):
    space = AddressSpace("device", DEVICE_BASE, 64 * 1024, align=512, poison=False)
    live: dict[int, int] = {}
    for op, n, align in script:
        if op == "malloc":
            try:
                a = space.malloc(n, align)
            except OutOfMemory:
                continue
            assert a.addr % max(align or 1, 512) == 0
            assert space.base <= a.addr and a.end <= space.end
            for addr, size in live.items():
                assert a.end <= addr or addr + size <= a.addr, "overlap"
            live[a.addr] = n
        elif live:
            addr = sorted(live)[n % len(live)]
            space.free(addr)
            del live[addr]
        assert space.allocated_bytes == sum(live.values())
        assert [a.addr for a in space.allocations()] == sorted(live)
    for addr in list(live):
        space.free(addr)
    assert space._holes == [[0, space.capacity]]   # every free coalesced back


def test_freed_memory_is_reused_late():
    space = AddressSpace("device", DEVICE_BASE, 1 << 20, align=512)
    a = space.malloc(512)
    space.free(a.addr)
    b = space.malloc(512)
    assert b.addr != a.addr   # next fit: the stale pointer still faults as use-after-free


def test_memory_is_lazy_and_far_from_zero():
    dev = Device("ascend910b")
    assert dev.mem.capacity == 16 << 30 and dev.mem.base >= 1 << 48
    assert Device(device_id=1).mem.base - dev.mem.base >= 1 << 44
    assert not dev.host.contains(dev.mem.base) and not dev.mem.contains(dev.host.base)


def test_oom_when_fragmented_reports_the_largest_hole():
    space = AddressSpace("device", DEVICE_BASE, 4096, align=512)
    blocks = [space.malloc(512) for _ in range(8)]
    for b in blocks[::2]:
        space.free(b.addr)
    with pytest.raises(OutOfMemory, match="largest hole 512"):
        space.malloc(1024, tag="wide")


def test_soc_profiles():
    assert set(PROFILES) >= {"ascend910b", "ascend310p", "legacy", "nozc"}
    assert get_soc().name == "ascend910b" and get_soc(get_soc("legacy")).name == "legacy"
    assert not get_soc("nozc").zero_copy and get_soc("ascend910b").zero_copy
    assert get_soc("ascend910b").can_refresh("memset") and not get_soc("ascend310p").can_refresh("memset")
    assert not get_soc("legacy").can_refresh("kernel", in_loop=True)
    assert get_soc("ascend910b").mem_align == 512 and get_soc("ascend910b").padding == 32
    assert Device("ascend310p").malloc(1) % 32 == 0


def test_unknown_soc_lists_known_names():
    with pytest.raises(UnknownSocError) as err:
        get_soc("ascend9000")
    assert isinstance(err.value, BadInput)   # exit code 2 on the command line
    assert "ascend910b" in str(err.value) and "nozc" in str(err.value)


def test_full_space_is_out_of_memory_not_a_crash():
    space = AddressSpace("device", DEVICE_BASE, 4096, align=512)
    space.malloc(4096, tag="all")
    with pytest.raises(OutOfMemory, match="0 bytes free"):
        space.malloc(1, tag="one more")


def test_a_reservation_refused_for_want_of_address_space_collects_the_garbage_and_tries_again(monkeypatch):
    """Devices a finished run left in reference cycles (a communicator and its ranks' devices) hold their
    16 GiB reservations until the cycle collector runs; a long test worker ran out of its 128 TiB (ENOMEM)."""
    import errno
    import mmap as mmap_module

    from zcspec.impl.device import memory as memory_module
    real, calls, collected = mmap_module.mmap, [], []

    def scarce(*args, **kwargs):
        calls.append(args)
        if len(calls) == 1:
            raise OSError(errno.ENOMEM, "Cannot allocate memory")
        return real(*args, **kwargs)

    monkeypatch.setattr(memory_module.mmap, "mmap", scarce)
    monkeypatch.setattr(memory_module.gc, "collect", lambda: collected.append(1) or 0)
    space = memory_module.AddressSpace("device", 1 << 48, 1 << 20)
    assert len(calls) == 2 and collected == [1]
    assert space.malloc(64).addr == 1 << 48

    def broken(*args, **kwargs):
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(memory_module.mmap, "mmap", broken)
    with pytest.raises(OSError, match="Permission denied"):
        memory_module.AddressSpace("device", 1 << 48, 1 << 20)
    assert collected == [1]   # only ENOMEM is worth a collection
