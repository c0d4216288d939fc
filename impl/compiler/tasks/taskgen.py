"""Task generation: one task per node with argument slots holding logical addresses.

- compute ops: a kernel task (``memcpy_addr`` for MemcpyAddrAsync, ``memcpy`` for
  MemcpyAsync), slots = inputs then outputs (the layout of GE's hccl_task_info.cc
  `HcclTaskInfo::SetZeroCopyAddrs`);
- atomic ops (``OpInfo.atomic``): a memset task over the outputs first, the
  atomic clean the kernel's accumulation relies on (GE: block_mem_assigner.cc `IsAtomicOutputMemory`,
  graph_mem_assigner.cc `SetAtomicCleanOffset`);
- HCCL collectives: an ``hccl`` task with per-buffer zero-copy flags: a buffer is
  zero copy when the SoC supports it for that collective and its planned tensor
  is zero copy (HcclTaskInfo::InitZeroCopyInfos, SetZeroCopyAddrs);
- view, Data, NetOutput and Variable nodes: no task.

A task lists the earlier tasks it must follow besides the bytes it reads (``TaskDef.after``,
``stream_waits.py``): the last task of each control predecessor (through nodes without a task),
and what a node without a task that is a point on its stream stands for, so a runtime puts GE's
event on a control edge between streams and in front of the next task of a stream where a stream
edge lands on a node without a task (``StreamAllocator::InsertSyncEvents``).

Every task records its node's dynamic-batch branch (``TaskDef.batch``, the node's
``_batch_label``; "" outside any branch), so a runtime can launch one branch only.

The zero-copy table lists every slot that points into a zero-copy model input or
output with its relative offset (``SetInputOutputOffsetPass::Run``); the runtime
refreshes exactly those slots. Per-node workspaces are planned but not passed as
slots (no kernel of the emulator uses one).
"""
from __future__ import annotations

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory.plan_types import MemoryPlan, TensorPlacement
from zcspec.impl.compiler.memory.sizes import tensor_size
from zcspec.impl.compiler.tasks.io_offsets import io_offsets
from zcspec.impl.compiler.tasks.stream_waits import StreamWaits
from zcspec.impl.compiler.tasks.tasklist import ArgSlot, IoDesc, TaskDef, TaskList, ZeroCopyRef


def _slot(graph: Graph, tensors: dict[str, TensorPlacement], role: str, name: str) -> ArgSlot:
    t, d = tensors[name], graph.desc[name]
    return ArgSlot(role, name, t.region, t.offset, d.shape, d.dtype, d.nbytes)


def io_table(plan: MemoryPlan, role: str, names, descs, callers) -> list[IoDesc]:
    """The I/O table of ``names`` (graph inputs or outputs) with their ``descs`` (shape, dtype, nbytes),
    each called ``callers[i]`` by the caller (``IoDesc.name``).

    ``size`` is the tensor's own GE size (``tensor_size``: ``align(bytes, 32) + 32``, GE's
    op_tensor_utils.cc `OpTensorUtils::CalibrateTensorSize`), what a user buffer is checked against; the plan
    may give the tensor more (a no-padding
    concat's output owns its whole group). An output whose memory is a model input (passed straight
    through, or a view of one) cannot be produced in the user's output buffer: it is copied
    (GE: davinci_model.cc `GenOutputMemAllocations`), so it is not zero copy. The model-file loader rebuilds
    the table with this
    same function to check a file's.
    """
    inputs = {a.tensor for a in plan.attributes.inputs}
    out = []
    for index, (name, d, caller) in enumerate(zip(names, descs, callers, strict=True)):
        t = plan.tensor(name)
        through = role == "output" and plan.root(name) in inputs
        out.append(IoDesc(role, index, name, t.region, t.offset, min(t.size, tensor_size(d.nbytes, plan.options)),
                          d.nbytes, d.shape, d.dtype, t.zero_copy and not through, caller))
    return out



def _tasks_of(graph: Graph, node, tensors: dict, soc, start: int, batch: str, after: tuple[int, ...]) -> list[TaskDef]:
    ins = [_slot(graph, tensors, "in", t) for t in node.inputs]
    outs = [_slot(graph, tensors, "out", t) for t in node.outputs]
    in_loop = bool(node.attr("_in_loop", False))
    tasks = []
    for kind in ops.task_kinds(node):
        index = start + len(tasks)
        if kind == "memset":
            tasks.append(TaskDef(index, node.name, kind, "AtomicAddrClean", node.stream, outs, (("value", 0),), in_loop,
                                 batch=batch, after=after))
        elif kind == "hccl":
            supported = node.op_type not in soc.hccl_no_zero_copy and soc.zero_copy
            zc_in = tuple(supported and tensors[s.tensor].zero_copy for s in ins)
            zc_out = tuple(supported and tensors[s.tensor].zero_copy for s in outs)
            tasks.append(TaskDef(index, node.name, kind, node.op_type, node.stream, ins + outs, node.attrs, in_loop,
                                 zc_in, zc_out, batch, after))
        else:
            tasks.append(TaskDef(index, node.name, kind, node.op_type, node.stream, ins + outs, node.attrs, in_loop,
                                 batch=batch, after=after))
    return tasks


def generate_tasks(graph: Graph, plan: MemoryPlan, soc, output_names) -> TaskList:
    """Tasks in the plan's execution order, with the I/O table and the zero-copy table.

    ``output_names``: the caller's graph outputs, before the passes. A pass keeps each NetOutput input
    at its index and, where it copies before one, gives the copy the output's name, except for a
    graph input (graph_edit.insert_before_output); the I/O table keeps the caller's name there too."""
    tensors = {t.name: t for t in plan.tensors}
    tasks: list[TaskDef] = []
    waits = StreamWaits(graph)
    for name in plan.order:
        node = graph.node[name]
        # the branch these tasks run in, as the plan records it; "" for every execution
        mine = _tasks_of(graph, node, tensors, soc, len(tasks), plan.branches.get(name, ""), waits.after(name))
        waits.ran(name, mine)
        tasks.extend(mine)
    inputs = io_table(plan, "input", graph.inputs, [graph.desc[t] for t in graph.inputs], graph.inputs)
    outputs = io_table(plan, "output", graph.outputs, [graph.desc[t] for t in graph.outputs], output_names)
    zero_copy_io = {(d.role, d.index) for d in inputs + outputs if d.zero_copy}
    owner = io_offsets(graph, plan).owner
    refs = []
    for task in tasks:
        for i, slot in enumerate(task.slots):
            for role, index, relative in owner.get(slot.tensor, ()):
                if (role, index) in zero_copy_io:
                    refs.append(ZeroCopyRef(task.index, i, role, index, relative))
    return TaskList(tasks, inputs, outputs, refs)
