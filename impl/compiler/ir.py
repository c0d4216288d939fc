"""The graph IR shared by every compiler stage.

Frozen ``attrs`` value objects: a :class:`Graph` holds :class:`Node` s in
insertion order, a :class:`TensorDesc` for every tensor, and :class:`Weight`
data for constants. Graph inputs are ``Data`` nodes (attribute ``index``),
graph outputs are the inputs of the single ``NetOutput`` node, as in GE.
Edit with ``attrs.evolve``; nothing here mutates.
"""
from __future__ import annotations

import functools
from typing import Any, Iterable, Mapping

import attrs
import numpy as np
from attrs import field as _field  # the class Node has a field named attrs

from zcspec.impl.compiler.errors import AttributeError_
from zcspec.impl.platform import dtypes, storage

AttrValue = Any  # bool | int | float | str | tuple of those
_SCALARS = (bool, int, float, str)


def _freeze_value(node: str, key: str, value: Any) -> AttrValue:
    if isinstance(value, _SCALARS):
        return value
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return _freeze_value(node, key, value.tolist())
    if isinstance(value, (list, tuple)):
        if not all(isinstance(v, _SCALARS) for v in value):
            raise AttributeError_(node, key, f"list items must be bool, int, float or str, got {value!r}")
        return tuple(value)
    raise AttributeError_(node, key, f"unsupported value type {type(value).__name__} ({value!r})")


