"""Running one task on a device: read its argument table, check every range, compute, write.

Contract for every task kind: all byte ranges (argument table, inputs, outputs) are
checked *before* anything is written, so a faulting task leaves memory, counters
and the allocation table as they were. Argument slots are read from device memory
at run time (never from the task object), so a stale slot reads a stale buffer
(``operands``, which the collectives of ``hccl`` share).
"""
from __future__ import annotations

from zcspec.impl.device import hccl
from zcspec.impl.device import trace as tr
from zcspec.impl.device.errors import KernelError
from zcspec.impl.device.kernels import ACCUMULATES, KERNELS
from zcspec.impl.device.operands import bind, check_results, commit


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
    commit(dev, task, bound, check_results(task, bound, raw), sid, accumulates=task.op_type in ACCUMULATES)
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
    dev.trace.append(tr.Launch(task.name, task.op_type, task.kind, sid, (), bound.writes, bound.args))


def run_memcpy(dev, task, token, sid) -> None:
    dev._copy(task.dst, task.src, task.nbytes, task.direction, task=task.name, stream=sid)


def run_record(dev, task, token, sid) -> None:
    dev.streams.events[task.event].completed = max(dev.streams.events[task.event].completed, token)
    dev.trace.append(tr.Sync("record", task.event, sid, task.name))


def run_wait(dev, task, token, sid) -> None:
    dev.trace.append(tr.Sync("wait", task.event, sid, task.name))


def run_hccl(dev, task, token, sid) -> None:
    hccl.run_collective([(dev, task, sid)])


RUNNERS = {
    "kernel": run_kernel, "memcpy": run_kernel, "memcpy_addr": run_kernel,
    "memset": run_memset, "memcpy_raw": run_memcpy, "record": run_record, "wait": run_wait,
    "hccl": run_hccl,
}


def execute(dev, task, token, sid) -> None:
    RUNNERS[task.kind](dev, task, token, sid)
    dev.tally.tasks_executed += 1
