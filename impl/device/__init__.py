"""The emulated NPU: memory, copies, streams, events, tasks, kernels, HCCL, SoC profiles.

Public API::

    from impl.device import Device, KernelTask, MemsetTask, HcclTask, Slot, HcclComm, get_soc
"""
from impl.device.counters import Counters
from impl.device.device import DEVICE_BASE, HOST_BASE, Device
from impl.device.errors import (
    DeviceError, DeviceFault, DeviceUsageError, KernelError, OutOfMemory, RefreshError, StreamError,
    UnknownSocError,
)
from impl.device.hccl import COLLECTIVES, HcclComm, zero_copy_support
from impl.device.kernels import KERNELS
from impl.device.memory import Allocation
from impl.device.soc import PROFILES, SocProfile, get_soc
from impl.device.tasks import (
    SLOT_BYTES, EventRecordTask, EventWaitTask, HcclTask, KernelTask, MemcpyTask, MemsetTask, Slot,
)
from impl.device.trace import Trace

__all__ = [
    "Allocation", "COLLECTIVES", "Counters", "DEVICE_BASE", "Device", "DeviceError", "DeviceFault",
    "DeviceUsageError", "EventRecordTask", "EventWaitTask", "HOST_BASE", "HcclComm", "HcclTask", "KERNELS",
    "KernelError", "KernelTask", "MemcpyTask", "MemsetTask", "OutOfMemory", "PROFILES", "RefreshError",
    "SLOT_BYTES", "Slot", "SocProfile", "StreamError", "Trace", "UnknownSocError", "get_soc", "zero_copy_support",
]
