"""The TaskList artefact: what the runtime loads and refreshes.

Every task argument slot holds a *logical* address (region + offset): the
runtime turns it into a device address at load, and re-points the slots listed
in the zero-copy table at the user's buffers on every execution (GE:
zero_copy_offset.cc, davinci_model.cc `UpdateAllNodeArgs`). Frozen values with a JSON form (``to_dict``) that the model file
carries; the model-file loader (model_file/schema.py) parses it back strictly.
"""
from __future__ import annotations

import attrs
from attrs import field

from zcspec.impl.compiler.graph_json import encode_value

TASK_KINDS = ("kernel", "memset", "hccl", "memcpy_addr", "memcpy")


@attrs.frozen
class ArgSlot:
    """One 8-byte argument slot: ``role`` in/out, the tensor it points at and where it lives."""

    role: str
    tensor: str
    region: str
    offset: int
    shape: tuple[int, ...] = field(converter=tuple)
    dtype: str
    nbytes: int


@attrs.frozen
class TaskDef:
    """One device task. ``zero_copy_in``/``zero_copy_out`` are an HCCL task's per-buffer
    zero-copy flags (GE: hccl_task_info.cc `InitZeroCopyInfos`), empty for other kinds. ``batch`` is the dynamic-batch
    branch the task belongs to (its node's ``_batch_label``, GE: ATTR_NAME_BATCH_LABEL), "" for a task that
    runs in every execution: a runtime launches only the chosen branch's tasks and the unlabelled
    ones (runtime/branches.py). ``after`` lists the earlier tasks (by index) this one must follow
    besides the bytes it reads (tasks/stream_waits.py): the last task of each control predecessor,
    found through nodes without tasks, and what a node without a task that holds a stream stands
    for, on the next task of that stream and on its readers; a runtime orders one on another stream
    with an event, as GE's ``StreamAllocator::InsertSyncEvents`` does (data edges between tasks need
    no list: a runtime sees them as reads of bytes another stream wrote)."""

    index: int
    node: str
    kind: str
    op_type: str
    stream: int
    slots: tuple[ArgSlot, ...] = field(converter=tuple)
    attrs: tuple = field(converter=tuple, default=())
    in_loop: bool = False
    zero_copy_in: tuple[bool, ...] = field(converter=tuple, default=())
    zero_copy_out: tuple[bool, ...] = field(converter=tuple, default=())
    batch: str = ""
    after: tuple[int, ...] = field(converter=tuple, default=())


@attrs.frozen
class IoDesc:
    """A model input or output: where the model itself planned it and how big it is.

    ``size`` is the planned (padded) size, ``nbytes`` the raw dense bytes; runtime v1
    accepts a user buffer of at least ``size - 64`` (GE: davinci_model.cc `CheckUserAndModelSize`).
    ``tensor`` is the planned tensor that holds it; ``name`` is what the caller calls it (binds a buffer
    by, reads a result under): the graph's input or output name as the caller built it. The two differ
    only for an output that is also a graph input and gets a copy before the NetOutput: the copy's
    tensor cannot take the input's name, which the Data keeps (graph_edit.insert_before_output). GE
    names model outputs after the user's graph the same way, whatever its passes insert
    (``ATTR_MODEL_OUT_NODES_NAME``).
    """

    role: str
    index: int
    tensor: str
    region: str
    offset: int
    size: int
    nbytes: int
    shape: tuple[int, ...] = field(converter=tuple)
    dtype: str
    zero_copy: bool
    name: str


@attrs.frozen
class ZeroCopyRef:
    """Task ``task``'s slot ``slot`` points into model ``role`` ``index`` at ``relative_offset``
    bytes from its start (SetInputOutputOffsetPass's basic/relative offsets, GE:
    set_input_output_offset_pass.cc `SetInputOutputOffsetPass::Run`)."""

    task: int
    slot: int
    role: str
    index: int
    relative_offset: int


@attrs.frozen
class TaskList:
    tasks: tuple[TaskDef, ...] = field(converter=tuple)
    inputs: tuple[IoDesc, ...] = field(converter=tuple)
    outputs: tuple[IoDesc, ...] = field(converter=tuple)
    zero_copy: tuple[ZeroCopyRef, ...] = field(converter=tuple)

    def to_dict(self) -> dict:
        def enc(v):
            d = attrs.asdict(v, recurse=False)
            if "slots" in d:
                d["slots"] = [attrs.asdict(s) for s in v.slots]
            if "attrs" in d:
                d["attrs"] = [[k, encode_value(x)] for k, x in v.attrs]
            return {k: list(x) if isinstance(x, tuple) else x for k, x in d.items()}

        return {
            "tasks": [enc(t) for t in self.tasks],
            "inputs": [enc(i) for i in self.inputs],
            "outputs": [enc(o) for o in self.outputs],
            "zero_copy": [attrs.asdict(z) for z in self.zero_copy],
        }
