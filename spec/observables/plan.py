"""The memory plan as the spec sees it: the plan contract (docs/plan-format.md), plus facts the block invariants need.

A :class:`PlanObservation` parses exactly the JSON that ``zcspec plan --json``
prints (keys ``order``, ``tensors``, ``blocks``, ``regions``, ``lower_bound``,
``naive``; see docs/plan-format.md). The planner may add the optional keys
below; an exporter that omits them simply leaves the invariants that need
them unexercised (their precondition is false), never falsely satisfied.

Optional keys (documented for exporters in docs/spec-guide.md):

- ``attributes``: model attributes GE writes (GE: model_builder.cc
  `ModelBuilder::BuildModelDefForMem`, block_mem_assigner.cc `MarkZeroCopyBlockAttr`):
  ``memory_size``, ``zero_copy_memory_size`` and ``is_zero_copy_block``
  (graph-input tensor name -> the ``_is_zero_copy_block`` flag).
- ``graph_inputs`` / ``graph_outputs``: tensor names of the root Data outputs
  and the root NetOutput inputs.
- ``consumers``: tensor name -> the steps (indices into ``order``) that read it.
- ``atomic``: tensors written by atomic (memset-cleaned) outputs (GE: graph_mem_assigner.cc
  `AssignAtomicOutputMemory`).
- ``continuous_groups``: ``{"consumer", "tensors", "padding"}``: the ordered
  inputs of a continuous-input node (GE: block_mem_assigner.cc `AssignContinuousBlocks`,
  graph_mem_assigner.cc `AssignContinuousInputMemory`).
- ``continuous_outputs``: ``{"node", "tensors"}``: the ordered outputs of a node
  GE gives continuous outputs (``continuous_output`` with two or more outputs,
  fused HCCL; GE: block_mem_assigner.cc `ApplyContinuousMemory`).
- ``workspaces``: workspace tensor name -> the node (in ``order``) that owns it.
- ``fixed``: tensors with fixed addresses (constants, variables).
- ``batch_labels``: tensor name -> dynamic-batch branch label; tensors of
  different branches never run in the same execution, so they may share
  memory (GE lets batches overlap on purpose: dynamic_batch_mem_assigner.cc
  `DynamicBatchMemAssigner::ResizeDynamicBatchBlocks`).
- ``alignment``: the granularities the layout claims (GE: 512 per block in
  both feature map and zero-copy region, 32 per tensor size; GE: mem_assigner.h `MEM_ALIGN_SIZE`,
  op_tensor_utils.cc `OpTensorUtils::CalibrateTensorSize`).
  A plan that names its ``soc`` is judged by the spec's capability table
  (spec/capabilities.py) instead: what a plan claims about itself is then ignored.
- ``soc``: the SoC the plan was made for (a name of spec/capabilities.py).
- ``planner``: the compiler that made the plan (``ge``, ``xla``, ``executorch``, ``litert``, ``iree``,
  ``tvm``, ...; the plan file's top-level ``planner`` key). A planner of spec/capabilities.py's
  ``PLANNERS`` is held to the offset alignment it documents, whatever its arenas declare.
- ``netoutput_inputs``: the root NetOutput's inputs in slot order, a tensor
  listed once per slot it feeds (GE counts the slots: block_mem_assigner.cc `GetOutputFlowToNetoutputNum`).
- ``node_types``: node name (of ``order``) -> op type.
- ``producers``: tensor name -> the node (in ``order``) that writes it.
- a tensor's ``nbytes``: its raw dense bytes (shape times dtype), from which
  GE derives its size (GE: op_tensor_utils.cc `OpTensorUtils::CalibrateTensorSize`).
- a tensor's ``set_size``: the size its graph sets for it, when it sets one (GE's
  ``TensorUtils::SetSize``, which the planner takes as is: mem_reuse_strategy.cc
  `MemReuseUtils::GetTensorSize`); it then replaces the size derived from ``nbytes``.

The general form (any planner, docs/foreign-planners.md): a plan that declares
``arenas`` names its own memory areas instead of GE's four regions.

- ``arenas``: arena name -> ``{"kind", "alignment"}``; ``kind`` is one of
  :data:`ARENA_KINDS` and ``alignment`` the multiple every tensor that owns its
  memory starts at (1: none). ``regions`` then gives each arena's size, and a
  tensor's ``region`` names its arena. GE's regions are the undeclared default
  (:data:`GE_ARENAS`); claims about GE's own rules (granularities, padded sizes,
  the zero-copy region) apply only to such plans (:attr:`PlanObservation.ge_shaped`).
- ``writes``: tensor name -> the steps that write it (its producer, and an
  in-place update's step).
- ``exclusive_groups``: ``{"name", "branches": {label: [tensor, ...]}}``: the
  branches of one choice (a ``cond``'s true and false subgraphs); tensors of
  different branches of one group never run in the same execution. Tensors of
  two different groups (two sequential ``cond`` calls) may.
- ``in_place``: ``{"step", "tensor", "writes": [{"lo", "hi"}], "reads": [{"lo", "hi", "to"}]}``: a
  step that computes ``tensor`` in place over its root's bytes, the byte ranges it writes and the
  ranges of the root it reads, each with where its bytes go (``to`` = ``lo``: element by element).
- ``streams``: node (of ``order``) -> the stream it runs its task on; nodes without a task are left
  out. With two or more streams LAYOUT-STREAM-ORDER judges sharing by the order the streams guarantee.
- ``stream_labels``: node (of ``order``) without a task -> the stream it is labelled with (the NetOutput,
  which ends the model, is left out). One where
  an edge (data or control) from a node of another stream lands takes a place on that stream: GE
  puts the edge's receive event in front of it, so the next task of the stream waits
  (``StreamAllocator::InsertSyncEvents``, ``GenerateSyncEventNodes``). Read by LAYOUT-STREAM-ORDER.
- ``control``: node -> the nodes it waits for beyond its data inputs (control edges).
- ``refs``: tensor -> the input tensor of the same node it is declared to be computed over, a ref
  output (GE's ``IsRefFromInput``; the graph's ``_reuse_input``): as the graph says it, not as the
  planner decided it.
- ``inplace``: tensor -> the inputs of its node it may be computed over, in the node's order of
  preference (GE's optional ``_output_inplace_ability`` pairs; a zcspec graph's ``_inplace_ability``),
  as the graph declares them.
- ``arena_allocations``: arena -> the steps that allocate it on the execution path the plan
  describes (TVM Relax's ``R.memory.alloc_storage``); an arena not listed exists before the first
  step, and one listed with no step is never allocated on that path.
- ``lower_bound``, ``naive`` and ``blocks`` may be left out by planners that
  have no such numbers; ``blocks`` then defaults to none.
"""
from __future__ import annotations

