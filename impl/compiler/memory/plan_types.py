"""The MemoryPlan artefact and its JSON contract (DESIGN.md "Contracts", ``zcspec plan --json``).

``plan.to_contract()`` returns exactly the contract's object: ``order``,
``tensors``, ``blocks``, ``regions``, ``lower_bound``, ``naive``, plus the
extra keys ``strategy``, ``options`` and ``attributes`` (GE's model attributes).
Blocks carry one extra key, ``parent``: the block whose memory a level-2 child
or batch child lies in (null for top-level blocks). ``MemoryPlan.from_contract``
reads it back; a missing or mistyped key raises :class:`ContractError`.
"""
from __future__ import annotations

from typing import Mapping

import attrs

from zcspec.impl.compiler.memory.errors import ContractError
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
    alias_of: str | None = None


@attrs.frozen
class BlockPlacement:
    id: int
    region: str
    offset: int
    size: int
    zero_copy: bool
    tensors: tuple[str, ...] = attrs.field(converter=tuple)
    parent: int | None = None


@attrs.frozen
class IoAttribute:
    """A model input (Data node) or output (NetOutput input ``index``) as GE records it.

    ``basic_offset``: the tensor's offset in the model's work memory (feature map
    at 0, zero-copy region after it; weights/fixed within their own region).
    ``relative_offsets``: GE's _zero_copy_relative_offset list (5.2): (0,) unless
    the tensor is the output of a no-padding concat, whose pieces sit at these
    offsets from the basic one.
    """

    index: int
    node: str
    tensor: str
    region: str
    basic_offset: int
    is_zero_copy_block: bool
    relative_offsets: tuple[int, ...] = attrs.field(converter=tuple, default=(0,))


@attrs.frozen
class ModelAttributes:
    """GE's model attributes (ge-facts.md 3.2.6): memory_size includes the zero-copy region."""

    memory_size: int
    zero_copy_memory_size: int
    inputs: tuple[IoAttribute, ...] = attrs.field(converter=tuple)
    outputs: tuple[IoAttribute, ...] = attrs.field(converter=tuple)


def _req(d: Mapping, key: str, types, where: str):
    if not isinstance(d, Mapping) or key not in d:
        raise ContractError(f"plan JSON: {where} has no {key!r}")
    value = d[key]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _tuple(types)):
        raise ContractError(f"plan JSON: {where}.{key} = {value!r} has the wrong type")
    return value


def _tuple(types):
    return types if isinstance(types, tuple) else (types,)


@attrs.frozen
class MemoryPlan:
    order: tuple[str, ...] = attrs.field(converter=tuple)
    tensors: tuple[TensorPlacement, ...] = attrs.field(converter=tuple)
    blocks: tuple[BlockPlacement, ...] = attrs.field(converter=tuple)
    regions: Mapping[str, int]
    lower_bound: int
    naive: int
    strategy: str = "ge"
    options: PlanOptions = PlanOptions()
    attributes: ModelAttributes | None = None

    def tensor(self, name: str) -> TensorPlacement:
        return next(t for t in self.tensors if t.name == name)

    @property
    def arena(self) -> int:
        """The feature-map region: what the strategies compete on."""
        return self.regions["feature_map"]

    def to_contract(self) -> dict:
        return {
            "order": list(self.order),
            "tensors": [attrs.asdict(t) for t in self.tensors],
            "blocks": [{**attrs.asdict(b), "tensors": list(b.tensors)} for b in self.blocks],
            "regions": dict(self.regions),
            "lower_bound": self.lower_bound,
            "naive": self.naive,
            "strategy": self.strategy,
            "options": self.options.to_dict(),
            "attributes": None if self.attributes is None else _attributes_dict(self.attributes),
        }

    @classmethod
    def from_contract(cls, d: Mapping) -> "MemoryPlan":
        try:
            tensors = [TensorPlacement(**{k: _req(t, k, ty, f"tensors[{i}]") for k, ty in _TENSOR_KEYS})
                       for i, t in enumerate(_req(d, "tensors", list, "plan"))]
            blocks = [BlockPlacement(**{k: _req(b, k, ty, f"blocks[{i}]") for k, ty in _BLOCK_KEYS},
                                     parent=b.get("parent")) for i, b in enumerate(_req(d, "blocks", list, "plan"))]
            regions = _req(d, "regions", dict, "plan")
            options = PlanOptions.from_dict(d["options"]) if d.get("options") else PlanOptions()
            attributes = _attributes_from(d["attributes"]) if d.get("attributes") else None
            return cls(_req(d, "order", list, "plan"), tensors, blocks, dict(regions),
                       _req(d, "lower_bound", int, "plan"), _req(d, "naive", int, "plan"),
                       d.get("strategy", "ge"), options, attributes)
        except (TypeError, KeyError) as e:
            raise ContractError(f"plan JSON does not follow the contract: {type(e).__name__}: {e}") from e


_TENSOR_KEYS = (("name", str), ("region", str), ("offset", int), ("size", int), ("aligned_size", int),
                ("first", int), ("last", int), ("block", int), ("zero_copy", bool), ("alias_of", (str, type(None))))
_BLOCK_KEYS = (("id", int), ("region", str), ("offset", int), ("size", int), ("zero_copy", bool), ("tensors", list))


def _attributes_dict(a: ModelAttributes) -> dict:
    io = lambda x: {**attrs.asdict(x), "relative_offsets": list(x.relative_offsets)}  # noqa: E731
    return {"memory_size": a.memory_size, "zero_copy_memory_size": a.zero_copy_memory_size,
            "inputs": [io(x) for x in a.inputs], "outputs": [io(x) for x in a.outputs]}


def _attributes_from(d: Mapping) -> ModelAttributes:
    return ModelAttributes(d["memory_size"], d["zero_copy_memory_size"],
                           [IoAttribute(**x) for x in d["inputs"]], [IoAttribute(**x) for x in d["outputs"]])
