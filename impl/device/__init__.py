"""The emulated NPU: memory, copies, streams, events, tasks, kernels, HCCL, SoC profiles.

Public API::

    from zcspec.impl.device import Device, KernelTask, MemsetTask, HcclTask, Slot, HcclComm, get_soc
"""
from zcspec.impl.device.counters import Counters
from zcspec.impl.device.device import DEVICE_BASE, HOST_BASE, Device
from zcspec.impl.device.errors import (
    DeviceError, DeviceFault, DeviceUsageError, KernelError, OutOfMemory, RefreshError, StreamError,
    UnknownSocError,
)
from zcspec.impl.device.hccl import COLLECTIVES, HcclComm, zero_copy_support
from zcspec.impl.device.kernels import KERNELS
from zcspec.impl.device.memory import Allocation
from zcspec.impl.device.soc import PROFILES, SocProfile, get_soc
from zcspec.impl.device.tasks import (
    SLOT_BYTES, EventRecordTask, EventWaitTask, HcclTask, KernelTask, MemcpyTask, MemsetTask, Slot,
)
from zcspec.impl.device.trace import Trace

__all__ = [
    "Allocation", "COLLECTIVES", "Counters", "DEVICE_BASE", "Device", "DeviceError", "DeviceFault",
    "DeviceUsageError", "EventRecordTask", "EventWaitTask", "HOST_BASE", "HcclComm", "HcclTask", "KERNELS",
    "KernelError", "KernelTask", "MemcpyTask", "MemsetTask", "OutOfMemory", "PROFILES", "RefreshError",
    "SLOT_BYTES", "Slot", "SocProfile", "StreamError", "Trace", "UnknownSocError", "get_soc", "zero_copy_support",
]
