"""The MemoryPlan artefact: what the planner hands to task generation, the model file and the runtimes.

``plan.to_json()`` is the contract's object (docs/memory-planning.md, ``zcspec
plan --json``): ``order``, ``tensors``, ``blocks``, ``regions``,
``lower_bound``, ``naive``, plus ``strategy``, ``options`` (PlanOptions),
``attributes`` (GE's model attributes) and ``branches`` (the dynamic-batch
label of every node of ``order`` that runs in one branch only). A tensor carries ``batch``, its
dynamic-batch branch label (null outside any branch); a block carries
``parent``, the block whose memory a level-2 child or batch child lies in
(null for top-level blocks). ``MemoryPlan.from_json`` reads it back; a
missing, unknown or mistyped key raises ArtefactFormatError naming it.
"""
from __future__ import annotations

from typing import Mapping

import attrs

from zcspec.impl.compiler.artefact_json import from_json, to_json
from zcspec.impl.compiler.memory.options import PlanOptions

REGIONS = ("feature_map", "zero_copy", "weight", "fixed")


@attrs.frozen
class TensorPlacement:
    """One planned tensor. ``first``/``last``: inclusive steps its memory must stay intact."""

    name: str
    region: str
    offset: int
    size: int
    aligned_size: int
    first: int
    last: int
    block: int
    zero_copy: bool
    alias_of: str | None
    batch: str | None


@attrs.frozen
class BlockPlacement:
    id: int
    region: str
    offset: int
    size: int
    zero_copy: bool
    tensors: tuple[str, ...] = attrs.field(converter=tuple)
    parent: int | None


@attrs.frozen
class IoAttribute:
    """A model input (Data node) or output (NetOutput input ``index``) as GE records it.

    ``basic_offset``: the tensor's offset in the model's work memory (feature map
    at 0, zero-copy region after it; weights/fixed within their own region).
    ``relative_offsets``: GE's _zero_copy_relative_offset list (SetInputOutputOffsetPass::Run): (0,) unless
    the tensor is the output of a no-padding concat, whose pieces sit at these
    offsets from the basic one.
    """

    index: int
    node: str
    tensor: str
    region: str
    basic_offset: int
    is_zero_copy_block: bool
    relative_offsets: tuple[int, ...] = attrs.field(converter=tuple)


@attrs.frozen
class ModelAttributes:
    """GE's model attributes (model_builder.cc ``BuildModelDefForMem``): memory_size includes the zero-copy region."""

    memory_size: int
    zero_copy_memory_size: int
    inputs: tuple[IoAttribute, ...] = attrs.field(converter=tuple)
    outputs: tuple[IoAttribute, ...] = attrs.field(converter=tuple)


@attrs.frozen
class MemoryPlan:
    """The planner's artefact, read by task generation, the model file and both runtimes.

    Every field is required: a consumer never invents a default. ``to_json``
    and ``from_json`` are the only JSON form (``zcspec plan --json``, the
    ``.zcm`` metadata), through :mod:`zcspec.impl.compiler.artefact_json`.
    """

    order: tuple[str, ...] = attrs.field(converter=tuple)
    tensors: tuple[TensorPlacement, ...] = attrs.field(converter=tuple)
    blocks: tuple[BlockPlacement, ...] = attrs.field(converter=tuple)
    regions: Mapping[str, int]
    lower_bound: int
    naive: int
    strategy: str
    options: PlanOptions
    attributes: ModelAttributes
    branches: Mapping[str, str]

    def tensor(self, name: str) -> TensorPlacement:
        """The placement of tensor ``name``; KeyError if the plan has none."""
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    def chain(self, name: str, *, index: Mapping[str, "TensorPlacement"] | None = None) -> tuple[str, ...]:
        """``name``, the tensor it is an alias of, and so on to the tensor whose memory they all use.
        The planner writes the final root directly; a crafted chain is followed too, stopping at a
        cycle or a dangling name. ``index`` (name -> placement) spares a caller that follows many
        chains rebuilding it each time."""
        by_name = index if index is not None else {t.name: t for t in self.tensors}
        out = [name]
        while name in by_name and by_name[name].alias_of in by_name and by_name[name].alias_of not in out:
            name = by_name[name].alias_of
            out.append(name)
        return tuple(out)

    def root(self, name: str) -> str:
        """The tensor whose memory ``name`` uses: the end of its ``chain``."""
        return self.chain(name)[-1]

    def roots(self) -> dict[str, str]:
        """Every tensor's ``root`` at once, through one shared index (the planner writes one hop, so this
        is one pass; callers that need them all use it instead of calling ``root`` per tensor)."""
        by_name = {t.name: t for t in self.tensors}
        return {name: self.chain(name, index=by_name)[-1] for name in by_name}

    @property
    def arena(self) -> int:
        """The feature-map region: what the strategies compete on."""
        return self.regions["feature_map"]

    def to_json(self) -> dict:
        return to_json(self)

    @classmethod
    def from_json(cls, data, where: str = "plan") -> "MemoryPlan":
        """The plan ``data`` describes; ArtefactFormatError naming the key on a missing, unknown or mistyped one."""
        return from_json(cls, data, where)
