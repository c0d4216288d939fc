"""Device tasks of a loaded model and their load-time argument tables.

Every task gets its argument table inside one model-owned allocation, one
8-byte slot per operand (GE: davinci_model.cc ``kAddrSize``), written once at load with the
value each slot's allocation gives it (``active base + offset``, args_io_addrs_updater.cc). That write is
GE's all-in-one load-time update for static models (davinci_model.cc
``UpdateStaticModelArgsByFm``): afterwards only slots whose allocation base changes are rewritten.
"""
from __future__ import annotations

from zcspec.impl.device import SLOT_BYTES, HcclTask, KernelTask, MemsetTask, Slot


def task_names(model) -> list[str]:
    """Unique device task names: the node's name, ``node#index`` when a node has several tasks."""
    counts: dict[str, int] = {}
    for t in model.tasks.tasks:
        counts[t.node] = counts.get(t.node, 0) + 1
    return [t.node if counts[t.node] == 1 else f"{t.node}#{t.index}" for t in model.tasks.tasks]


def args_bytes(model) -> int:
    return SLOT_BYTES * sum(len(t.slots) for t in model.tasks.tasks)


def build_tasks(model, args_base: int) -> list:
    """One device task per TaskDef, argument tables packed from ``args_base``."""
    out, cursor = [], args_base
    for t, name in zip(model.tasks.tasks, task_names(model)):
        slots = tuple(Slot(s.role, s.shape, s.dtype) for s in t.slots)
        common = dict(name=name, op_type=t.op_type, args=cursor, slots=slots, attrs=t.attrs, in_loop=t.in_loop)
        if t.kind == "memset":
            task = MemsetTask(**common)
        elif t.kind == "hccl":
            task = HcclTask(**common, comm=str(dict(t.attrs).get("group", "world")))
        else:
            task = KernelTask(**common)   # kernel, memcpy and memcpy_addr: kind follows op_type
        out.append(task)
        cursor += SLOT_BYTES * len(slots)
    return out


def initial_values(refs, bases: dict, fixed_values: dict) -> list[list[int]]:
    """Each task's slot values at load: ``fixed_values[(task, slot)]`` when given (copy-only I/O),
    else the active base of the slot's allocation plus its offset."""
    def value(r):
        fixed = fixed_values.get((r.task, r.slot))
        return bases[r.alloc] + r.offset if fixed is None else fixed

    return [[value(r) for r in task] for task in refs]
