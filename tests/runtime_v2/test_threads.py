"""Runtime v2 from several threads: one executor serves concurrent calls correctly (one at a time).

Before the executor took a lock, three calls at once crashed it about once in twenty tries
(the frame and caching allocator are per executor); the checker's v2 runs draw threads too.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from zcspec.checks.execution.v2 import observe_scenario
from zcspec.checks.zoo import load
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.tensors import Tensor
from zcspec.spec.check import check


def test_concurrent_calls_on_one_executor_each_get_their_own_result():
    model = build_model(load("builtin:workspace_streams"))
    dev = Device(model.soc)
    exe = StreamExecutor(model, dev)
    (io_in,), (io_out,) = model.tasks.inputs, model.tasks.outputs
    xs = [np.full(io_in.shape, k, np.float32) for k in range(8)]

    def call(x):
        inp = Tensor(dev.upload(x, tag="in"), io_in.nbytes, name=io_in.tensor)
        out = Tensor(dev.malloc(io_out.nbytes, tag="out"), io_out.nbytes, name=io_out.tensor)
        exe.execute([inp], [out])
        return dev.peek(out.addr, io_out.shape, np.float32).copy()

    serial = [call(x) for x in xs]
    for _ in range(20):
        with ThreadPoolExecutor(4) as pool:
            parallel = list(pool.map(call, xs))
        for a, b in zip(serial, parallel):
            np.testing.assert_array_equal(a, b)
    exe.unload()


def test_a_threaded_v2_scenario_is_observed_per_call_and_clean():
    graph = load("builtin:workspace_streams")
    obs = observe_scenario(build_model(graph), {"runtime": "v2", "threads": 3}, graph)
    *calls, allocator_calls = obs   # the last: the caching allocator's calls (V2-ALLOCATOR-ONE-THREAD)
    assert len(calls) == 4 and not obs.notes
    assert "V2-ALLOCATOR-ONE-THREAD" in check(allocator_calls).exercised and not check(allocator_calls).violations
    for o in calls:
        assert not check(o).violations
        assert o.outputs and all(r.oracle_max_abs_diff is not None for r in o.outputs)