import functools
import typing
from typing import Literal

import attrs

from zcspec.spec.errors import ObservationConsistencyError, ObservationFormatError
from zcspec.spec.observables.codec import from_data
from zcspec.spec.observables.plan_values import check_steps, check_values

Region = str
BlockId = int | str

# What an arena holds; the claims that depend on it (LAYOUT-LOWER-BOUND, LAYOUT-ARENA-ALIGN) say how.
ArenaKind = Literal["activations", "user_io", "constants", "state", "scratch"]
ARENA_KINDS = typing.get_args(ArenaKind)

GE_BLOCK_ALIGN = 512   # MEM_ALIGN_SIZE (GE: mem_assigner.h)
GE_TENSOR_ALIGN = 32   # tensor size granularity (GE: op_tensor_utils.cc `CalibrateTensorSize`)


@attrs.frozen
class PlacedTensor:
    """Where one planned tensor lives and during which steps (``first``..``last`` inclusive) it must stay intact."""

    name: str
    region: Region
    offset: int
    size: int
    aligned_size: int
    first: int
    last: int
    block: BlockId | None
    zero_copy: bool
    alias_of: str | None = None
    nbytes: int | None = None
    set_size: int | None = None

    @property
    def end(self) -> int:
        """One past the last byte the tensor needs."""
        return self.offset + self.size


@attrs.frozen
class Block:
    """A planner block: a range of one region shared by the tensors listed in ``tensors``."""

    id: BlockId
    region: Region
    offset: int
    size: int
    zero_copy: bool
    tensors: tuple[str, ...]

    @property
    def end(self) -> int:
        return self.offset + self.size


@attrs.frozen
class PlanAttributes:
    """Model attributes the compiler records (``memory_size`` includes the zero-copy region; GE:
    model_builder.cc `BuildModelDefForMem`)."""

    memory_size: int
    zero_copy_memory_size: int
    is_zero_copy_block: dict[str, bool] = attrs.field(factory=dict)
    basic_offsets: dict[str, int] = attrs.field(factory=dict)


@attrs.frozen
class ContinuousOutputs:
    """The outputs of ``node`` that sit back to back in output order, each advancing the next by its
    size rounded to the block granularity (GE's ``ApplyContinuousMemory``)."""

    node: str
    tensors: tuple[str, ...]


