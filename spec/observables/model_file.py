"""A compiled model file as the spec sees it: header, regions, tasks and their argument slots.

Also carries what the MemcpyAddrAsync pass decision depends on: the compiled
graph's nodes (so the spec can see where MemcpyAddrAsync nodes sit) and the
SoC and build facts that decide whether the pass runs (GE: memcpy_addr_async_pass.cc
`MemcpyAddrAsyncPass::Run`).
"""
from __future__ import annotations

from typing import Literal

import attrs

from zcspec.spec.errors import ObservationConsistencyError

Role = Literal["input", "output"]


@attrs.frozen
class Header:
    """The file header as read, with what the loader expects.

    ``expected_magic`` / ``supported_versions`` are the loader's constants;
    ``computed_checksum`` / ``actual_length`` are recomputed from the bytes.
    """

    magic: str
    version: int
    expected_magic: str
    supported_versions: tuple[int, ...]
    declared_length: int
    actual_length: int
    stored_checksum: str
    computed_checksum: str

    def problems(self) -> tuple[str, ...]:
        """Why the file is not well-formed (empty when it is)."""
        out = []
        if self.magic != self.expected_magic:
            out.append(f"magic={self.magic!r}, expected {self.expected_magic!r}")
        if self.version not in self.supported_versions:
            out.append(f"version={self.version!r}, supported {list(self.supported_versions)}")
        if self.declared_length != self.actual_length:
            out.append(f"declared_length={self.declared_length} but the file has {self.actual_length} bytes")
        if self.stored_checksum != self.computed_checksum:
            out.append(f"checksum {self.stored_checksum!r} != recomputed {self.computed_checksum!r}")
        return tuple(out)


@attrs.frozen
class FileEdit:
    """One metadata field of a built file changed on purpose and the file re-signed (a valid checksum):
    ``path`` is the field's JSON path in the metadata; ``identical`` whether the file, when the loader
    accepted it, loaded to exactly the model it was built from (None when it was refused)."""

    path: tuple[str | int, ...]
    identical: bool | None = None


@attrs.frozen
class LoadOutcome:
    """Whether the loader accepted the file, and its error message when it did not."""

    accepted: bool
    error: str | None = None


@attrs.frozen
class ArgSlot:
    """Slot ``index`` of a task's argument table, holding the address ``region`` + ``offset``;
    the task accesses ``size`` bytes through it. ``role`` is ``in`` or ``out`` ("" when not
    known), ``tensor`` the tensor it points at, and ``zero_copy`` an HCCL task's per-buffer
    zero-copy flag as the task definition records it (None for other kinds; GE: hccl_task_info.cc
    `HcclTaskInfo::InitZeroCopyInfos`)."""

    index: int
    region: str
    offset: int
    size: int = 0
    role: str = ""
    tensor: str = ""
    zero_copy: bool | None = None


@attrs.frozen
class Task:
    """A device task as the model file defines it: its ``kind`` (kernel, memset, memcpy,
    memcpy_addr, hccl), the node it belongs to, its stream, whether it sits inside a loop
    subgraph (``in_loop``), and its argument slots."""

    id: int
    kind: str
    slots: tuple[ArgSlot, ...] = ()
    node: str = ""
    stream: int = 0
    in_loop: bool = False


@attrs.frozen
class ZeroCopyEntry:
    """A registered zero-copy slot: slot ``slot`` of task ``task`` holds I/O ``io`` plus ``relative_offset``
    (GE's zero-copy basic/relative offsets: set_input_output_offset_pass.cc
    `SetInputOutputOffsetPass::Run`, zero_copy_offset.cc `ZeroCopyOffset::InitInputDataInfo`)."""

    task: int
    slot: int
    io: str
    role: Role
    relative_offset: int = 0


