"""The Merge kernel: the join of dynamic-batch branches copies the chosen branch's input (kernels/merge.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from zcspec.impl.device import Device, KernelError, KernelTask, Slot
from zcspec.impl.device.kernels.merge import SELECTED
from tests.helpers.kernel_harness import arrays, device_run, ort_run, shapes

DEV = Device("ascend910b")
F8 = (8,)


@given(x=shapes().flatmap(lambda s: st.tuples(arrays(s), arrays(s))), pick=st.integers(0, 1))
def test_merge_matches_identity_of_the_chosen_input(x, pick):
    expected = ort_run("Identity", [x[pick]])
    (got,) = device_run(DEV, "Merge", list(x), expected, labels=("b1", "b2"), **{SELECTED: ("b1", "b2")[pick]})
    np.testing.assert_array_equal(got, expected[0])


@pytest.mark.parametrize("chosen, match", [(None, "selected branch None"), ("b3", "selected branch 'b3'")])
def test_merge_without_a_valid_choice_fails_naming_it(chosen, match):
    x = np.ones(F8, np.float32)
    attrs = {"labels": ("b1", "b2")} | ({} if chosen is None else {SELECTED: chosen})
    with pytest.raises(KernelError, match=match):
        device_run(DEV, "Merge", [x, x], [x], **attrs)


def _branch_program(dev):
    """Two branches sharing one scratch allocation, as the planner lays them out, joined by a Merge.

    b1: x -> Relu -> t1 (scratch+0) -> Neg -> e1 (scratch+32); b2: x -> Abs -> t2 (scratch+32) -> Sqrt -> e2
    (scratch+0). e1 sits where b2 writes t2, so running b2 after b1 destroys b1's result."""
    s = (Slot("in", F8), Slot("out", F8))
    scratch = dev.malloc(64, tag="shared branch memory")
    t1, e1, t2, e2 = scratch, scratch + 32, scratch + 32, scratch
    tasks = {
        "b1": [(KernelTask("b1_0", "Relu", dev.malloc(16), s), (t1,)), (KernelTask("b1_1", "Neg", dev.malloc(16), s), (t1, e1))],
        "b2": [(KernelTask("b2_0", "Abs", dev.malloc(16), s), (t2,)), (KernelTask("b2_1", "Sqrt", dev.malloc(16), s), (t2, e2))],
    }
    merge = KernelTask("merge", "Merge", dev.malloc(24), (Slot("in", F8), Slot("in", F8), Slot("out", F8)),
                       (("labels", ("b1", "b2")),))
    return tasks, merge, (e1, e2)


@pytest.mark.parametrize("batch", ["b1", "b2"])
def test_running_only_the_chosen_branch_gives_its_numbers_and_both_would_not(batch):
    dev = Device()
    x_host = np.array([-3, -2, -1, 0, 1, 2, 4, 9], np.float32)
    x, y = dev.upload(x_host, tag="x"), dev.malloc(32, tag="y")
    tasks, merge, ends = _branch_program(dev)
    for label, chain in tasks.items():
        (first, (out0,)), (second, (in1, out1)) = chain
        dev.write_args(first, [x, out0])
        dev.write_args(second, [in1, out1])
    dev.write_args(merge, [*ends, y])
    chosen = KernelTask(merge.name, merge.op_type, merge.args, merge.slots, merge.attrs + ((SELECTED, batch),))
    want = {"b1": -np.maximum(x_host, 0), "b2": np.sqrt(np.abs(x_host))}[batch]

    dev.launch_all([t for t, _ in tasks[batch]] + [chosen])
    dev.synchronize()
    np.testing.assert_array_equal(dev.peek(y, F8, np.float32), want)

    dev.launch_all([t for chain in tasks.values() for t, _ in chain] + [chosen])   # both branches: b2 last
    dev.synchronize()
    same = np.array_equal(dev.peek(y, F8, np.float32), want)
    assert same == (batch == "b2")   # b1's result was overwritten: the memory really is shared