@attrs.frozen
class ContinuousGroup:
    """The inputs of ``consumer`` that must be contiguous in input order.

    ``padding`` True: each input advances the next by its size rounded to the
    block granularity (GE's padding-continuous). False (NoPadding): by its
    piece, the raw size with the dims before the concat axis set to 1
    (GE: graph_mem_assigner.cc `AssignContinuousInputMemory`); ``pieces`` gives those bytes per input when known.
    """

    consumer: str
    tensors: tuple[str, ...]
    padding: bool = True
    pieces: tuple[int, ...] = ()


@attrs.frozen
class Alignment:
    """The layout granularities: ``block`` per region (bytes), ``tensor`` for tensor sizes.

    GE: 512 for every block, zero-copy ones included, and 32 for tensor sizes
    (GE: mem_assigner.h `MEM_ALIGN_SIZE`, block_mem_assigner.cc `MemoryBlock::Resize`,
    op_tensor_utils.cc `OpTensorUtils::CalibrateTensorSize`). Set ``block["zero_copy"] = 32`` to model the
    common misreading and check such a layout against its own claim.
    """

    block: dict[str, int] = attrs.field(factory=lambda: {"feature_map": GE_BLOCK_ALIGN, "zero_copy": GE_BLOCK_ALIGN})
    tensor: int = GE_TENSOR_ALIGN


@attrs.frozen
class Arena:
    """One memory area of a plan: what it holds and the alignment of the tensors that own memory in it."""

    kind: ArenaKind
    alignment: int = 1

    def __attrs_post_init__(self) -> None:
        if self.alignment < 1:
            raise ValueError(f"alignment={self.alignment} must be at least 1")


# GE's regions as arenas (GE: graph_mem_assigner.cc `AssignZeroCopyMemory`): the feature map is reused memory,
# the zero-copy region the
# caller's buffers, weights are constants and fixed addresses are variables. Their granularities are
# GE's own and are judged by LAYOUT-ALIGN, not by an arena alignment.
GE_ARENAS = {"feature_map": Arena("activations"), "zero_copy": Arena("user_io"),
             "weight": Arena("constants"), "fixed": Arena("state")}


@attrs.frozen
class ExclusiveGroup:
    """The branches of one choice: tensors of two different branches never run in one execution."""

    name: str
    branches: dict[str, tuple[str, ...]]


@attrs.frozen
class ByteRange:
    lo: int
    hi: int


@attrs.frozen
class ByteCopy:
    """Bytes [lo, hi) read to produce the bytes [to, to + hi - lo) (``to == lo``: element by element)."""

    lo: int
    hi: int
    to: int


@attrs.frozen
class InPlaceStep:
    """Step ``step`` computes ``tensor`` in its root's bytes: it writes ``writes`` and reads ``reads``
    of those same bytes (offsets in the region)."""

    step: int
    tensor: str
    writes: tuple[ByteRange, ...]
    reads: tuple[ByteCopy, ...] = ()


