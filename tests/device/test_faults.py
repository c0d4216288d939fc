"""One test per fault kind: the error names the culprit, and device state is unchanged after it."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.impl.device import Device, DeviceFault, KernelTask, OutOfMemory, Slot


def state(dev: Device):
    """Everything a fault must leave alone (the fault counter aside)."""
    c = dev.counters.as_dict()
    c.pop("faults")
    return dev.allocations(), c, dev.mem.u8[: 1 << 16].tobytes()


@pytest.fixture
def dev():
    return Device("ascend910b", capacity=64 << 20)


def relu_task(dev, x_shape=(4,), y_shape=(4,), name="relu_0"):
    args = dev.malloc(16, tag=f"{name} args")
    return KernelTask(name, "Relu", args, (Slot("in", x_shape), Slot("out", y_shape)))


def launch_and_fault(dev, task, addresses, kind):
    dev.write_args(task, addresses)
    before = state(dev)
    faults = dev.counters.faults
    dev.launch(task)
    with pytest.raises(DeviceFault) as err:
        dev.synchronize()
    assert err.value.kind == kind
    assert err.value.task == task.name and task.name in str(err.value)
    assert state(dev) == before
    assert dev.counters.faults == faults + 1
    assert not dev.streams.pending()
    return err.value


def test_out_of_bounds_read(dev):
    x = dev.upload(np.ones(3, np.float32), tag="x")    # 12 bytes; the task reads 16
    y = dev.malloc(16, tag="y")
    f = launch_and_fault(dev, relu_task(dev), [x, y], "out_of_bounds")
    assert f.address == x and "'x'" in str(f) and "'x'" in f.nearest


def test_out_of_bounds_write(dev):
    x = dev.upload(np.ones(4, np.float32), tag="x")
    y = dev.malloc(12, tag="y")
    f = launch_and_fault(dev, relu_task(dev), [x, y], "out_of_bounds")
    assert f.address == y and "'y'" in f.nearest and "4 bytes past the end" in str(f)


def test_offset_mistaken_for_address_is_unmapped(dev):
    y = dev.malloc(16, tag="y")
    f = launch_and_fault(dev, relu_task(dev), [0x200, y], "unmapped")
    assert f.address == 0x200


def test_use_after_free(dev):
    x = dev.upload(np.ones(4, np.float32), tag="x")
    y = dev.malloc(16, tag="y")
    task = relu_task(dev)
    dev.free(x)
    f = launch_and_fault(dev, task, [x, y], "use_after_free")
    assert "freed" in str(f) and "'x'" in f.nearest


def test_double_free(dev):
    x = dev.malloc(64, tag="x")
    dev.free(x)
    before = state(dev)
    with pytest.raises(DeviceFault) as err:
        dev.free(x)
    assert err.value.kind == "double_free" and err.value.address == x and "'x'" in str(err.value)
    assert state(dev) == before


def test_free_of_interior_pointer(dev):
    x = dev.malloc(64, tag="x")
    before = state(dev)
    with pytest.raises(DeviceFault) as err:
        dev.free(x + 8)
    assert err.value.kind == "invalid_free" and "'x'" in err.value.nearest
    assert state(dev) == before


def test_misaligned_operand(dev):
    x = dev.malloc(64, tag="x")
    y = dev.malloc(16, tag="y")
    f = launch_and_fault(dev, relu_task(dev), [x + 2, y], "misaligned")
    assert f.address == x + 2 and "4-byte" in str(f)


def test_misaligned_argument_table(dev):
    x, y = dev.malloc(16, tag="x"), dev.malloc(16, tag="y")
    args = dev.malloc(32, tag="args")
    task = KernelTask("relu_odd", "Relu", args + 4, (Slot("in", (4,)), Slot("out", (4,))))
    with pytest.raises(DeviceFault) as err:
        dev.write_args(task, [x, y])
    assert err.value.kind == "misaligned" and err.value.task == "relu_odd"


def test_write_to_read_only_weight(dev):
    x = dev.upload(np.ones(4, np.float32), tag="x")
    w = dev.upload(np.ones(4, np.float32), tag="conv1.weight", read_only=True)
    f = launch_and_fault(dev, relu_task(dev), [x, w], "read_only")
    assert "'conv1.weight'" in str(f) and f.address == w


def test_copy_into_read_only(dev):
    w = dev.upload(np.ones(4, np.float32), tag="w", read_only=True)
    src = dev.malloc(16, tag="src")
    before = state(dev)
    with pytest.raises(DeviceFault) as err:
        dev.memcpy(w, src, 16)
    assert err.value.kind == "read_only" and state(dev) == before


def test_out_of_memory(dev):
    dev.malloc(60 << 20, tag="big")
    before = state(dev)
    with pytest.raises(OutOfMemory) as err:
        dev.malloc(8 << 20, tag="feature map")
    assert err.value.kind == "out_of_memory" and "'feature map'" in str(err.value) and err.value.nbytes == 8 << 20
    assert state(dev) == before
    dev.malloc(1 << 20, tag="still works")


def test_fault_in_second_output_writes_nothing(dev):
    """All ranges are checked before any write: the valid first output keeps its bytes."""
    x = dev.upload(np.arange(8, dtype=np.float32), tag="x")
    a, b = dev.malloc(16, tag="a"), dev.malloc(8, tag="b")   # b is too small for its 16-byte half
    args = dev.malloc(24, tag="args")
    task = KernelTask("split_0", "Split", args, (Slot("in", (8,)), Slot("out", (4,)), Slot("out", (4,))),
                      (("axis", 0),))
    launch_and_fault(dev, task, [x, a, b], "out_of_bounds")
    assert np.isnan(dev.peek(a, (4,), np.float32)).all()   # still the malloc poison


def test_host_pointer_in_a_kernel_slot_faults(dev):
    h = dev.host_malloc(16, tag="user host buffer")
    y = dev.malloc(16, tag="y")
    f = launch_and_fault(dev, relu_task(dev), [h, y], "unmapped")
    assert f.address == h


def test_fault_is_traced(dev):
    x = dev.malloc(64, tag="x")
    dev.free(x)
    mark = dev.trace.mark()
    with pytest.raises(DeviceFault):
        dev.free(x)
    (ev,) = dev.trace.since(mark)
    assert type(ev).__name__ == "Fault" and ev.kind == "double_free" and ev.address == x


def test_kernel_rejecting_its_operands_is_a_kernel_error_naming_the_task(dev):
    from zcspec.impl.device import KernelError

    a, b, y = dev.malloc(16, tag="a"), dev.malloc(12, tag="b"), dev.malloc(16, tag="y")
    task = KernelTask("add_0", "Add", dev.malloc(24), (Slot("in", (4,)), Slot("in", (3,)), Slot("out", (4,))))
    dev.write_args(task, [a, b, y])
    dev.launch(task)
    with pytest.raises(KernelError, match="add_0.*broadcast"):
        dev.synchronize()
    assert np.isnan(dev.peek(y, (4,), np.float32)).all()


def test_launch_refuses_an_op_without_kernel(dev):
    from zcspec.impl.device import KernelError

    task = KernelTask("reshape_0", "Reshape", dev.malloc(16), (Slot("in", (4,)), Slot("out", (4,))))
    with pytest.raises(KernelError, match="reshape_0.*no kernel"):
        dev.launch(task)
    assert not dev.streams.pending()
