"""Examples for the device invariants: an access in an allocation, one 64 bytes past its end, one in freed memory;
a kernel whose inputs broadcast to its output and one whose inputs do not broadcast; a full device whose freed
block holds a later malloc exactly; a malloc of 0 bytes."""
from __future__ import annotations

import struct

import attrs

from zcspec.spec.examples.build import Example
from zcspec.spec.observables.device import (
    CollectiveRun, DeviceEvent, DeviceObservation, KernelRun, MallocCall, OracleRun, OracleTensor,
)
from zcspec.spec.observables.trace import Range

_BASE = 0x1_0000_0000_0000


_MEMORY = Range(_BASE, 1 << 30)


def _counted(faults: int) -> DeviceObservation:
    """The probe of :func:`_probe` with the device's counters: two mallocs, one free, one access run, two refused."""
    counters = {"faults": faults, "tasks_executed": 1, "alloc_calls": 2, "free_calls": 1}
    return attrs.evolve(_probe("out_of_bounds"), counters=counters)


def _probe(past_end_refused: str | None, stale_refused: str = "use_after_free") -> DeviceObservation:
    return DeviceObservation("probe", (
        DeviceEvent(0, "alloc", address=_BASE, size=1024),
        DeviceEvent(1, "alloc", address=_BASE + 1024, size=512),
        DeviceEvent(2, "access", task="copy 1", reads=(Range(_BASE, 1024),), writes=(Range(_BASE, 16),)),
        DeviceEvent(3, "access", task="copy 2", writes=(Range(_BASE + 1000, 88),), refused=past_end_refused),
        DeviceEvent(4, "free", address=_BASE + 1024),
        DeviceEvent(5, "access", task="copy 3", reads=(Range(_BASE + 1024, 8),), refused=stale_refused),
    ), _MEMORY)


def _floats(*values: float) -> str:
    return struct.pack(f"<{len(values)}f", *values).hex()


def _kernels(mis_shaped_ran: bool) -> DeviceObservation:
    """Add of [1, 2, 3] and [10] (broadcasts to [3]: runs), then of [1, 2, 3] and [10, 20] (does not)."""
    fill = _floats(0.0, 0.0, 0.0)
    legal = KernelRun(0, "add 1", "Add", "float32", (3,), (1,), (3,), _floats(1, 2, 3), _floats(10), fill,
                      _floats(11, 12, 13))
    refused = ("KernelError", "task 'add 2' (Add): shapes (3,) and (2,) do not broadcast")
    illegal = KernelRun(1, "add 2", "Add", "float32", (3,), (2,), (3,), _floats(1, 2, 3), _floats(10, 20), fill,
                        _floats(11, 22, 0) if mis_shaped_ran else fill,
                        *((None, "") if mis_shaped_ran else refused))
    return DeviceObservation("probe", (), _MEMORY, (legal, illegal))


def _all_reduce(ran_alone: bool) -> DeviceObservation:
    """A sum over two ranks of [1, 2] and [10, 20]; run alone, rank 0 keeps its own input."""
    outs = (_floats(1, 2), _floats(10, 20)) if ran_alone else (_floats(11, 22),) * 2
    run = CollectiveRun(0, "HcomAllReduce", 2, "float32", (2,), (2,), (("reduction", "sum"),),
                        (_floats(1, 2), _floats(10, 20)), outs)
    return DeviceObservation("probe", (), _MEMORY, collective_runs=(run,))


def _allocator(freed_bytes_back: bool) -> DeviceObservation:
    """A 4 KiB device (alignment 512) filled by three blocks, a malloc of 512 bytes refused (only a 24-byte gap
    is left), the middle block freed and freed again (refused), then a malloc of 1024 bytes: the freed block's
    place holds it exactly, so only a device whose free kept the bytes refuses it."""
    last = (DeviceEvent(6, "alloc", address=_BASE + 1024, size=1024) if freed_bytes_back
            else DeviceEvent(6, "alloc", size=1024, refused="out_of_memory"))
    return DeviceObservation("probe", (
        DeviceEvent(0, "alloc", address=_BASE, size=1024),
        DeviceEvent(1, "alloc", address=_BASE + 1024, size=1000),
        DeviceEvent(2, "alloc", address=_BASE + 2048, size=2048),
        DeviceEvent(3, "alloc", size=512, refused="out_of_memory"),
        DeviceEvent(4, "free", address=_BASE + 1024),
        DeviceEvent(5, "free", address=_BASE + 1024, refused="double_free"),
        last,
    ), Range(_BASE, 4096), soc="ascend910b")


