"""V2-POOL-BLOCKS: runtime v2's caching allocator hands out blocks on GE's 512-byte grain inside the spans it
holds, judged from the allocator events of the device trace.

Found by the mutation run at 4fb54e8's sample: MEM_SIZE_ALIGN (impl/runtime/v2/allocators.py) turned 511
left the blocks off GE's grain and no claim read where the pool put them; the spans themselves were not even
transcribed (their tag carries the allocator's name without its ``#<serial>``)."""
from __future__ import annotations

import pytest

from zcspec.checks.scenario import observe
from zcspec.checks.verify import VerifyConfig
from zcspec.checks.verify_cases import device_cases
from zcspec.impl.device import Device
from zcspec.impl.device.observe_allocators import allocator_events
from zcspec.impl.runtime.v2 import allocators
from zcspec.spec.observables.device import AllocatorEvent, DeviceObservation
from zcspec.spec.registry import get

CLAIM = get("V2-POOL-BLOCKS")
NAME, SPAN = "model hbm#1", 0x1_0000_0000_0000


def _obs(*rows) -> DeviceObservation:
    return DeviceObservation("pool", (), allocator_events=tuple(
        AllocatorEvent(i, kind, NAME, "v2", **fields) for i, (kind, fields) in enumerate(rows)))


def _malloc(size, address, thread=1):
    return [("enter", {"call": "malloc", "thread": thread, "size": size}),
            ("exit", {"call": "malloc", "thread": thread, "address": address})]


SPAN_ALLOC = ("alloc", {"address": SPAN, "size": 4096})


def test_blocks_on_the_grain_inside_their_span_pass():
    obs = _obs(SPAN_ALLOC, *_malloc(512, SPAN), *_malloc(1000, SPAN + 512), *_malloc(2048, SPAN + 1536))
    assert CLAIM.exercised(obs) and not CLAIM.violations(obs)


@pytest.mark.parametrize("rows, words", [
    ([SPAN_ALLOC, *_malloc(512, SPAN + 4096)], "inside none of the spans"),
    ([SPAN_ALLOC, ("free", {"address": SPAN}), *_malloc(512, SPAN)], "inside none of the spans"),
    ([SPAN_ALLOC, *_malloc(600, SPAN + 3584)], "reaches past the span's end"),
    ([SPAN_ALLOC, *_malloc(64, SPAN + 32)], "not a multiple of 512"),
])
def test_a_block_outside_its_span_or_off_the_grain(rows, words):
    [v] = CLAIM.violations(_obs(*rows))
    assert words in v.message and v.culprit.startswith(f"{NAME} malloc")


def test_the_spans_of_a_v2_allocator_are_transcribed_as_its_memory():
    dev = Device("ascend910b")
    pool = allocators.CachingAllocator(dev, name="probe")
    block = pool.malloc(1000, "t")
    kinds = [(e.kind, e.call) for e in allocator_events(dev.trace)]
    assert ("alloc", None) in kinds and kinds.index(("alloc", None)) < kinds.index(("exit", "malloc"))
    block.release()
    pool.close()


def test_planted_pool_off_the_grain_fails_the_device_probes(monkeypatch):
    monkeypatch.setattr(allocators, "MEM_SIZE_ALIGN", 511)
    label, scenario = next(iter(device_cases(VerifyConfig(models=(), kinds=("device",), examples=0, proofs=False,
                                                          corpus=False))))
    violations = [v for obs in observe(scenario) for v in CLAIM.violations(obs)]
    assert violations and "not a multiple of 512" in violations[0].message, label
