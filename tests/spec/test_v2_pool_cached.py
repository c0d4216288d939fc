"""V2-POOL-CACHED: runtime v2's caching allocator fetches a span only when none it holds can serve, of GE's size,
and keeps it until its cache is emptied; judged from the allocator events of a device probe's trace.

Before it, an allocator that never reused its free pieces, fetched spans of the request's size, or gave a span
back as soon as its last block was freed passed every claim: each block it handed out was valid."""
from __future__ import annotations

import pytest

from zcspec.checks.device_probe_run import run_probe
from zcspec.impl.device.observe import observe_device
from zcspec.impl.runtime.v2 import allocators
from zcspec.spec.registry import get

CLAIM = "V2-POOL-CACHED"


def _probe(sizes, threads=3, rounds=3):
    run = run_probe([{"op": "allocator_threads", "allocator": "v2_caching", "threads": threads, "rounds": rounds,
                      "sizes": sizes}])
    return observe_device(run.device.trace, 0, name="v2 pool probe",
                          memory=(run.device.mem.base, run.device.mem.capacity))


def test_the_real_pool_holds_and_the_probe_memory_is_not_the_pools():
    obs = _probe([4096, 300 << 10, 512])
    assert get(CLAIM).exercised(obs) and not get(CLAIM).violations(obs)
    spans = [e for e in obs.allocator_events if e.kind == "alloc"]
    assert [e.size for e in spans] == [2 << 20]   # one span serves every call; the probe's own tables are not spans


def _never_reuse(self, need):
    return None


def _release_when_idle(free):
    def release(self, block):
        free(self, block)
        span = next((s for s in self._spans if s.used == 0), None)
        if span is not None:
            self._drop(span)
    return release


def _spans_of_the_request(monkeypatch):
    """Spans as large as the request, not whole huge pages."""
    init = allocators.CachingAllocator.__init__
    monkeypatch.setattr(allocators, "HUGE_PAGE", 512)
    monkeypatch.setattr(allocators.CachingAllocator, "__init__",
                        lambda self, device, **kw: init(self, device, **{**kw, "span_size": 512}))


@pytest.mark.parametrize("plant, what", [
    (lambda m: m.setattr(allocators.CachingAllocator, "_best_fit", _never_reuse), "returned no block"),
    (lambda m: _spans_of_the_request(m), "GE's span is 2097152"),
    (lambda m: m.setattr(allocators.CachingAllocator, "free",
                         allocators._traced(_release_when_idle(allocators.CachingAllocator.free.__wrapped__))),
     "gave its 2097152-byte span"),
])
def test_a_pool_that_does_not_cache_fails_through_the_claim(monkeypatch, plant, what):
    plant(monkeypatch)
    found = get(CLAIM).violations(_probe([4096, 300 << 10, 512]))
    assert found and what in found[0].message, found
