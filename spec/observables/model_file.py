"""A compiled model file as the spec sees it: header, regions, tasks and their argument slots.

Also carries what the MemcpyAddrAsync pass decision depends on: the compiled
graph's nodes (so the spec can see where MemcpyAddrAsync nodes sit) and the
SoC and build facts that decide whether the pass runs (ge-facts.md 5.3).
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
class LoadOutcome:
    """Whether the loader accepted the file, and its error message when it did not."""

    accepted: bool
    error: str | None = None


@attrs.frozen
class ArgSlot:
    """Slot ``index`` of a task's argument table, holding the address ``region`` + ``offset``;
    the task accesses ``size`` bytes through it."""

    index: int
    region: str
    offset: int
    size: int = 0


@attrs.frozen
class Task:
    id: int
    kind: str
    slots: tuple[ArgSlot, ...] = ()


@attrs.frozen
class ZeroCopyEntry:
    """A registered zero-copy slot: slot ``slot`` of task ``task`` holds I/O ``io`` plus ``relative_offset``
    (GE's zero-copy basic/relative offsets, ge-facts.md 5.2, 6.3)."""

    task: int
    slot: int
    io: str
    role: Role
    relative_offset: int = 0


@attrs.frozen
class NodeInfo:
    """A node of the compiled graph: its type, its producers, and whether its tasks can have their
    arguments refreshed (GE's ``IsNodeSupportZeroCopy`` / HCCL address refresh, ge-facts.md 2.6.3).

    ``supports_addr_refresh`` covers the tasks that reference the node's outputs;
    ``supports_input_refresh`` those that reference its inputs (None: the same; they differ
    when an atomic-clean memset, which touches outputs only, cannot be refreshed).
    ``view``: the node has no task and its output aliases its input 0 (Reshape, ...).
    ``has_task``: the node runs at least one task (views, Data, NetOutput and Const do not).
    """

    name: str
    type: str
    inputs: tuple[str, ...] = ()
    supports_addr_refresh: bool = True
    supports_input_refresh: bool | None = None
    view: bool = False
    has_task: bool = True

    @property
    def refreshes_inputs(self) -> bool:
        return self.supports_addr_refresh if self.supports_input_refresh is None else self.supports_input_refresh


@attrs.frozen
class SocProfile:
    """What the SoC supports: ``supports_zero_copy_memcpy`` is GE's ``MEMCPY_INFO_SUPPORT_ZEROCOPY`` capability."""

    name: str
    supports_zero_copy_memcpy: bool


@attrs.frozen
class BuildFacts:
    """Build options the MemcpyAddrAsync pass reads (ge-facts.md 5.3.2, 5.3.4)."""

    offline: bool = False
    single_op: bool = False
    feature_base_refreshable: bool = False
    unknown_shape: bool = False


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

    def __attrs_post_init__(self) -> None:
        names = [n.name for n in self.nodes]
        if len(set(names)) != len(names):
            raise ObservationConsistencyError("duplicate node names in the model file observation")
        for n in self.nodes:
            for src in n.inputs:
                if src not in names:
                    raise ObservationConsistencyError(
                        f"node {n.name!r} reads from {src!r}, which is not a node", culprit=n.name)
