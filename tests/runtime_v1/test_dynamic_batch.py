"""Runtime v1 executes one dynamic-batch branch per call (the branch the caller chooses, runtime/branches.py)."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.impl.device import Device
from zcspec.impl.device.trace import Launch
from zcspec.impl.platform.errors import BadInput
from zcspec.impl.runtime.acl import Acl
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import LoadOptions, load
from zcspec.impl.runtime.v1.errors import ParamInvalid
from tests.helpers.dynamic_batch import CHAINS, X, expected, model, overlapping_across_branches
from tests.helpers.runtime_v1 import buffers, mlp


def run(m, batch, *, zero_copy: bool = True) -> np.ndarray:
    dev = Device(m.soc)
    lm = load(dev, m, LoadOptions(zero_copy=zero_copy))
    ins, outs = stage_inputs(dev, m, {"x": X}), alloc_outputs(dev, m)
    try:
        lm.execute(ins, outs, batch=batch)
        return next(iter(read_outputs(dev, m, outs).values()))
    finally:
        lm.unload()
        free_buffers(dev, ins + outs)


@pytest.mark.parametrize("strategy", ["ge", "compact"])
def test_branches_share_memory_in_the_plan(strategy):
    # The precondition of the tests below: if both branches ran, the later one would overwrite the
    # earlier one's Merge input (b1_2:0 is live until the Merge while b2 runs).
    pairs = overlapping_across_branches(model(strategy).plan)
    assert any(a == "b1_2:0" for a, _ in pairs), pairs


@pytest.mark.parametrize("zero_copy", [True, False])
@pytest.mark.parametrize("batch", ["b1", "b2"])
def test_each_branch_gives_its_numbers(batch, zero_copy):
    got = run(model(), batch, zero_copy=zero_copy)
    np.testing.assert_allclose(got, expected(X, batch), rtol=1e-5, atol=1e-6)


def test_only_the_chosen_branch_launches():
    m = model()
    dev = Device(m.soc)
    lm = load(dev, m, LoadOptions())
    ins, outs = stage_inputs(dev, m, {"x": X}), alloc_outputs(dev, m)
    mark = dev.trace.mark()
    record = lm.execute(ins, outs, batch="b2")
    launched = [e.op_type for e in dev.trace.since(mark) if isinstance(e, Launch)]
    assert launched == CHAINS["b2"] + ["Merge", "Add"]   # b2's chain, then the unlabelled tasks
    assert record.counters.kernel_launches == 5


def test_a_model_with_branches_needs_a_choice():
    m = model()
    lm = load(Device(m.soc), m, LoadOptions())
    ins, outs = stage_inputs(lm.device, m, {"x": X}), alloc_outputs(lm.device, m)
    with pytest.raises(ParamInvalid, match=r"dynamic-batch branches \['b1', 'b2'\]") as e:
        lm.execute(ins, outs)
    assert isinstance(e.value, BadInput) and lm.last_call.error is e.value   # the caller's fault, recorded


def test_a_label_the_model_lacks_is_named():
    m = model()
    lm = load(Device(m.soc), m, LoadOptions())
    ins, outs = stage_inputs(lm.device, m, {"x": X}), alloc_outputs(lm.device, m)
    with pytest.raises(ParamInvalid, match=r"batch='b9' is not a branch .* \['b1', 'b2'\]"):
        lm.execute(ins, outs, batch="b9")


def test_a_model_without_branches_takes_no_choice():
    m = mlp()
    lm = load(Device(m.soc), m, LoadOptions())
    ins, outs = buffers(lm.device, m)
    lm.execute(ins, outs)   # nothing new needed
    with pytest.raises(ParamInvalid, match="has no dynamic-batch branches"):
        lm.execute(ins, outs, batch="b1")


def test_acl_sets_the_branch_on_the_input_dataset():
    m = model()
    dev = Device(m.soc)
    acl = Acl(dev)
    mid = acl.mdl_load_from_mem(encode(m))
    ins, outs = stage_inputs(dev, m, {"x": X}), alloc_outputs(dev, m)
    ids, ods = acl.create_dataset(), acl.create_dataset()
    acl.add_dataset_buffer(ids, acl.create_data_buffer(ins[0].addr, ins[0].size))
    acl.add_dataset_buffer(ods, acl.create_data_buffer(outs[0].addr, outs[0].size))
    with pytest.raises(ParamInvalid, match="choose one per execution"):
        acl.mdl_execute(mid, ids, ods)
    with pytest.raises(ParamInvalid, match="'b3' is not a branch"):
        acl.mdl_set_dynamic_batch(mid, ids, "b3")
    for batch in ("b1", "b2"):
        acl.mdl_set_dynamic_batch(mid, ids, batch)
        acl.mdl_execute(mid, ids, ods)
        got = next(iter(read_outputs(dev, m, outs).values()))
        np.testing.assert_allclose(got, expected(X, batch), rtol=1e-5, atol=1e-6)
    acl.mdl_unload(mid)
