"""The caching allocator (reuse, splitting, merging, spans, cache release) and the external allocator hook."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zcspec.impl.device import Device
from zcspec.impl.runtime.v2.allocators import HUGE_PAGE, MEM_SIZE_ALIGN, CachingAllocator, ExternalAllocator
from zcspec.impl.runtime.v2.errors import AllocatorError


def test_sizes_round_to_512_and_blocks_come_from_one_span():
    dev = Device()
    a = CachingAllocator(dev)
    b1, b2 = a.malloc(1), a.malloc(513)
    assert (b1.size, b2.size) == (MEM_SIZE_ALIGN, 2 * MEM_SIZE_ALIGN)
    assert a.device_mallocs == 1 and a.cached == HUGE_PAGE and a.in_use == 3 * MEM_SIZE_ALIGN
    assert b2.addr == b1.addr + b1.size


def test_freed_memory_is_reused_without_a_device_malloc():
    dev = Device()
    a = CachingAllocator(dev)
    b = a.malloc(4000)
    addr = b.addr
    b.release()
    calls = dev.counters.alloc_calls
    again = a.malloc(4000)
    assert again.addr == addr and dev.counters.alloc_calls == calls and a.hits == 1


def test_best_fit_and_merging_of_neighbours():
    a = CachingAllocator(Device())
    x, y, z = a.malloc(1024), a.malloc(4096), a.malloc(1024)
    rest = a.malloc(HUGE_PAGE - 6144)                      # the span is now full
    y.release()
    assert a.malloc(1024).addr == y.addr                    # best fit: the 4 KiB hole, not a new span
    x.release()
    z.release()
    rest.release()
    assert a.in_use == 1024 and a.device_mallocs == 1
    big = a.malloc(HUGE_PAGE - 2048)                        # only possible if the free pieces merged back
    assert a.device_mallocs == 1 and big.addr == y.addr + 1024


def test_large_request_gets_its_own_span_and_empty_cache_returns_idle_spans():
    dev = Device()
    a = CachingAllocator(dev)
    small, big = a.malloc(100), a.malloc(3 * HUGE_PAGE + 1)
    assert a.device_mallocs == 2 and a.cached == HUGE_PAGE + 4 * HUGE_PAGE
    big.release()
    assert a.empty_cache() == 4 * HUGE_PAGE and a.cached == HUGE_PAGE
    small.release()
    a.close()
    assert a.cached == 0 and dev.counters.allocated_bytes == 0


def test_close_keeps_spans_the_caller_still_uses_until_released():
    dev = Device()
    a = CachingAllocator(dev)
    kept = a.malloc(1000)
    a.close()
    assert dev.counters.allocated_bytes == HUGE_PAGE       # still there: the block is live
    with pytest.raises(AllocatorError, match="closed"):
        a.malloc(10)
    kept.release()
    assert dev.counters.allocated_bytes == 0


def test_double_release_and_foreign_block_are_errors():
    a = CachingAllocator(Device())
    b = a.malloc(10)
    b.release()
    with pytest.raises(RuntimeError, match="double release"):
        b.release()
    other = CachingAllocator(Device()).malloc(10)
    with pytest.raises(AllocatorError, match="not one of its live blocks"):
        a.free(other)


def test_external_allocator_calls_the_hooks_and_refuses_null():
    dev = Device()
    calls = []
    ext = ExternalAllocator(lambda n: calls.append(("alloc", n)) or dev.malloc(n), lambda p: calls.append(("free", p)) or dev.free(p))
    b = ext.malloc(100)
    b.release()
    assert calls == [("alloc", 512), ("free", b.addr)] and dev.counters.allocated_bytes == 0
    with pytest.raises(AllocatorError, match="returned no memory"):
        ExternalAllocator(lambda n: 0, lambda p: None, name="broken").malloc(8)
    d = ExternalAllocator.on_device(dev)
    d.malloc(1).release()
    assert dev.counters.allocated_bytes == 0


ops = st.lists(st.one_of(st.tuples(st.just("alloc"), st.integers(1, 3 * HUGE_PAGE // 2)),
                         st.tuples(st.just("free"), st.integers(0, 50))), max_size=60)


@given(ops)
def test_live_blocks_never_overlap_and_accounting_is_exact(program):
    """Seeded bug check: blocks of the caching allocator never overlap, lie in device allocations,
    and the in-use count equals the sum of live blocks; after close, the device is empty."""
    dev = Device()
    a = CachingAllocator(dev)
    live = []
    for op, n in program:
        if op == "alloc":
            live.append(a.malloc(n))
        elif live:
            live.pop(n % len(live)).release()
        spans = sorted(live, key=lambda b: b.addr)
        for x, y in zip(spans, spans[1:]):
            assert x.addr + x.size <= y.addr
        for b in live:
            alloc = dev.allocation(b.addr)
            assert alloc is not None and b.addr + b.size <= alloc.end
        assert a.in_use == sum(b.size for b in live)
    for b in live:
        b.release()
    # every span merged back into one free piece, whatever the release order
    assert all(span.free == {0: span.size} for span in a._spans)
    a.close()
    assert dev.counters.allocated_bytes == 0


def test_release_in_reverse_order_merges_with_the_next_piece():
    a = CachingAllocator(Device())
    blocks = [a.malloc(1024) for _ in range(4)]
    for b in reversed(blocks):
        b.release()
    assert a.malloc(HUGE_PAGE).addr == blocks[0].addr and a.device_mallocs == 1