@attrs.frozen
class PlanObservation:
    """A memory plan: the plan contract (docs/plan-format.md) plus the optional facts listed in the module doc."""

    order: tuple[str, ...]
    tensors: tuple[PlacedTensor, ...]
    regions: dict[str, int]
    blocks: tuple[Block, ...] = ()
    lower_bound: int | None = None
    naive: int | None = None
    attributes: PlanAttributes | None = None
    graph_inputs: tuple[str, ...] = ()
    graph_outputs: tuple[str, ...] = ()
    consumers: dict[str, tuple[int, ...]] = attrs.field(factory=dict)
    atomic: tuple[str, ...] = ()
    continuous_groups: tuple[ContinuousGroup, ...] = ()
    continuous_outputs: tuple[ContinuousOutputs, ...] = ()
    workspaces: dict[str, str] = attrs.field(factory=dict)
    fixed: tuple[str, ...] = ()
    batch_labels: dict[str, str] = attrs.field(factory=dict)
    alignment: Alignment = attrs.field(factory=Alignment)
    soc: str | None = None
    netoutput_inputs: tuple[str, ...] = ()
    node_types: dict[str, str] = attrs.field(factory=dict)
    producers: dict[str, str] = attrs.field(factory=dict)
    arenas: dict[str, Arena] = attrs.field(factory=dict)
    writes: dict[str, tuple[int, ...]] = attrs.field(factory=dict)
    exclusive_groups: tuple[ExclusiveGroup, ...] = ()
    in_place: tuple[InPlaceStep, ...] = ()
    streams: dict[str, int] = attrs.field(factory=dict)
    stream_labels: dict[str, int] = attrs.field(factory=dict)
    control: dict[str, tuple[str, ...]] = attrs.field(factory=dict)
    refs: dict[str, str] = attrs.field(factory=dict)
    inplace: dict[str, tuple[str, ...]] = attrs.field(factory=dict)
    arena_allocations: dict[str, tuple[int, ...]] = attrs.field(factory=dict)
    planner: str | None = None

    def __attrs_post_init__(self) -> None:
        _check_references(self)

    @property
    def ge_shaped(self) -> bool:
        """Whether this is a plan in GE's terms (no ``arenas`` declared): GE's rules apply to it."""
        return not self.arenas

    def arena(self, region: str) -> Arena | None:
        """The arena a region name stands for: declared, or GE's region of that name."""
        return self.arenas.get(region) if self.arenas else GE_ARENAS.get(region)

    @functools.cached_property
    def _branches(self) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for g in self.exclusive_groups:
            for label, names in g.branches.items():
                for n in names:
                    out.setdefault(n, {})[g.name] = label
        return out

    @functools.cached_property
    def tensor(self) -> dict[str, PlacedTensor]:
        """Tensors by name."""
        return {t.name: t for t in self.tensors}

    @functools.cached_property
    def block(self) -> dict[BlockId, Block]:
        """Blocks by id."""
        return {b.id: b for b in self.blocks}

    def exclusive(self, a: str, b: str) -> bool:
        """Whether tensors ``a`` and ``b`` never run in one execution: different dynamic-batch branches, or
        different branches of one exclusive group."""
        la, lb = self.batch_labels.get(a, ""), self.batch_labels.get(b, "")
        if la and lb and la != lb:
            return True
        ga, gb = self._branches.get(a), self._branches.get(b)
        return bool(ga and gb and any(gb.get(g, label) != label for g, label in ga.items()))

    def branched(self, name: str) -> bool:
        """Whether tensor ``name`` belongs to a dynamic-batch branch or a branch of an exclusive group: some
        tensor may then be exclusive with it (:meth:`exclusive`)."""
        return bool(self.batch_labels.get(name)) or name in self._branches

    @functools.cached_property
    def families(self) -> tuple["Family", ...]:
        """Tensors grouped by the root of their alias chain (computed once per plan)."""
        return _families(self)

    def root(self, name: str) -> str:
        """The tensor that owns ``name``'s memory: follow ``alias_of`` to its end."""
        return alias_root(self.tensor, name)


def alias_root(by_name: typing.Mapping[str, PlacedTensor], name: str) -> str:
    """The tensor that owns ``name``'s memory among the tensors ``by_name`` (anything with an ``alias_of``):
    follow ``alias_of`` to its end (ObservationConsistencyError on a cycle). The one walk of an alias chain for observations, also
    for readers that build tensors before they build the plan."""
    seen = [name]
    while by_name[seen[-1]].alias_of is not None:
        seen.append(by_name[seen[-1]].alias_of)
        if seen[-1] in seen[:-1]:
            raise ObservationConsistencyError(f"alias chain {' -> '.join(seen)} is a cycle", culprit=name)
    return seen[-1]


@attrs.frozen
class Family:
    """A memory root and every tensor aliasing it: one piece of memory in time and space.

    Its bytes are the hull of its members' byte ranges (members of size 0 only
    count when all are empty) and its life the hull of their lifetimes.
    """

    root: str
    region: str
    offset: int
    end: int
    first: int
    last: int
    members: tuple[str, ...]


def _families(plan: PlanObservation) -> tuple[Family, ...]:
    groups: dict[str, list[PlacedTensor]] = {}
    for t in plan.tensors:
        groups.setdefault(t.name if t.alias_of is None else plan.root(t.name), []).append(t)
    out = []
    for root, ts in groups.items():
        if len(ts) == 1:  # the common case, kept cheap for 100k-tensor plans
            t = ts[0]
            out.append(Family(root, t.region, t.offset, t.end, t.first, t.last, (t.name,)))
            continue
        sized = [t for t in ts if t.size > 0] or ts
        out.append(Family(root, plan.tensor[root].region, min(t.offset for t in sized), max(t.end for t in sized),
                          min(t.first for t in ts), max(t.last for t in ts), tuple(t.name for t in ts)))
    return tuple(out)


def _unique(kind: str, names) -> set:
    seen: set = set()
    for n in names:
        if n in seen:
            raise ObservationConsistencyError(f"duplicate {kind} {n!r} in the plan", culprit=str(n))
        seen.add(n)
    return seen


