"""Runtime v2 executes one dynamic-batch branch per call (``execute(..., batch=label)``, runtime/branches.py)."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.impl.device import Device
from zcspec.impl.device.trace import Launch
from zcspec.impl.platform.errors import BadInput
from zcspec.impl.runtime.v2.errors import ApiMisuseError
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.tensors import Tensor
from tests.helpers.dynamic_batch import CHAINS, X, expected, model, overlapping_across_branches
from tests.helpers.runtime_v2 import out_buffer, read, relu_neg, stage


def run(m, batch, options=LoweringOptions()):
    dev = Device(m.soc)
    x = Tensor(dev.upload(X, tag="user x"), X.nbytes, name="x")
    out = out_buffer(dev, m.tasks.outputs[0])
    with StreamExecutor(m, dev, options) as exe:
        mark = dev.trace.mark()
        (got,) = exe.execute([x], [out], batch=batch)
        ops = [e.op_type for e in dev.trace.since(mark) if isinstance(e, Launch)]
        return read(dev, got, m.tasks.outputs[0]).copy(), ops


@pytest.mark.parametrize("zero_copy", [True, False])
@pytest.mark.parametrize("batch", ["b1", "b2"])
def test_each_branch_gives_its_numbers(batch, zero_copy):
    m = model()
    assert overlapping_across_branches(m.plan)   # the branches' memory is shared in the plan
    got, ops = run(m, batch, LoweringOptions(zero_copy=zero_copy))
    np.testing.assert_allclose(got, expected(X, batch), rtol=1e-5, atol=1e-6)
    assert ops == CHAINS[batch] + ["Merge", "Add"]   # only the chosen branch and the unlabelled tasks launch


def test_single_stream_and_the_default_mode_agree():
    m = model()
    for batch in ("b1", "b2"):
        assert np.array_equal(run(m, batch)[0], run(m, batch, LoweringOptions(enable_single_stream=True))[0])


@pytest.mark.parametrize("batch, match", [(None, r"dynamic-batch branches \['b1', 'b2'\]: choose one"),
                                          ("b7", r"batch='b7' is not a branch .* \['b1', 'b2'\]")])
def test_a_missing_or_unknown_branch_is_refused_before_anything_runs(batch, match):
    m = model()
    dev = Device(m.soc)
    x = Tensor(dev.upload(X, tag="user x"), X.nbytes, name="x")
    out = out_buffer(dev, m.tasks.outputs[0])
    with StreamExecutor(m, dev) as exe:
        mark = dev.trace.mark()
        with pytest.raises(ApiMisuseError, match=match) as e:
            exe.execute([x], [out], batch=batch)
        assert isinstance(e.value, BadInput)
        assert not [ev for ev in dev.trace.since(mark) if isinstance(ev, Launch)]


def test_a_model_without_branches_takes_no_choice():
    m = relu_neg()
    dev = Device(m.soc)
    ins, out = stage(dev, m), out_buffer(dev, m.tasks.outputs[0])
    with StreamExecutor(m, dev) as exe:
        exe.execute(ins, [out])
        with pytest.raises(ApiMisuseError, match="has no dynamic-batch branches"):
            exe.execute(ins, [out], batch="b1")
