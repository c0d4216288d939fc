"""The emulated NPU's public API: memory, copies, argument tables, streams, counters, trace.

    dev = Device("ascend910b")
    x = dev.upload(np.ones((2, 3), np.float32), tag="x")       # malloc + counted H2D copy
    y = dev.malloc(24, tag="y")
    args = dev.malloc(16, tag="relu args")
    task = KernelTask("relu", "Relu", args, (Slot("in", (2, 3)), Slot("out", (2, 3))))
    dev.write_args(task, [x, y])                                # 64-bit slots in device memory
    dev.launch(task); dev.synchronize()
    dev.download(y, (2, 3), "float32")                          # counted D2H copy

Contracts: every address is checked (``memory.AddressSpace.check``); a fault or
error changes no memory, allocation or counter except ``faults`` (it is recorded in
the trace, and aborts the synchronize: pending tasks of the device are dropped,
like a stream in error). Copies are counted by direction, inferred from which
address space each side lies in.
"""
from __future__ import annotations

import functools

import numpy as np

from zcspec.impl.device import executor, hccl, operands
from zcspec.impl.device import trace as tr
from zcspec.impl.device.counters import Counters, Tally
from zcspec.impl.device.errors import DeviceError, DeviceFault, DeviceUsageError, KernelError, RefreshError, StreamError
from zcspec.impl.device.kernels import KERNELS
from zcspec.impl.device.memory import AddressSpace, Allocation
from zcspec.impl.device.streams import Streams
from zcspec.impl.device.tasks import SLOT_BYTES
from zcspec.impl.device.virtual import VIRTUAL_OFFSET, VirtualSpace
from zcspec.impl.platform.soc import SocProfile, get_soc

DEVICE_BASE = 0x1_0000_0000_0000   # far from 0: an offset used as an address faults
DEVICE_STRIDE = 0x1000_0000_0000   # each device its own 16 TiB window
HOST_BASE = 0x5_0000_0000_0000
MAX_DEVICES = 32
_KERNEL_KINDS = frozenset({"kernel", "memcpy", "memcpy_addr"})


