"""A finished executor is freed by reference counting alone: its allocator's listener does not keep it alive
(a bound method made executor and allocator a cycle, so the device and its 16 GiB reservation of address
space waited for the cycle collector; a long test worker ran out of address space)."""
from __future__ import annotations

import gc
import weakref

import numpy as np

from zcspec.checks.zoo import load as load_graph
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.runtime.v2.executor import StreamExecutor, _weakly


def test_an_unloaded_executor_and_its_device_go_with_their_last_reference():
    gc.disable()
    try:
        model = build_model(load_graph("builtin:atomic_clean"))
        dev = Device(model.soc)
        exe = StreamExecutor(model, dev)
        exe.unload()
        gone = weakref.ref(exe), weakref.ref(dev)
        del exe, dev
        assert gone[0]() is None and gone[1]() is None
    finally:
        gc.enable()


def test_the_listener_calls_its_method_while_the_object_lives():
    class Log:
        def __init__(self):
            self.seen = []

        def on(self, what, block):
            self.seen.append((what, block))

    log = Log()
    listener = _weakly(log.on)
    listener("alloc", 1)
    assert log.seen == [("alloc", 1)]
    del log
    listener("free", 1)   # its object gone: nothing to tell, no error
