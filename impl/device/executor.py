"""Running one task on a device: read its argument table, check every range, compute, write.

Contract for every task kind: all byte ranges (argument table, inputs, outputs) are
checked *before* anything is written, so a faulting task leaves memory, counters
and the allocation table as they were. Argument slots are read from device memory
at run time (never from the task object), so a stale slot reads a stale buffer.
"""
from __future__ import annotations

import attrs
import numpy as np

from zcspec.impl.device import trace as tr
from zcspec.impl.device.errors import DeviceFault, KernelError
from zcspec.impl.device.kernels import KERNELS
from zcspec.impl.device.tasks import SLOT_BYTES


@attrs.define
class Bound:
    """A task's operands resolved to checked views: inputs, outputs, and their (addr, nbytes) ranges."""

    ins: list
    outs: list
    out_offsets: list
    reads: tuple
    writes: tuple


def slot_values(dev, task) -> list[int]:
    """The addresses now stored in ``task``'s argument table (checked read of the table)."""
    n = len(task.slots)
    if n == 0:
        return []
    mem = dev.mem
    off = mem.fast_offset(task.args, SLOT_BYTES * n, False)
    if off < 0:
        off = mem.check(task.args, SLOT_BYTES * n, task=task.name, what="argument table read")
    if task.args % SLOT_BYTES:
        raise _misaligned(dev, task, task.args, SLOT_BYTES, "argument table")
    return mem.u8[off:off + SLOT_BYTES * n].view("<u8").tolist()


def _misaligned(dev, task, addr, align, what) -> DeviceFault:
    return DeviceFault("misaligned", f"{what} at {addr:#x} is not {align}-byte aligned ({dev.mem.nearest(addr)})",
                       task=task.name, address=addr, nbytes=0, nearest=dev.mem.nearest(addr), device=dev.device_id)


def bind(dev, task, sid: int) -> Bound:
    """Check every slot's range and alignment and build read-only numpy views over device memory.

    A slot that faults is preceded in the trace by a ``FaultedLaunch`` of the task on stream ``sid``
    (what every slot designated), so an observer sees the accesses the task attempted."""
    values = slot_values(dev, task)
    try:
        return _bind(dev, task, values)
    except DeviceFault:
        reads = tuple((a, s.nbytes) for s, a in zip(task.slots, values) if s.role == "in")
        writes = tuple((a, s.nbytes) for s, a in zip(task.slots, values) if s.role == "out")
        dev.trace.append(tr.FaultedLaunch(task.name, task.op_type, task.kind, sid, reads, writes))
        raise


def _bind(dev, task, values: list[int]) -> Bound:
    mem = dev.mem
    u8 = mem.u8
    ins, outs, out_offsets, reads, writes = [], [], [], [], []
    for i, (slot, addr) in enumerate(zip(task.slots, values)):
        out = slot.role == "out"
        off = mem.fast_offset(addr, slot.nbytes, out)
        if off < 0:  # the slow path names the fault (or passes a zero-byte slot)
            off = mem.check(addr, slot.nbytes, write=out, task=task.name,
                            what=f"slot {i} ({slot.role} {slot.dtype}{list(slot.shape)})")
        if addr % slot.np_dtype.itemsize:
            raise _misaligned(dev, task, addr, slot.np_dtype.itemsize, f"slot {i} ({slot.dtype})")
        if not slot.dense:
            raise KernelError(task.name, task.op_type, f"slot {i} dtype {slot.dtype} has no kernel support")
        view = u8[off:off + slot.nbytes].view(slot.np_dtype).reshape(slot.shape)
        view.flags.writeable = False  # kernels return results; only commit writes
        if out:
            outs.append(view)
            out_offsets.append(off)
            writes.append((addr, slot.nbytes))
        else:
            ins.append(view)
            reads.append((addr, slot.nbytes))
    return Bound(ins, outs, out_offsets, tuple(reads), tuple(writes))


def check_results(task, bound: Bound, results) -> list[np.ndarray]:
    """Results as arrays of the output slots' shapes, or KernelError (nothing written yet)."""
    results = [np.asarray(r) for r in results]
    if len(results) != len(bound.outs):
        raise KernelError(task.name, task.op_type, f"kernel returned {len(results)} outputs for {len(bound.outs)} output slots")
    for i, (r, o) in enumerate(zip(results, bound.outs)):
        if r.shape != o.shape:
            raise KernelError(task.name, task.op_type, f"output {i} computed with shape {r.shape}, its slot is {o.shape}")
    return results


def commit(dev, task, bound: Bound, results, sid: int) -> None:
    """Write checked results into the output ranges and record the launch."""
    u8 = dev.mem.u8
    for r, o, off in zip(results, bound.outs, bound.out_offsets):
        target = u8[off:off + o.nbytes].view(o.dtype).reshape(o.shape)
        np.copyto(target, r, casting="unsafe")
    dev.trace.append(tr.Launch(task.name, task.op_type, task.kind, sid, bound.reads, bound.writes))


def run_kernel(dev, task, token, sid) -> None:
    fn = KERNELS.get(task.op_type)
    if fn is None:
        raise KernelError(task.name, task.op_type, "no kernel for this op type")
    bound = bind(dev, task, sid)
    try:
        raw = fn(task, bound.ins, bound.outs)
    except KernelError:
        raise
    except (ValueError, TypeError, IndexError, ArithmeticError) as e:
        # numpy rejecting the operands: a shape/dtype/attribute the compiler got wrong.
        raise KernelError(task.name, task.op_type, f"{type(e).__name__}: {e} (inputs "
                          f"{[(x.shape, str(x.dtype)) for x in bound.ins]}, attributes {dict(task.attrs)})") from e
    commit(dev, task, bound, check_results(task, bound, raw), sid)
    dev.tally.kernel_launches += 1


def run_memset(dev, task, token, sid) -> None:
    """Atomic clean: fill every slot's whole range with byte ``value``."""
    bound = bind(dev, task, sid)
    if bound.ins:
        raise KernelError(task.name, task.op_type, "a memset task has output slots only")
    value = int(task.attr("value", 0)) & 0xFF
    u8 = dev.mem.u8
    for (addr, n), off in zip(bound.writes, bound.out_offsets):
        u8[off:off + n] = value
        dev.trace.append(tr.Memset(addr, n, value, task.name))
        dev.tally.memset_bytes += n
    dev.tally.memset_calls += 1
    dev.trace.append(tr.Launch(task.name, task.op_type, task.kind, sid, (), bound.writes))


def run_memcpy(dev, task, token, sid) -> None:
    dev._copy(task.dst, task.src, task.nbytes, task.direction, task=task.name)


def run_record(dev, task, token, sid) -> None:
    dev.streams.events[task.event].completed = max(dev.streams.events[task.event].completed, token)
    dev.trace.append(tr.Sync("record", task.event, sid, task.name))


def run_wait(dev, task, token, sid) -> None:
    dev.trace.append(tr.Sync("wait", task.event, sid, task.name))


def run_hccl(dev, task, token, sid) -> None:
    from zcspec.impl.device import hccl

    hccl.run_collective([(dev, task, sid)])


RUNNERS = {
    "kernel": run_kernel, "memcpy": run_kernel, "memcpy_addr": run_kernel,
    "memset": run_memset, "memcpy_raw": run_memcpy, "record": run_record, "wait": run_wait,
    "hccl": run_hccl,
}


def execute(dev, task, token, sid) -> None:
    RUNNERS[task.kind](dev, task, token, sid)
    dev.tally.tasks_executed += 1
