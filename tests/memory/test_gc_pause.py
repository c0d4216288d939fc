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
