"""Errors of the emulated NPU, with structured fields so tests and tools need not parse messages.

- :class:`DeviceFault`: a task, copy or memset touched memory it must not (out of
  bounds, use after free, double free, misaligned, write to read-only, unmapped)
  or the device ran out of memory. ``kind`` says which; ``task``, ``address``,
  ``nbytes`` and ``nearest`` (the closest allocation, live or freed) say where.
  A fault changes no device state except the fault counter and the trace.
- :class:`DeviceUsageError`: an API call with nonsensical arguments.
- :class:`KernelError`: a kernel was given shapes, dtypes or attributes it
  cannot run (a compiler bug or a bad graph), raised before any write.
- :class:`StreamError`: the streams cannot make progress (a collective some rank
  never reaches), or a stream, event or communicator was used wrongly.
- :class:`RefreshError`: an argument refresh the SoC profile does not allow.

A bad SoC profile name is the platform's ``UnknownSocError`` (``zcspec.impl.platform.errors``).
``DeviceError`` is the device layer's root (under ``ZcspecError``, docs/errors.md). None of
these is ``BadInput``: the device's callers are the runtimes, so a device error that reaches
the command line is an internal failure (exit code 1), never the user's.
"""
from __future__ import annotations

from zcspec.impl.platform.errors import ZcspecError

FAULT_KINDS = (
    "out_of_bounds", "use_after_free", "double_free", "invalid_free", "misaligned",
    "read_only", "unmapped", "out_of_memory",
)


class DeviceError(ZcspecError):
    """Base of every error the emulated device raises."""


class DeviceFault(DeviceError):
    """An illegal memory access or allocation; see the module docstring for the fields."""

    def __init__(self, kind: str, message: str, *, task: str = "", address: int | None = None,
                 nbytes: int = 0, nearest: str = "", device: int = 0):
        assert kind in FAULT_KINDS, kind
        self.kind, self.task, self.address, self.nbytes = kind, task, address, nbytes
        self.nearest, self.device = nearest, device
        who = f"task {task!r}: " if task else ""
        super().__init__(f"device {device}: {kind.replace('_', ' ')}: {who}{message}")


class OutOfMemory(DeviceFault):
    """malloc could not find room; the allocation table is unchanged."""

    def __init__(self, message: str, *, nbytes: int, device: int = 0, task: str = ""):
        super().__init__("out_of_memory", message, nbytes=nbytes, device=device, task=task)


class DeviceUsageError(DeviceError, ValueError):
    """A device API was called with arguments that make no sense (size 0, bad alignment, unknown kind)."""


class KernelError(DeviceError):
    """A kernel cannot run with the shapes, dtypes or attributes its task gives it."""

    def __init__(self, task: str, op_type: str, why: str):
        self.task, self.op_type = task, op_type
        super().__init__(f"task {task!r} ({op_type}): {why}")


class StreamError(DeviceError):
    """Streams, events or collectives cannot make progress, or were used wrongly."""


class RefreshError(DeviceError):
    """An argument slot refresh the SoC profile does not support (GE: task_args_refresh_type_classifier.cc
    ``FixedAddrInferrer``, hccl_task_info.cc ``IsFeatureBaseRefreshable``)."""

    def __init__(self, task: str, why: str):
        self.task = task
        super().__init__(f"task {task!r}: cannot refresh its arguments: {why}")

