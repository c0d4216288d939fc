"""Task launch: write a task's argument table from its tensor data and put it on its stream.

Runtime v2 builds every task's arguments anew per execution from the addresses its inputs
and outputs got this time (no load-time slots to refresh, unlike v1's zero-copy table), so
the write is counted as ``args_written``. A ``waits`` attribute lists other streams whose
work this task depends on: an event recorded there and waited for here orders them. Of a
dynamic-batch model only the chosen branch's tasks and the unlabelled ones launch
(runtime/branches.py); a Merge launches knowing the chosen branch.
"""
from __future__ import annotations

from zcspec.impl.device import EventRecordTask, EventWaitTask
from zcspec.impl.runtime import branches


def launch(frame, node, args):
    loaded, dev = frame.loaded, frame.device
    if not branches.launches(loaded.model.tasks.tasks[node.attr("task")], frame.batch):
        return ()   # a task of another dynamic-batch branch: not launched, its arguments not written
    task = branches.for_branch(loaded.device_task(node.attr("task")), frame.batch)
    addrs = [td.addr for td in args]
    dev.write_args(task, addrs)
    stream = loaded.stream(node.attr("stream", 0))
    for other in node.attr("waits", ()):
        event = dev.create_event()
        dev.launch(EventRecordTask(f"{task.name} record", event), loaded.stream(other))
        dev.launch(EventWaitTask(f"{task.name} wait", event), stream)
    dev.launch(task, stream)
    return ()


KERNELS = {"LaunchKernel": launch, "LaunchMemset": launch, "LaunchHccl": launch}
