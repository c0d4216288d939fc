"""V1-ACTIVE-MEMORY-BLOCKS: runtime v1's active-memory allocator makes GE's blocks, or verify says so.

The mutation run's active_memory.py:221 (MergeBlocks never merging: pieces contiguous in the model's
logical memory each got a block of their own) passed every claim: more, smaller blocks are memory like any
other. The claim pairs each malloc_memory call with the pieces the probe passed (its own record) and
compares the device allocations the trace shows with GE's."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks.device_probe_run import run_probe
from zcspec.impl.device.observe import observe_device
from zcspec.impl.runtime.v1 import active_memory
from zcspec.spec.invariants.allocator_active import ge_blocks
from zcspec.spec.observables.device import ActiveMemoryRequest, LogicalPiece
from zcspec.spec.registry import get

CLAIM = "V1-ACTIVE-MEMORY-BLOCKS"


def _observe(sizes, threads=2, rounds=2):
    run = run_probe([{"op": "allocator_threads", "allocator": "v1_active", "threads": threads, "rounds": rounds,
                      "sizes": sizes}])
    dev = run.device
    return observe_device(dev.trace, 0, name="v1 active probe", memory=(dev.mem.base, dev.mem.capacity),
                          active_requests=run.active_requests)


def test_the_real_allocator_makes_ges_blocks():
    obs = _observe([4096, 1 << 20, 512], threads=3, rounds=3)
    assert len(obs.active_requests) == 9
    assert get(CLAIM).exercised(obs) and not get(CLAIM).violations(obs)


def test_pieces_no_longer_merged_fail_through_the_claim(monkeypatch):
    """The run's mutant: MergeBlocks never merges (each piece its own block)."""
    monkeypatch.setattr(active_memory, "_merged", lambda logical: list(logical))
    (v, *_) = get(CLAIM).violations(_observe([4096, 8192]))
    assert v.values == {"made": [4096, 8192], "expected": [12288]}, v


def test_a_large_block_not_rounded_to_2_mib_fails_through_the_claim(monkeypatch):
    monkeypatch.setattr(active_memory, "DRV_PAGE", 1 << 30)   # rounding only above 1 GiB: never here
    (v, *_) = get(CLAIM).violations(_observe([4096, 3 << 20], threads=2, rounds=1))
    assert v.values == {"made": [(3 << 20) + 4096], "expected": [4 << 20]}, v


@pytest.mark.parametrize("pieces, blocks", [
    ([(0, 1024), (1024, 3072)], [4096]),                          # contiguous: one block
    ([(0, 1024), (2048, 3072)], [1024, 3072]),                    # a gap: two
    ([(0, 1024), (1024, 3072, True, True)], [1024, 3072]),        # the zero-copy piece: always alone
    ([(0, 1024), (1024, 512, False), (1536, 512)], [512, 1024]),  # a piece needing no memory breaks the run
    ([(0, 3 << 20)], [4 << 20]),                                  # above 2 MiB: rounded up to 2 MiB
    ([(0, 2 << 20)], [2 << 20]),
])
def test_ges_blocks_for_a_request(pieces, blocks):
    assert ge_blocks(ActiveMemoryRequest(tuple(LogicalPiece(*p) for p in pieces))) == blocks


def test_calls_not_paired_with_the_probes_record_are_not_judged():
    obs = _observe([4096, 8192])
    assert not get(CLAIM).exercised(attrs.evolve(obs, active_requests=obs.active_requests[1:]))