def freeze_attrs(node: str, values: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> tuple:
    """Attributes as a sorted tuple of (name, value) pairs with lists turned into tuples."""
    items = values.items() if isinstance(values, Mapping) else values
    return tuple(sorted((str(k), _freeze_value(node, str(k), v)) for k, v in items))


@attrs.frozen
class TensorDesc:
    """A tensor's name, static shape, dtype name (see ``dtypes``) and layout format, and optionally
    its set size.

    ``size`` is GE's ``TensorUtils::SetSize``: the bytes the tensor asks the planner for, apart from
    the bytes its shape holds. GE's block planner sizes a block by the largest set size in it
    (block_mem_assigner.cc ``ApplyOutMemory``), while a NoPadding continuous input is laid out by its
    shape's bytes (graph_mem_assigner.cc ``GetMemorySize``, ``CalculateTensorRealSizeAndOutSize``); GE's
    memory tests set sizes larger than their shapes (``CreateOpWithWsSize``: 2048 B on a 1x1x16x8
    float, 512 B). None: the size is derived from the shape (``memory.sizes.tensor_size``). It is
    never below the shape's raw bytes (``validate``)."""

    name: str
    shape: tuple[int, ...] = attrs.field(converter=tuple)
    dtype: str = "float32"
    format: str = "ND"
    size: int | None = None

    @property
    def nbytes(self) -> int:
        """Raw dense bytes (GE's "no-align size", mem_reuse_strategy.cc ``GetNoAlignSize``)."""
        return dtypes.nbytes(self.shape, self.dtype, tensor=self.name)

    @property
    def numel(self) -> int:
        return dtypes.element_count(self.shape, tensor=self.name)


@attrs.frozen
class Node:
    """One operation. ``inputs``/``outputs`` are tensor names; ``stream`` is its logical stream.

    ``control_inputs`` names the nodes that must have run before this one although it reads none
    of their outputs (GE's control edges, ``InControlAnchor``): they order the execution, and
    between streams they are synchronised as a data edge is (``StreamAllocator::InsertSyncEvents``
    puts an event on every control edge whose ends sit on two streams)."""

    name: str
    op_type: str
    inputs: tuple[str, ...] = attrs.field(converter=tuple, default=())
    outputs: tuple[str, ...] = attrs.field(converter=tuple, default=())
    attrs: tuple = attrs.field(default=())
    stream: int = 0
    control_inputs: tuple[str, ...] = _field(converter=tuple, default=())

    def __attrs_post_init__(self):
        object.__setattr__(self, "attrs", freeze_attrs(self.name, self.attrs))

    def attr(self, key: str, default: AttrValue = None) -> AttrValue:
        for k, v in self.attrs:
            if k == key:
                return v
        return default

    def with_attrs(self, **changes: AttrValue) -> "Node":
        merged = dict(self.attrs)
        merged.update(changes)
        return attrs.evolve(self, attrs=merged)


@attrs.frozen
class Weight:
    """Constant data for tensor ``name``: its stored bytes (little-endian; sub-byte types packed,
    ``impl.platform.storage``), or one element broadcast ("splat").

    Splat weights keep the ONNX light models (whose weights are ConstantOfShape
    fills) small in memory and in model files; ``array()`` expands them.
    """

    name: str
    data: bytes
    splat: bool = False

    def array(self, desc: TensorDesc):
        if self.splat:
            one = storage.from_storage(self.data, (1,), desc.dtype)
            return np.full(desc.shape, one[0], dtype=one.dtype)
        return storage.from_storage(self.data, desc.shape, desc.dtype)

    @classmethod
    def from_array(cls, name: str, array, dtype: str | None = None) -> "Weight":
        """The weight holding ``array``, whose element type is ``dtype`` (default: the one of its numpy dtype)."""
        arr = np.ascontiguousarray(array)
        dtype = dtype or dtypes.of_numpy(arr.dtype)
        flat = arr.reshape(-1)
        if flat.size > 1 and (flat == flat[0]).all() and not np.isnan(flat[0:1].astype(np.float64)).any():
            return cls(name, storage.to_storage(flat[:1], dtype).tobytes(), splat=True)
        return cls(name, storage.to_storage(arr, dtype).tobytes(), splat=False)


@attrs.frozen
class Graph:
    """A whole model. Construct through ``GraphBuilder`` or ``from_json``; check with ``validate``."""

    name: str
    nodes: tuple[Node, ...] = attrs.field(converter=tuple)
    tensors: tuple[TensorDesc, ...] = attrs.field(converter=tuple)
    weights: tuple[Weight, ...] = attrs.field(converter=tuple, default=())

    @functools.cached_property
    def desc(self) -> Mapping[str, TensorDesc]:
        return {t.name: t for t in self.tensors}

    @functools.cached_property
    def node(self) -> Mapping[str, Node]:
        return {n.name: n for n in self.nodes}

    @functools.cached_property
    def weight(self) -> Mapping[str, Weight]:
        return {w.name: w for w in self.weights}

    @functools.cached_property
    def producer(self) -> Mapping[str, str]:
        """Tensor name -> name of the node that writes it (weights have none)."""
        return {t: n.name for n in self.nodes for t in n.outputs}

    @functools.cached_property
    def consumers(self) -> Mapping[str, tuple[str, ...]]:
        """Tensor name -> names of the nodes that read it, in node order (a node once per tensor)."""
        out: dict[str, list[str]] = {}
        for n in self.nodes:
            for t in dict.fromkeys(n.inputs):
                out.setdefault(t, []).append(n.name)
        return {t: tuple(v) for t, v in out.items()}

    @functools.cached_property
    def predecessors(self) -> Mapping[str, tuple[str, ...]]:
        """Node name -> the nodes it must run after: the producers of its inputs (weights have none),
        then its control inputs, each once."""
        producer = self.producer
        return {n.name: tuple(dict.fromkeys([producer[t] for t in n.inputs if t in producer] + list(n.control_inputs)))
                for n in self.nodes}

    @property
    def data_nodes(self) -> tuple[Node, ...]:
        """Data nodes sorted by their ``index`` attribute (the model input order)."""
        data = [n for n in self.nodes if n.op_type == "Data"]
        return tuple(sorted(data, key=lambda n: n.attr("index", 0)))

    @property
    def netoutput(self) -> Node | None:
        return next((n for n in self.nodes if n.op_type == "NetOutput"), None)

    @property
    def inputs(self) -> tuple[str, ...]:
        return tuple(n.outputs[0] for n in self.data_nodes)

    @property
    def outputs(self) -> tuple[str, ...]:
        out = self.netoutput
        return out.inputs if out is not None else ()

    def weight_bytes(self) -> int:
        return sum(self.desc[w.name].nbytes for w in self.weights)

