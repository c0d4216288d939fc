"""The emulated NPU: memory, copies, streams, events, tasks, kernels, HCCL.

Public API::

    from zcspec.impl.device import Device, KernelTask, MemsetTask, HcclTask, Slot, HcclComm

The SoC profiles a device is made for live in ``zcspec.impl.platform.soc`` (``get_soc``,
``PROFILES``, ``SocProfile``), shared with the compiler.
"""
from zcspec.impl.device.counters import Counters
from zcspec.impl.device.device import DEVICE_BASE, HOST_BASE, Device
from zcspec.impl.device.errors import (
    DeviceError, DeviceFault, DeviceUsageError, KernelError, OutOfMemory, RefreshError, StreamError,
)
from zcspec.impl.device.hccl import COLLECTIVES, HcclComm
from zcspec.impl.device.kernels import KERNELS
from zcspec.impl.device.memory import Allocation
from zcspec.impl.device.tasks import (
    SLOT_BYTES, EventRecordTask, EventWaitTask, HcclTask, KernelTask, MemcpyTask, MemsetTask, Slot,
)
from zcspec.impl.device.trace import Trace

__all__ = [
    "Allocation", "COLLECTIVES", "Counters", "DEVICE_BASE", "Device", "DeviceError", "DeviceFault",
    "DeviceUsageError", "EventRecordTask", "EventWaitTask", "HOST_BASE", "HcclComm", "HcclTask", "KERNELS",
    "KernelError", "KernelTask", "MemcpyTask", "MemsetTask", "OutOfMemory", "RefreshError",
    "SLOT_BYTES", "Slot", "StreamError", "Trace",
]
