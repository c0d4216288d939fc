"""``plan_memory`` pauses the cyclic garbage collector while it plans (benchmarks/plan_gc.py shows the gain) and
restores the caller's setting on every path, a refused graph included."""
import gc

import pytest

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.memory.errors import PlanError
from zcspec.impl.compiler.memory.plan import plan_memory


def _graph(workspace=(64,)):
    b = GraphBuilder("g")
    b.output(b.op("Relu", [b.input("x", (1, 8))], name="r", _workspace_bytes=workspace))
    return b.build(check=False)


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_setting_is_restored_after_a_plan(enabled):
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        plan_memory(_graph())
        assert gc.isenabled() is enabled
        with pytest.raises(PlanError):
            plan_memory(_graph(workspace=("lots",)))
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def _chain(nodes: int):
    b = GraphBuilder("chain")
    t = b.input("x", (1, 8))
    for i in range(nodes):
        t = b.op("Relu", [t], name=f"r{i}")
    b.output(t)
    return b.build(check=False)


def test_the_objects_of_a_plan_are_not_scanned_on_the_way_out():
    """What the plan built while the collector was paused moves to the oldest generation unscanned: no
    collection runs inside the call (before, the first allocation after re-enabling scanned them all)."""
    graph = _chain(300)
    started = []

    def watch(phase, info):
        if phase == "start":
            started.append(info["generation"])

    was = gc.isenabled()
    gc.enable()
    gc.callbacks.append(watch)
    try:
        gc.collect()   # the young generation starts empty: no collection is due on the way in
        started.clear()
        plan = plan_memory(graph)
        during = list(started)
    finally:
        gc.callbacks.remove(watch)
        gc.enable() if was else gc.disable()
    assert len(plan.tensors) == 301 and during == []


def test_a_callers_frozen_objects_stay_frozen():
    """Moving the plan's objects goes through gc.freeze/unfreeze, which would release what the caller froze
    (a server freezing its start-up objects before forking): then the plan's objects are left to the collector."""
    was = gc.isenabled()
    gc.enable()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        plan_memory(_chain(10))
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
        gc.enable() if was else gc.disable()
