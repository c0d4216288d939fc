"""HCCL on emulated devices: communicators over several devices of one process, and collectives.

A :class:`HcclComm` gives each member device a rank. An ``HcclTask`` names its
communicator; its argument table holds the input buffers then the output buffers
(GE: hccl_task_info.cc ``HcclTaskInfo::SetZeroCopyAddrs``), one set per rank. A collective runs when every rank's stream
has it at its head: all ranks' ranges are checked first, then every rank's outputs
are written, so a fault on one rank leaves every rank unchanged. A device with no
communicator of the task's name runs it as the only rank.

``COLLECTIVES`` maps each collective kind to what it computes. Whether its buffers may be zero copy (user memory
bound straight into the task, HcclTaskInfo::InitZeroCopyInfos, SetZeroCopyAddrs) is not the device's to say: the
model file's task definitions carry it (zero_copy_in/zero_copy_out, from the SoC profile at task generation).
"""
from __future__ import annotations

from typing import Callable

import attrs
import numpy as np

from zcspec.impl.device import operands
from zcspec.impl.device.errors import KernelError, StreamError


@attrs.frozen
class Collective:
    op_type: str
    fn: Callable


_REDUCE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def _all_reduce(tasks, ins, outs):
    """Output i of every rank = reduction (attribute ``reduction``, default sum) of input i over ranks."""
    op = _REDUCE.get(str(tasks[0].attr("reduction", "sum")).lower())
    if op is None:
        raise KernelError(tasks[0].name, tasks[0].op_type, f"reduction must be one of {sorted(_REDUCE)}")
    totals = [op.reduce(np.stack([rank_ins[i] for rank_ins in ins])) for i in range(len(ins[0]))]
    return [list(totals) for _ in ins]


def _all_gather(tasks, ins, outs):
    """Output of every rank = the ranks' inputs concatenated along axis 0, in rank order."""
    gathered = np.concatenate([rank_ins[0].reshape((-1,) + rank_ins[0].shape[1:]) for rank_ins in ins], axis=0)
    return [[gathered.reshape(o[0].shape) if gathered.size == o[0].size else gathered] for o in outs]


def _broadcast(tasks, ins, outs):
    """Output i of every rank = input i of rank ``root`` (attribute, default 0)."""
    root = int(tasks[0].attr("root", 0))
    if not 0 <= root < len(ins):
        raise KernelError(tasks[0].name, tasks[0].op_type, f"root={root} is not a rank of {len(ins)}")
    return [[x.copy() for x in ins[root]] for _ in ins]


COLLECTIVES: dict[str, Collective] = {c.op_type: c for c in (
    Collective("HcomAllReduce", _all_reduce),
    Collective("HcomAllGather", _all_gather),
    Collective("HcomBroadcast", _broadcast),
)}


class HcclComm:
    """A communicator: ``devices[r]`` is rank r. Registers itself with each device under ``name``."""

    def __init__(self, devices, name: str = "world"):
        self.devices = tuple(devices)
        self.name = name
        ids = [d.device_id for d in self.devices]
        if not self.devices or len(set(ids)) != len(ids):
            raise StreamError(f"communicator {name!r}: needs distinct devices, got ids {ids}")
        for rank, d in enumerate(self.devices):
            if name in d.comms:
                raise StreamError(f"device {d.device_id} is already in a communicator named {name!r}")
            d.comms[name] = (self, rank)

    @property
    def size(self) -> int:
        return len(self.devices)

    def heads(self):
        """(device, task, stream id) per rank if every rank has this comm's collective at a stream head."""
        found = []
        for d in self.devices:
            hit = next(((d, t, sid) for sid, t in d.streams.pending()
                        if t.kind == "hccl" and t.comm == self.name), None)
            if hit is None:
                return None
            found.append(hit)
        return found

    def try_run(self) -> bool:
        found = self.heads()
        if found is None:
            return False
        run_collective(found)
        for d, t, sid in found:
            d.streams.stream(sid).queue.popleft()
            d.tally.tasks_executed += 1
        return True


def run_collective(members) -> None:
    """Run one collective; ``members`` is [(device, task, stream id)] in rank order."""
    tasks = [t for _, t, _ in members]
    kinds = {t.op_type for t in tasks}
    if len(kinds) != 1:
        raise StreamError(f"ranks disagree on the collective: {[(t.name, t.op_type) for t in tasks]}")
    c = COLLECTIVES.get(tasks[0].op_type)
    if c is None:
        raise KernelError(tasks[0].name, tasks[0].op_type, f"not a collective; known {sorted(COLLECTIVES)}")
    bounds = [operands.bind(d, t, sid) for d, t, sid in members]   # every rank checked before any write
    results = c.fn(tasks, [b.ins for b in bounds], [b.outs for b in bounds])
    checked = [operands.check_results(t, b, r) for t, b, r in zip(tasks, bounds, results)]
    for (d, t, sid), b, r in zip(members, bounds, checked):
        operands.commit(d, t, b, r, sid)
        d.tally.hccl_launches += 1


def sync_group(device) -> list:
    """``device`` and every device sharing a communicator with it, transitively, by device id."""
    seen, todo = {device.device_id: device}, [device]
    while todo:
        for comm, _ in todo.pop().comms.values():
            for d in comm.devices:
                if d.device_id not in seen:
                    seen[d.device_id] = d
                    todo.append(d)
    return [seen[k] for k in sorted(seen)]


def run_group(devices) -> None:
    """Run every device's streams, firing collectives as their ranks meet, until all are empty."""
    comms = {id(c): c for d in devices for c, _ in d.comms.values()}.values()
    while True:
        progressed = False
        for d in devices:
            progressed |= d.streams.drain(d._execute, d._blocked)
        for c in comms:
            progressed |= c.try_run()
        if not progressed:
            break
    stuck = [f"device {d.device_id}: {d.streams.describe_stuck()}" for d in devices if d.streams.pending()]
    if stuck:
        raise StreamError("streams cannot make progress: " + "; ".join(stuck))