def _guarded(method):
    """Record a DeviceFault raised by ``method`` (fault counter + trace) before it propagates."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except DeviceFault as f:
            self._note_fault(f)
            raise

    return wrapper


class Device:
    """One emulated device. ``host`` may be shared by several devices of one process."""

    def __init__(self, soc: str | SocProfile | None = None, device_id: int = 0, *, capacity: int | None = None,
                 host: AddressSpace | None = None, host_capacity: int = 4 << 30, trace: bool = True,
                 poison: bool = True):
        if not 0 <= device_id < MAX_DEVICES:
            raise DeviceUsageError(f"device_id={device_id} must be in 0..{MAX_DEVICES - 1}")
        self.soc = get_soc(soc)
        self.device_id = device_id
        self.mem = AddressSpace("device", DEVICE_BASE + device_id * DEVICE_STRIDE, capacity or self.soc.capacity,
                                align=self.soc.alloc_align, device_id=device_id, poison=poison)
        self._owns_host = host is None
        self.host = host or AddressSpace("host", HOST_BASE, host_capacity, align=64, device_id=device_id, poison=poison)
        self.tally = Tally()
        self.trace = tr.Trace(trace)
        self.streams = Streams()
        self.comms: dict[str, tuple] = {}   # communicator name -> (HcclComm, rank); see hccl.py
        self.vm = VirtualSpace(DEVICE_BASE + device_id * DEVICE_STRIDE + VIRTUAL_OFFSET, self.trace)

    def close(self) -> None:
        """Release the backing memory now (it also goes when the device is garbage collected)."""
        self.mem.close()
        if self._owns_host:
            self.host.close()

    def __repr__(self) -> str:
        return f"Device({self.soc.name!r}, device_id={self.device_id})"

    # -- observation ---------------------------------------------------------------

    @property
    def counters(self) -> Counters:
        t = self.tally
        t.allocated_bytes, t.peak_allocated_bytes = self.mem.allocated_bytes, self.mem.peak_bytes
        return t.snapshot()

    def allocations(self) -> tuple[Allocation, ...]:
        return self.mem.allocations()

    def allocation(self, addr: int) -> Allocation | None:
        """The live device allocation containing ``addr``."""
        return self.mem.live(addr)

    def _note_fault(self, f: DeviceFault) -> None:
        self.tally.faults += 1
        self.trace.append(tr.Fault(f.kind, f.task, f.address, f.nbytes, str(f)))

    # -- memory --------------------------------------------------------------------

    @_guarded
    def malloc(self, size: int, align: int | None = None, tag: str = "", read_only: bool = False) -> int:
        """Device memory of ``size`` bytes; ``read_only`` marks weights (only a synchronous H2D memcpy may write them)."""
        a = self.mem.malloc(size, align, tag, read_only)
        self.tally.alloc_calls += 1
        self.trace.append(tr.Alloc(a.addr, a.size, a.tag, a.space, a.read_only))
        return a.addr

    @_guarded
    def free(self, addr: int) -> None:
        a = self.mem.free(addr)
        self.tally.free_calls += 1
        self.trace.append(tr.Free(a.addr, a.size, a.tag, a.space))

    @_guarded
    def host_malloc(self, size: int, tag: str = "") -> int:
        a = self.host.malloc(size, None, tag)
        self.trace.append(tr.Alloc(a.addr, a.size, a.tag, a.space, False))
        return a.addr

    @_guarded
    def host_free(self, addr: int) -> None:
        a = self.host.free(addr)
        self.trace.append(tr.Free(a.addr, a.size, a.tag, a.space))

    def _space(self, addr: int) -> AddressSpace:
        return self.host if self.host.contains(addr) else self.mem  # mem.check faults on anything else

    @_guarded
    def memcpy(self, dst: int, src: int, nbytes: int, kind: str | None = None) -> None:
        """Synchronous copy; direction (h2d, d2h, d2d, h2h) inferred, ``kind`` must agree if given.

        The only write read-only memory accepts is this call's H2D form (loading weights).
        """
        self._copy(dst, src, nbytes, kind)

    def _copy(self, dst: int, src: int, nbytes: int, kind: str | None, *, task: str = "",
              stream: int | None = None) -> None:
        if nbytes < 0:
            raise DeviceUsageError(f"memcpy of {nbytes} bytes")
        ds, ss = self._space(dst), self._space(src)
        direction = f"{ss.space[0]}2{ds.space[0]}"
        if kind is not None and kind != direction:
            raise DeviceUsageError(f"memcpy kind={kind!r} but {src:#x} -> {dst:#x} is {direction}")
        if nbytes == 0:
            return
        soff = ss.check(src, nbytes, task=task, what="copy source")
        # Read-only (weight) memory is filled by the host at load: a synchronous H2D copy
        # may write it; a copy task, a D2D copy, a memset or a kernel may not.
        loading = direction == "h2d" and not task
        doff = ds.check(dst, nbytes, write=True, task=task, what="copy destination", loading=loading)
        ds.u8[doff:doff + nbytes] = ss.u8[soff:soff + nbytes]
        self.tally.copy(direction, nbytes)
        self.trace.append(tr.Copy(direction, dst, src, nbytes, task, stream))

    @_guarded
    def memset(self, addr: int, nbytes: int, value: int = 0) -> None:
        off = self.mem.check(addr, nbytes, write=True, what="memset")
        self.mem.u8[off:off + nbytes] = value & 0xFF
        self.tally.memset_bytes += nbytes
        self.tally.memset_calls += 1
        self.trace.append(tr.Memset(addr, nbytes, value & 0xFF))

    # -- host-side data and conveniences -------------------------------------------

    @_guarded
    def host_write(self, addr: int, array) -> None:
        """Fill host memory from ``array`` (the user writing its own buffer: not a copy, not counted)."""
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        off = self.host.check(addr, data.nbytes, write=True, what="host write")
        self.host.u8[off:off + data.nbytes] = data

    @_guarded
    def host_read(self, addr: int, shape, dtype) -> np.ndarray:
        return self._read(self.host, addr, shape, dtype)

    @_guarded
    def peek(self, addr: int, shape, dtype) -> np.ndarray:
        """A copy of device memory for tests and debugging (checked, not counted, not a model copy)."""
        return self._read(self.mem, addr, shape, dtype)

    def _read(self, space, addr, shape, dtype) -> np.ndarray:
        dt = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        off = space.check(addr, n, what="read")
        return space.u8[off:off + n].view(dt).reshape(shape).copy()

    def upload(self, array, tag: str = "", read_only: bool = False) -> int:
        """New device memory holding ``array``: staged through host memory by one counted H2D copy."""
        data = np.ascontiguousarray(array)
        size = max(data.nbytes, 1)
        host = self.host_malloc(size, tag=f"staging {tag}")
        try:
            self.host_write(host, data)
            dst = self.malloc(size, tag=tag, read_only=read_only)
            self.memcpy(dst, host, data.nbytes, "h2d")
        finally:
            self.host_free(host)
        return dst

    def download(self, addr: int, shape, dtype) -> np.ndarray:
        """A device tensor read back by one counted D2H copy into host staging memory."""
        dt = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        host = self.host_malloc(max(n, 1), tag="download staging")
        try:
            self.memcpy(host, addr, n, "d2h")
            return self.host_read(host, shape, dt)
        finally:
            self.host_free(host)

    # -- argument tables -----------------------------------------------------------

    @_guarded
    def write_args(self, task, addresses) -> None:
        """Write the load-time argument table of ``task`` (one 64-bit address per slot)."""
        addresses = [int(a) for a in addresses]
        if len(addresses) != len(task.slots):
            raise DeviceUsageError(f"task {task.name!r} has {len(task.slots)} slots, got {len(addresses)} addresses")
        self._write_slots(task, list(enumerate(addresses)), refresh=False)

    @_guarded
    def refresh_arg(self, task, slot: int, address: int) -> None:
        """Rewrite one slot after load; refused (RefreshError) when the SoC cannot refresh this task."""
        self._refresh(task, {slot: address})

    @_guarded
    def refresh_args(self, task, updates: dict[int, int]) -> None:
        """Rewrite several slots (slot index -> address) after load; see ``refresh_arg``."""
        self._refresh(task, updates)

    def _refresh(self, task, updates: dict[int, int]) -> None:
        if not self.soc.can_refresh(task.kind, in_loop=getattr(task, "in_loop", False)):
            loop = " inside a loop subgraph" if getattr(task, "in_loop", False) else ""
            raise RefreshError(task.name, f"SoC {self.soc.name!r} cannot refresh {task.kind} tasks{loop}")
        bad = [s for s in updates if not 0 <= s < len(task.slots)]
        if bad:
            raise DeviceUsageError(f"task {task.name!r} has slots 0..{len(task.slots) - 1}, not {bad}")
        self._write_slots(task, sorted((s, int(a)) for s, a in updates.items()), refresh=True)

    def _write_slots(self, task, pairs, *, refresh: bool) -> None:
        if not hasattr(task, "slots"):
            raise DeviceUsageError(f"task {task.name!r} ({type(task).__name__}) has no argument table")
        if not pairs:
            return
        off = self.mem.check(task.args, SLOT_BYTES * len(task.slots), write=True, task=task.name, what="argument table write")
        if task.args % SLOT_BYTES:
            raise operands.misaligned(self, task, task.args, SLOT_BYTES, "argument table")
        table = self.mem.u8[off:off + SLOT_BYTES * len(task.slots)].view("<u8")
        for slot, addr in pairs:
            table[slot] = addr
            self.trace.append(tr.ArgWrite(task.name, slot, task.args + SLOT_BYTES * slot, addr, refresh))
        if refresh:
            self.tally.args_refreshed += len(pairs)
        else:
            self.tally.args_written += len(pairs)
        self.tally.args_bytes += SLOT_BYTES * len(pairs)

    @_guarded
    def read_args(self, task) -> tuple[int, ...]:
        """The addresses in ``task``'s argument table now (what the task will read)."""
        return tuple(operands.slot_values(self, task))

    # -- streams -------------------------------------------------------------------

    def create_stream(self) -> int:
        return self.streams.create_stream()

    def create_event(self) -> int:
        return self.streams.create_event()

    def launch(self, task, stream: int = 0) -> None:
        """Append ``task`` to ``stream``; it runs at the next ``synchronize``.

        A kernel task whose op type has no kernel is refused here (KernelError), not at run time.
        """
        if task.kind in _KERNEL_KINDS and task.op_type not in KERNELS:
            raise KernelError(task.name, task.op_type, f"no kernel for op type {task.op_type!r}")
        self.streams.enqueue(task, stream)

    def launch_all(self, tasks, stream: int = 0) -> None:
        for t in tasks:
            self.launch(t, stream)

    def synchronize(self) -> None:
        """Run every launched task, honouring stream order and events; collectives pull their peers.

        On a fault or kernel error, every pending task of the devices involved is dropped.
        """
        group = hccl.sync_group(self)
        try:
            if len(group) == 1:
                self.streams.drain(self._execute, self._blocked)
                if self.streams.pending():
                    raise StreamError(f"device {self.device_id} cannot make progress: {self.streams.describe_stuck()}")
            else:
                hccl.run_group(group)
        except DeviceFault as f:
            next((d for d in group if d.device_id == f.device), self)._note_fault(f)
            for d in group:
                d.streams.clear()
            raise
        except DeviceError:
            for d in group:
                d.streams.clear()
            raise

    def _execute(self, task, token, sid) -> None:
        executor.execute(self, task, token, sid)

    def _blocked(self, task) -> bool:
        entry = self.comms.get(task.comm)
        return entry is not None and entry[0].size > 1
