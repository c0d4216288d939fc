"""A task's operands: its argument table read from device memory, every range checked, results committed.

The contract the task runners (``executor``) and the collectives (``hccl``) share:
``bind`` reads the slots from the argument table in device memory (never from the
task object) and checks every range, alignment and dtype before anything is written;
``check_results`` checks a kernel's results against the output slots; only then does
``commit`` write them and record the launch. A fault at any step leaves memory as it was.
A slot of a sub-byte element type is unpacked for the kernel (one numpy element per tensor
element) and its result packed back (``impl.platform.storage``).
"""
from __future__ import annotations

import attrs
import numpy as np

from zcspec.impl.device import trace as tr
from zcspec.impl.device.errors import DeviceFault, KernelError
from zcspec.impl.device.tasks import SLOT_BYTES
from zcspec.impl.platform import storage


@attrs.define
class Bound:
    """A task's operands resolved to checked views: inputs, outputs (and their slots), their
    (addr, nbytes) ranges, and ``args``: the slot values read from the argument table."""

    ins: list
    outs: list
    out_offsets: list
    reads: tuple
    writes: tuple
    out_slots: list
    args: tuple = ()


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
        raise misaligned(dev, task, task.args, SLOT_BYTES, "argument table")
    return mem.u8[off:off + SLOT_BYTES * n].view("<u8").tolist()


def misaligned(dev, task, addr, align, what) -> DeviceFault:
    """The fault of ``task``'s ``what`` at ``addr``, which is not a multiple of ``align``."""
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
        dev.trace.append(tr.FaultedLaunch(task.name, task.op_type, task.kind, sid, reads, writes, tuple(values)))
        raise


def _bind(dev, task, values: list[int]) -> Bound:
    mem = dev.mem
    u8 = mem.u8
    ins, outs, out_offsets, reads, writes, out_slots = [], [], [], [], [], []
    for i, (slot, addr) in enumerate(zip(task.slots, values)):
        out = slot.role == "out"
        off = mem.fast_offset(addr, slot.nbytes, out)
        if off < 0:  # the slow path names the fault (or passes a zero-byte slot)
            off = mem.check(addr, slot.nbytes, write=out, task=task.name,
                            what=f"slot {i} ({slot.role} {slot.dtype}{list(slot.shape)})")
        if addr % slot.np_dtype.itemsize:
            raise misaligned(dev, task, addr, slot.np_dtype.itemsize, f"slot {i} ({slot.dtype})")
        raw = u8[off:off + slot.nbytes]
        view = storage.from_storage(raw, slot.shape, slot.dtype) if slot.packed else raw.view(slot.np_dtype).reshape(slot.shape)
        view.flags.writeable = False  # kernels return results; only commit writes
        if out:
            outs.append(view)
            out_offsets.append(off)
            out_slots.append(slot)
            writes.append((addr, slot.nbytes))
        else:
            ins.append(view)
            reads.append((addr, slot.nbytes))
    return Bound(ins, outs, out_offsets, tuple(reads), tuple(writes), out_slots, tuple(values))


def check_results(task, bound: Bound, results) -> list[np.ndarray]:
    """Results as arrays of the output slots' shapes, or KernelError (nothing written yet)."""
    results = [np.asarray(r) for r in results]
    if len(results) != len(bound.outs):
        raise KernelError(task.name, task.op_type, f"kernel returned {len(results)} outputs for {len(bound.outs)} output slots")
    for i, (r, o) in enumerate(zip(results, bound.outs)):
        if r.shape != o.shape:
            raise KernelError(task.name, task.op_type, f"output {i} computed with shape {r.shape}, its slot is {o.shape}")
    return results


def commit(dev, task, bound: Bound, results, sid: int, accumulates: bool = False) -> None:
    """Write checked results into the output ranges and record the launch (with the argument table it
    read; ``accumulates``: the kernel read its outputs before these writes, ``kernels.ACCUMULATES``)."""
    u8 = dev.mem.u8
    for r, o, off, slot in zip(results, bound.outs, bound.out_offsets, bound.out_slots):
        if slot.packed:
            u8[off:off + slot.nbytes] = storage.to_storage(r.astype(o.dtype, copy=False), slot.dtype)
            continue
        target = u8[off:off + o.nbytes].view(o.dtype).reshape(o.shape)
        np.copyto(target, r, casting="unsafe")
    dev.trace.append(tr.Launch(task.name, task.op_type, task.kind, sid, bound.reads, bound.writes, bound.args,
                               bound.writes if accumulates else ()))