def _named_tensors(plan: PlanObservation):
    """(JSON key, tensor name) for every tensor name the plan's facts mention."""
    for key in ("graph_inputs", "graph_outputs", "atomic", "fixed", "netoutput_inputs"):
        yield from ((key, n) for n in getattr(plan, key))
    for key in ("workspaces", "consumers", "batch_labels", "producers", "writes"):
        yield from ((f"{key}.{n}", n) for n in getattr(plan, key))
    for i, b in enumerate(plan.blocks):
        yield from ((f"blocks[{i}].tensors", n) for n in b.tensors)
    for i, g in enumerate(plan.continuous_groups):
        yield from ((f"continuous_groups[{i}].tensors", n) for n in g.tensors)
    for i, g in enumerate(plan.continuous_outputs):
        yield from ((f"continuous_outputs[{i}].tensors", n) for n in g.tensors)
    for i, g in enumerate(plan.exclusive_groups):
        yield from ((f"exclusive_groups[{i}].branches.{label}", n) for label, ns in g.branches.items() for n in ns)
    yield from ((f"in_place[{i}].tensor", st.tensor) for i, st in enumerate(plan.in_place))


def _check_references(plan: PlanObservation) -> None:
    """Names the plan refers to must exist; a dangling name is malformed input, not a layout fact."""
    names = _unique("tensor", (t.name for t in plan.tensors))
    _unique("block id", (b.id for b in plan.blocks))
    for t in plan.tensors:
        if t.alias_of is not None and t.alias_of not in names:
            raise ObservationConsistencyError(
                f"tensor {t.name!r} has alias_of={t.alias_of!r}, which is not a planned tensor", culprit=t.name)
    for key, n in _named_tensors(plan):
        if n not in names:
            raise ObservationConsistencyError(f"names tensor {n!r}, which is not planned (not in tensors)",
                                              culprit=n, path=key)
    _unique("exclusive group", (g.name for g in plan.exclusive_groups))
    known = plan.arenas or GE_ARENAS
    what = "declared arena (arenas)" if plan.arenas else "GE region (or declare arenas)"
    for r in plan.regions:
        if r not in known:
            raise ObservationConsistencyError(f"region {r!r} is not a {what}; known: {sorted(known)}", culprit=r)
    placed = [(f"tensor {t.name!r}", t.name, t.region) for t in plan.tensors]
    placed += [(f"block {b.id!r}", str(b.id), b.region) for b in plan.blocks]
    for label, culprit, region in placed:
        if region not in known:
            raise ObservationConsistencyError(f"{label} is in region {region!r}, which is not a {what}; "
                                              f"known: {sorted(known)}", culprit=culprit)
    for region in plan.arena_allocations:
        if region not in known:
            raise ObservationConsistencyError(f"arena_allocations names {region!r}, which is not a {what}; "
                                              f"known: {sorted(known)}", culprit=region,
                                              path=f"arena_allocations.{region}")
    check_steps(plan)
    check_values(plan)
    steps = set(plan.order)
    for ws, owner in plan.workspaces.items():
        if owner not in steps:
            raise ObservationConsistencyError(f"workspace {ws!r} names owner node {owner!r}, which is not in order", culprit=ws)
    for t, node in plan.producers.items():
        if node not in steps:
            raise ObservationConsistencyError(f"tensor {t!r} names producer {node!r}, which is not in order", culprit=t)
    for node in plan.streams:
        if node not in steps:
            raise ObservationConsistencyError(f"streams names node {node!r}, which is not in order", culprit=node)
    for node in plan.stream_labels:
        if node not in steps:
            raise ObservationConsistencyError(f"stream_labels names node {node!r}, which is not in order",
                                              culprit=node)
        if node in plan.streams:
            raise ObservationConsistencyError(f"stream_labels names node {node!r}, which streams lists as running "
                                              "a task: a node is in one of the two", culprit=node)
    declared = [("refs", out, (into,)) for out, into in plan.refs.items()]
    declared += [("inplace", out, into) for out, into in plan.inplace.items()]
    for key, out, into in declared:
        for t in (out, *into):
            if t not in plan.tensor:
                raise ObservationConsistencyError(f"{key} names tensor {t!r}, which is not a planned tensor",
                                                  culprit=t, path=f"{key}.{out}")
    for node, waits in plan.control.items():
        for w in (node, *waits):
            if w not in steps:
                raise ObservationConsistencyError(f"control names node {w!r}, which is not in order", culprit=w)