@attrs.frozen
class Cut:
    """What a Split or Slice node cuts, as its attributes and its input's shape say: ``shape`` the shape of
    input 0; per axis it cuts (``axes``), the range it keeps, ``starts`` to ``ends`` (exclusive) every
    ``steps``-th element, as ONNX's Slice attributes give them (negative values count from the axis's end,
    ranges past it are clamped). A Split keeps, per output, a range of its one axis: the first output's."""

    shape: tuple[int, ...]
    axes: tuple[int, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    steps: tuple[int, ...]


@attrs.frozen
class NodeInfo:
    """A node of the compiled graph as transcribed: its op type, the nodes feeding it (in input
    order), its stream, and whether it is a view (``view``: it has no task and the plan makes its
    output an alias of its input 0: Reshape, ...). Its tasks are the model file's tasks naming it
    (``Task.node``); what a task of this SoC can refresh is the spec's to say (spec/capabilities.py).
    ``cut``: for a Split or a Slice, what it cuts (None for other nodes, or where the attributes do not say).
    ``in_tensors`` / ``out_tensors``: the tensors it reads (in input order, a tensor read twice listed twice) and
    writes (in output order), as the graph names them (a graph input's tensor is its Data node's output, a
    weight's its Const node's); empty when the observer does not give them (then the claims that need them are
    not exercised). ``continuous_output``: the node carries GE's ``ATTR_NAME_CONTINUOUS_OUTPUT`` (a fused
    collective: its outputs in one block), as the graph's attribute says.
    """

    name: str
    type: str
    inputs: tuple[str, ...] = ()
    view: bool = False
    stream: int = 0
    cut: Cut | None = None
    in_tensors: tuple[str, ...] = ()
    out_tensors: tuple[str, ...] = ()
    continuous_output: bool = False


@attrs.frozen
class SocProfile:
    """The SoC the model was built for, by name. What it supports is not observed: the spec looks
    the name up in its own capability table (spec/capabilities.py)."""

    name: str


@attrs.frozen
class BuildFacts:
    """Build options the MemcpyAddrAsync pass and the memory-layout conflict optimizer read (GE:
    memcpy_addr_async_pass.cc `MemcpyAddrAsyncPass::Run`, `NeedInsertMemAddrAsyncNodeAfterData`,
    `IsFeatureMapRefreshable`; mem_layout_conflict_util.cc `IsAddressRefreshable`): an offline (ATC) or
    single-op build, and ``ge.featureBaseRefreshable=1`` given at build time. The graph is static:
    GE's passes skip an unknown-shape graph, and zcspec's compiler refuses a dimension that is not a
    fixed integer (impl/compiler/validate.py), so no fact says otherwise."""

    offline: bool = False
    single_op: bool = False
    feature_base_refreshable: bool = False


@attrs.frozen
class ModelFileObservation:
    header: Header
    load: LoadOutcome | None = None
    regions: dict[str, int] = attrs.field(factory=dict)
    tasks: tuple[Task, ...] = ()
    zero_copy_table: tuple[ZeroCopyEntry, ...] = ()
    nodes: tuple[NodeInfo, ...] = ()
    soc: SocProfile | None = None
    build: BuildFacts = attrs.field(factory=BuildFacts)
    edit: FileEdit | None = None
    # tensor -> its raw dense bytes: the shape and dtype the graph gives it, by the spec's element widths
    # (spec/dtypes.py, never the compiler's); given with the graph, like ``nodes``
    tensor_bytes: dict[str, int] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        names = [n.name for n in self.nodes]
        if len(set(names)) != len(names):
            raise ObservationConsistencyError("duplicate node names in the model file observation")
        for n in self.nodes:
            for src in n.inputs:
                if src not in names:
                    raise ObservationConsistencyError(
                        f"node {n.name!r} reads from {src!r}, which is not a node", culprit=n.name)
        writer: dict[str, str] = {}
        for n in self.nodes:
            for t in n.out_tensors:
                if writer.setdefault(t, n.name) != n.name:
                    raise ObservationConsistencyError(
                        f"tensor {t!r} is written by both {writer[t]!r} and {n.name!r}", culprit=t)
        if writer:
            for n in self.nodes:
                for t in n.in_tensors:
                    if t not in writer:
                        raise ObservationConsistencyError(
                            f"node {n.name!r} reads tensor {t!r}, which no node writes", culprit=n.name)
