"""One small scenario through a real runtime and device, observed: load, execute once with device buffers,
release what the caller was handed, unload. The spec tests that plant a bug with a monkeypatch run it with
and without the bug (tests/spec/test_device_truth.py, test_execution_streams.py)."""
from __future__ import annotations

import contextlib

import numpy as np

from zcspec.impl.device import Device, DeviceFault
from zcspec.impl.runtime.user_buffers import UserBuffer
from zcspec.impl.runtime.v1.errors import RuntimeV1Error
from zcspec.impl.runtime.v1.load import load as load_v1
from zcspec.impl.runtime.v1.observe import observe_execution as observe_v1
from zcspec.impl.runtime.v2.errors import RuntimeV2Error
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.observe import observe_execution as observe_v2
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.tensors import Tensor
from tests.helpers.runtime_v2 import relu_neg, stage


def run_v2(model=None, options=LoweringOptions(), out_size=None, unload=True):
    """Load ``model`` (default relu_neg) into v2, execute once with device buffers, release what the caller
    was handed, unload, observe."""
    model = model or relu_neg()
    dev = Device(model.soc)
    exe = StreamExecutor(model, dev, options)
    outs = [Tensor(dev.malloc(io.nbytes if out_size is None else out_size, tag=f"user out {io.tensor}"),
                   io.nbytes if out_size is None else out_size, name=io.tensor) for io in model.tasks.outputs]
    with contextlib.suppress(RuntimeV2Error, DeviceFault):   # a failed call is observed through its record
        exe.execute(stage(dev, model), outs)
    for t in outs:
        t.release()
    if unload:
        exe.unload()
    return observe_v2(exe)


def run_v1(model=None, out_size=None):
    model = model or relu_neg()
    dev = Device(model.soc)
    lm = load_v1(dev, model)
    ins = [UserBuffer(io.tensor, dev.upload(np.ones(io.shape, np.float32), tag="user in"), io.nbytes)
           for io in model.tasks.inputs]
    size = {io.tensor: io.nbytes if out_size is None else out_size for io in model.tasks.outputs}
    outs = [UserBuffer(io.tensor, dev.malloc(size[io.tensor], tag="user out"), size[io.tensor])
            for io in model.tasks.outputs]
    with contextlib.suppress(RuntimeV1Error):
        lm.execute(ins, outs)
    lm.unload()
    return observe_v1(lm)
