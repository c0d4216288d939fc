"""V1-ALLOCATOR-ACCOUNTING and V2-ALLOCATOR-ONE-THREAD: held by the runtimes' allocators under threads,
broken by a planted race in each (v1's lock removed with a lost update of its holder count; v2's pool
entered by a second thread while the first is inside it)."""
import contextlib
import threading

import pytest

from zcspec.checks.allocator_threads import run_allocator_threads, run_threads
from zcspec.checks.device_probe_run import run_probe
from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution.v2 import observe_scenario
from zcspec.checks.strategies.device_probes import fixed_programs
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.device.observe import observe_device
from zcspec.impl.runtime.v1.active_memory import ActiveMemoryAllocator, LogicalMemoryBlock
from zcspec.impl.runtime.v2 import executor
from zcspec.impl.runtime.v2.allocators import CachingAllocator
from zcspec.spec.registry import get

V1, V2 = get("V1-ALLOCATOR-ACCOUNTING"), get("V2-ALLOCATOR-ONE-THREAD")


def _observed(dev):
    return observe_device(dev.trace, 0, "allocator threads")


@pytest.mark.parametrize("kind, claim", [("v1_active", V1), ("v1_fixed_base", V1), ("v2_caching", V2)])
def test_threaded_calls_keep_the_contracts(kind, claim):
    dev = Device(capacity=16 << 20, poison=False)
    run_allocator_threads(dev, {"allocator": kind, "threads": 4, "rounds": 3, "sizes": [4096, 3 << 20, 512]}, "step")
    obs = _observed(dev)
    assert claim.exercised(obs) and claim.violations(obs) == ()
    assert not [a for a in dev.allocations()]   # every allocator gave its memory back


class _LostUpdate(ActiveMemoryAllocator):
    """v1's allocator with its lock removed and its holder count read and written apart (the race)."""

    barrier: threading.Barrier | None = None

    def __init__(self, dev):
        super().__init__(dev)
        self._lock = contextlib.nullcontext()

    @property
    def used_count(self):
        return self.__dict__.get("_count", 0)

    @used_count.setter
    def used_count(self, value):
        if self.barrier is not None:
            self.barrier.wait(timeout=10)   # both threads have read the old count
        self.__dict__["_count"] = value


def test_v1_without_its_lock_frees_memory_a_holder_still_uses():
    dev = Device()
    racy = _LostUpdate(dev)
    racy.barrier = threading.Barrier(2)
    run_threads(lambda k: racy.malloc_memory(f"model {k}", [LogicalMemoryBlock(0, 4096)]), 2)
    racy.barrier = None
    assert racy.used_count == 1   # two holders, one counted
    racy.free_memory()
    found = V1.violations(_observed(dev))
    assert found and "released its memory while 1 holder(s) still hold it" in found[0].message
    racy.free_memory()


def test_v1_with_its_lock_counts_both_holders():
    dev = Device()
    allocator = ActiveMemoryAllocator(dev)
    run_threads(lambda k: allocator.malloc_memory(f"model {k}", [LogicalMemoryBlock(0, 4096)]), 2)
    allocator.free_memory()
    allocator.free_memory()
    obs = _observed(dev)
    assert V1.exercised(obs) and V1.violations(obs) == ()


def test_v2_entered_by_a_second_thread_while_one_is_inside():
    dev = Device()
    pool = CachingAllocator(dev, name="racy")
    inside, second_done = threading.Event(), threading.Event()
    device_malloc = dev.malloc

    def slow_first_malloc(*args, **kwargs):   # the first span's device malloc waits for the second thread
        if not inside.is_set():
            inside.set()
            second_done.wait(timeout=10)
        return device_malloc(*args, **kwargs)

    dev.malloc = slow_first_malloc
    first = threading.Thread(target=lambda: pool.malloc(1024, tag="first"))
    first.start()
    assert inside.wait(timeout=10)
    pool.malloc(1024, tag="second")
    second_done.set()
    first.join()
    found = V2.violations(_observed(dev))
    assert len(found) == 1 and "entered while thread" in found[0].message


def test_the_device_probes_exercise_both_claims():
    run = run_probe(fixed_programs(1, seed=3)[0])
    obs = observe_device(run.device.trace, 0, "probe")
    for claim in (V1, V2):
        assert claim.exercised(obs) and claim.violations(obs) == ()


def test_a_bad_allocator_threads_step_names_its_field():
    with pytest.raises(ScenarioError, match="allocator='v3'"):
        run_allocator_threads(Device(), {"allocator": "v3", "threads": 2, "rounds": 1, "sizes": [1]}, "step 4")
    with pytest.raises(ScenarioError, match="threads=1"):
        run_allocator_threads(Device(), {"allocator": "v2_caching", "threads": 1, "rounds": 1, "sizes": [1]}, "s")


def _relu_model():
    b = GraphBuilder("allocator_threads")
    x = b.input("x", (8, 16))
    b.output(b.op("Relu", [b.op("Relu", [x], name="r1")], name="r2"))
    return build_model(b.build())


def test_the_campaign_s_threaded_v2_calls_keep_one_thread_inside():
    obs = observe_scenario(_relu_model(), {"runtime": "v2", "threads": 3})[-1]
    assert V2.exercised(obs) and V2.violations(obs) == ()


def test_v2_executor_without_its_lock_lets_a_second_thread_into_its_pool(monkeypatch):
    init, best_fit = executor.StreamExecutor.__init__, CachingAllocator._best_fit
    other_entered, blocked = threading.Event(), []

    def unlocked(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self._lock = contextlib.nullcontext()   # the planted race: calls from threads no longer queue

    def slow_best_fit(self, need):   # the first threaded call waits inside the pool for another thread
        if threading.current_thread() is not threading.main_thread():
            if not blocked:
                blocked.append(True)
                other_entered.wait(timeout=10)
            else:
                other_entered.set()
        return best_fit(self, need)

    monkeypatch.setattr(executor.StreamExecutor, "__init__", unlocked)
    monkeypatch.setattr(CachingAllocator, "_best_fit", slow_best_fit)
    obs = observe_scenario(_relu_model(), {"runtime": "v2", "threads": 2})[-1]
    assert other_entered.is_set()
    assert any("entered while thread" in v.message for v in V2.violations(obs))


def test_a_page_pool_that_never_gives_its_pages_back_fails_the_accounting(monkeypatch):
    """The mutation run's active_memory.py:288 (PhysicalMemoryAllocator.finalize keeps one user for ever): after the
    last FixedBaseExpandableAllocator holder leaves, the pool's pages stay on the device. The pool's initialize and
    finalize calls are in the trace, so V1-ALLOCATOR-ACCOUNTING counts its users against the pages it holds."""
    from zcspec.impl.runtime.v1 import active_memory

    def never_last(self):
        with self._call("finalize"):
            self.ref_count = max(self.ref_count - 1, 1)

    monkeypatch.setattr(active_memory.PhysicalMemoryAllocator, "finalize", never_last)
    dev = Device(capacity=16 << 20, poison=False)
    run_allocator_threads(dev, {"allocator": "v1_fixed_base", "threads": 4, "rounds": 3,
                                "sizes": [4096, 3 << 20, 512]}, "step")
    found = V1.violations(_observed(dev))
    assert found and all("physical pages" in v.culprit and "finalize" in v.culprit for v in found), found
    assert any("still holds" in v.message for v in found)