def _reductions(wrong_shape_ran: bool) -> DeviceObservation:
    """ReduceMax of [1, 2, 3] over axis 0 (onnxruntime: 3.0), then the same into an output slot of shape [1]
    without keepdims (onnxruntime's output has shape []): run, it wrote 3.0 where it must have been refused."""
    fill = _floats(0.0)
    x, out = (OracleTensor((3,), "float32", _floats(1, 2, 3)),), (OracleTensor((1,), "float32"),)
    keep, drop = '{"axes": [0], "keepdims": 1}', '{"axes": [0], "keepdims": 0}'
    legal = OracleRun(0, "max 1", "ReduceMax", keep, keep, 13, x, out, (fill,), (_floats(3),),
                      oracle=(OracleTensor((1,), "float32", _floats(3)),))
    refused = ("KernelError", "task 'max 2' (ReduceMax): reduction has shape (), output slot has (1,)")
    illegal = OracleRun(1, "max 2", "ReduceMax", drop, drop, 13, x, out, (fill,),
                        (_floats(3) if wrong_shape_ran else fill,), *((None, "") if wrong_shape_ran else refused),
                        oracle=(OracleTensor((), "float32", _floats(3)),))
    return DeviceObservation("probe", (), _MEMORY, oracle_runs=(legal, illegal))


def _mallocs(zero_size_got_memory: bool) -> DeviceObservation:
    """A malloc of 1024 bytes that got memory, and one of 0 bytes: refused for its size, or (a device whose
    check lost its size condition) handed an address."""
    bad = (MallocCall(1, 0, None, _BASE + 1024) if zero_size_got_memory else
           MallocCall(1, 0, None, None, "DeviceUsageError", "device malloc 'probe 1': size=0 must be positive"))
    return DeviceObservation("probe", (DeviceEvent(0, "alloc", address=_BASE, size=1024),), _MEMORY,
                             malloc_calls=(MallocCall(0, 1024, None, _BASE), bad))


def _unaddressed_free() -> DeviceObservation:
    """The probe of :func:`_probe` whose free has the address -1 (a transcription's 'none')."""
    probe = _probe("out_of_bounds")
    evs = list(probe.events)
    evs[4] = attrs.evolve(evs[4], address=-1)
    return attrs.evolve(probe, events=tuple(evs))


EXAMPLES = (
    Example("DEVICE-TRACE-FORM", _probe("out_of_bounds"), _unaddressed_free(),
            culprit="events[4]", why="the free's address is -1, which no device hands out"),
    Example("DEVICE-BOUNDS", _probe("out_of_bounds"), _probe(None),
            culprit="access 3", why="a write running 64 bytes past the end of the allocation ran"),
    Example("DEVICE-FAULT-KIND", _probe("out_of_bounds"), _probe("out_of_bounds", stale_refused="out_of_bounds"),
            culprit="access 5", why="a read of freed memory was reported as out of bounds, not use after free"),
    Example("DEVICE-KERNEL-REFUSAL", _kernels(False), _kernels(True),
            culprit="compute step 1", why="an Add whose inputs [3] and [2] do not broadcast ran and wrote its output"),
    Example("DEVICE-COLLECTIVE", _all_reduce(False), _all_reduce(True),
            culprit="collective step 0 (HcomAllReduce over 2 ranks)",
            why="each rank ran the sum alone and kept its own input"),
    Example("DEVICE-ALLOC-FIT", _allocator(True), _allocator(False),
            culprit="malloc 6 of 1024 bytes",
            why="a malloc the freed block's 1024 bytes hold exactly was refused: the free did not give them back"),
    Example("DEVICE-MALLOC-ARGS", _mallocs(False), _mallocs(True),
            culprit="malloc step 1", why="a malloc of 0 bytes got an address instead of being refused"),
    Example("DEVICE-COUNTERS-TRUE", _counted(2), _counted(1),
            culprit="counter 'faults'",
            why="the probe's trace shows two refused accesses (past an allocation's end, into freed memory), the "
                "device's counters one fault"),
    Example("DEVICE-KERNEL-ORACLE", _reductions(False), _reductions(True),
            culprit="oracle step 1 (task 'max 2', ReduceMax)",
            why="a ReduceMax into an output slot of another shape than onnxruntime's ran"),
)
