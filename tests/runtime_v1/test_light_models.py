"""The 9 light models through runtime v1, zero copy on and off: outputs match the reference shipped
beside each model (input all ones), and the execute call's counters show what zero copy promises."""
import functools

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from zcspec.checks.zoo import LIGHT
from zcspec.checks.models import load_graph, zoo_path
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import LoadOptions, load
from zcspec.impl.runtime.v1.observe import observe_execution
from zcspec.spec.check import check



@functools.lru_cache(maxsize=None)
def compiled(name):
    return build_model(load_graph(f"zoo:{name}"))


def reference(name):
    return numpy_helper.to_array(onnx.load_tensor(zoo_path(name).replace(".onnx", "_output_0.pb")))


@pytest.mark.parametrize("zero_copy", [True, False], ids=["zc", "copy"])
# squeezenet's logits are ~1.6e10 with input all ones: its 1,000 identical channels must come out
# bit-identical for the softmax to match the reference, which the device's float64-accumulating
# Conv guarantees (a float32 BLAS rounds rows differently).
@pytest.mark.parametrize("name", LIGHT)
def test_light_model(name, zero_copy):
    m = compiled(name)
    dev = Device(m.soc)
    lm = load(dev, m, LoadOptions(zero_copy=zero_copy))
    ins = stage_inputs(dev, m, {d.tensor: np.ones(d.shape, np.float32) for d in m.tasks.inputs})
    outs = alloc_outputs(dev, m)
    rec = lm.execute(ins, outs)
    c = rec.counters
    io_bytes = sum(d.nbytes for d in m.tasks.inputs + m.tasks.outputs)
    assert (c.h2d_bytes, c.d2h_bytes, c.d2d_bytes) == (0, 0, 0 if zero_copy else io_bytes)
    assert c.args_refreshed == (lm.registered if zero_copy else 0) and c.faults == 0
    assert c.allocated_bytes == 0
    report = check(observe_execution(lm, rec))
    assert report.ok, str(report)
    got = read_outputs(dev, m, outs)[m.tasks.outputs[0].tensor]
    ref = reference(name)
    np.testing.assert_allclose(got.reshape(ref.shape), ref, rtol=1e-4, atol=1e-7)
    lm.unload()
    free_buffers(dev, ins + outs)
    assert dev.counters.allocated_bytes == 0
