"""Collectives over several devices of one process, and their zero-copy declarations."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from zcspec.impl.device import (
    COLLECTIVES, Device, DeviceFault, HcclComm, HcclTask, Slot, StreamError,
)
from zcspec.impl.device import trace as tr


def cluster(n, soc="ascend910b"):
    devs = [Device(soc, device_id=i, capacity=64 << 20) for i in range(n)]
    HcclComm(devs)
    return devs


def collective(devs, op, inputs, out_shape, **attrs):
    """Launch ``op`` on every rank (rank r reads ``inputs[r]``); returns per-rank output addresses."""
    outs = []
    for d, x in zip(devs, inputs):
        src = d.upload(x, tag="send")
        dst = d.malloc(int(np.prod(out_shape)) * x.itemsize, tag="recv")
        task = HcclTask(f"{op}_{d.device_id}", op, d.malloc(16),
                        (Slot("in", x.shape), Slot("out", out_shape)), tuple(attrs.items()))
        d.write_args(task, [src, dst])
        d.launch(task)
        outs.append(dst)
    return outs


@given(ranks=st.integers(1, 4), n=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_all_reduce_sums_over_ranks(ranks, n, seed):
    rng = np.random.default_rng(seed)
    devs = cluster(ranks)
    xs = [rng.standard_normal(n).astype(np.float32) for _ in devs]
    outs = collective(devs, "HcomAllReduce", xs, (n,))
    devs[-1].synchronize()   # any rank pulls the whole group
    for d, o in zip(devs, outs):
        np.testing.assert_allclose(d.peek(o, (n,), np.float32), np.sum(xs, axis=0), rtol=1e-6)
        assert d.counters.hccl_launches == 1


def test_all_gather_concatenates_in_rank_order():
    devs = cluster(3)
    xs = [np.full((2, 2), r, np.float32) for r in range(3)]
    outs = collective(devs, "HcomAllGather", xs, (6, 2))
    devs[0].synchronize()
    for d, o in zip(devs, outs):
        np.testing.assert_array_equal(d.peek(o, (6, 2), np.float32), np.concatenate(xs))


def test_broadcast_copies_the_root():
    devs = cluster(3)
    xs = [np.full(4, r + 1, np.float32) for r in range(3)]
    outs = collective(devs, "HcomBroadcast", xs, (4,), root=2)
    devs[1].synchronize()
    for d, o in zip(devs, outs):
        np.testing.assert_array_equal(d.peek(o, (4,), np.float32), xs[2])


def test_single_device_without_communicator_is_rank_zero_of_one():
    (d,) = [Device()]
    (o,) = collective([d], "HcomAllReduce", [np.arange(3, dtype=np.float32)], (3,))
    d.synchronize()
    np.testing.assert_array_equal(d.peek(o, (3,), np.float32), [0, 1, 2])


def test_a_rank_that_never_arrives_is_reported():
    devs = cluster(2)
    collective(devs[:1], "HcomAllReduce", [np.ones(2, np.float32)], (2,))
    with pytest.raises(StreamError, match="collective peers"):
        devs[0].synchronize()


def test_a_fault_on_one_rank_writes_no_rank():
    devs = cluster(2)
    xs = [np.ones(4, np.float32), np.ones(4, np.float32)]
    outs = collective(devs, "HcomAllReduce", xs, (4,))
    devs[1].free(outs[1])   # rank 1's receive buffer is gone
    with pytest.raises(DeviceFault) as err:
        devs[0].synchronize()
    assert err.value.kind == "use_after_free" and err.value.device == 1
    assert np.isnan(devs[0].peek(outs[0], (4,), np.float32)).all()
    assert devs[1].counters.faults == 1 and devs[0].counters.faults == 0
    assert not devs[0].trace.of_type(tr.Launch)


def test_the_collectives_are_the_three_hccl_kinds():
    assert set(COLLECTIVES) == {"HcomAllReduce", "HcomAllGather", "HcomBroadcast"}