"""Concurrent executions of different models from several threads on one device are safe."""
import sys
import threading

import numpy as np

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import load


def scaled(k: int):
    b = GraphBuilder(f"m{k}")
    x = b.input("x", (8, 16))
    y = b.op("Mul", [x, b.weight("w", np.full((8, 16), k, np.float32))], name="mul")
    b.output(b.op("Relu", [y], name="relu"))
    return build_model(b.build())


def test_threads_execute_different_models_concurrently():
    dev = Device()
    models = [scaled(k) for k in range(1, 5)]
    loaded = [load(dev, m) for m in models]
    errors, rounds = [], 40

    def worker(k):
        m, lm = models[k], loaded[k]
        try:
            for r in range(rounds):
                x = np.full((8, 16), r + 1, np.float32)
                with lm.lock:   # the user's own staging shares the device too
                    ins, outs = stage_inputs(dev, m, {"x": x}), alloc_outputs(dev, m)
                lm.execute(ins, outs)
                with lm.lock:
                    got = read_outputs(dev, m, outs)["relu:0"]
                    free_buffers(dev, ins + outs)
                np.testing.assert_array_equal(got, x * (k + 1))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(len(models))]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)   # switch threads often, so unguarded device state would interleave
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[0]
    for lm in loaded:
        lm.unload()
    assert dev.counters.allocated_bytes == 0 and dev.counters.faults == 0
