"""Reading a plan (the JSON contract of docs/plan-format.md) into the address model both checkers use.

The address model. Memory is a set of *allocations*, each with a base address
the plan does not know:

- one per model region (``feature_map``, ``weight``, ``fixed``): its base is
  aligned to ``block_align`` (GE lays blocks out at ``MEM_ALIGN_SIZE = 512``,
  GE: mem_assigner.h, block_mem_assigner.cc `ResizeMemoryBlocks`) and it spans the region's size;
- one per zero-copy block: at run time the block is bound to a user buffer
  (GE: graph_mem_assigner.cc `AssignZeroCopyMemory`, zero_copy_offset.cc
  `ZeroCopyOffset::InitInputDataInfo`), whose base is aligned to ``user_align`` and whose
  size is the buffer's declared size (by default the block's size).

A tensor's address is its allocation's base plus its offset in the allocation:
its region offset for a model region, its offset relative to its block for a
zero-copy block (``_zero_copy_relative_offset``, GE: set_input_output_offset_pass.cc
`SetInputOutputOffsetPass::Run`). It occupies
``extent`` bytes: ``max(size, aligned_size)`` for a tensor that owns memory in
a model region (what the planner reserved, never less than what the tensor
needs), ``size`` in a user buffer (the user only provides the tensor's bytes)
and for an alias (it owns no block; a no-padding concat piece sits at a raw,
unaligned offset inside its root). A tensor that owns memory must start at a
multiple of ``tensor_align`` (GE sizes tensors in 32-byte units,
op_tensor_utils.cc `OpTensorUtils::CalibrateTensorSize`; the plan's ``alignment.tensor`` when it has one); an
alias inherits its
placement from its root and has no alignment claim of its own.

Dynamic-batch branches never run together (GE: dynamic_batch_mem_assigner.cc
``ResizeDynamicBatchBlocks``): when the plan has
``batch_labels`` (tensor -> label, as the spec's PlanObservation does), tensors
of two different non-empty labels are exempt from the overlap claim.

Only parsing and naming happen here; the claims are checked by
:mod:`zcspec.checks.proofs.sweep` (directly) and :mod:`zcspec.checks.proofs.z3_layout`
(symbolically). Neither reads the plan's blocks to decide non-overlap: blocks
only say which user buffer a zero-copy tensor is bound to.
"""
from __future__ import annotations

from typing import Any, Mapping

import attrs

from zcspec.checks.errors import PlanFormatError

MODEL_REGIONS = ("feature_map", "weight", "fixed")
ZERO_COPY = "zero_copy"
# Upper end of the address space: every allocation must fit below it.
ADDRESS_SPACE = 1 << 64


@attrs.frozen
class Allocation:
    """One piece of memory with a symbolic base: a model region or a user buffer."""

    key: str          # "feature_map", ..., or "user:<block id>"
    size: int         # bytes; tensors must stay inside [base, base + size)
    base_align: int   # the base is a multiple of this (an assumption, not a claim)


@attrs.frozen
class Placement:
    """One tensor of the plan, placed in one allocation."""

    name: str
    alloc: str        # Allocation.key
    rel: int          # offset of the tensor within its allocation
    extent: int       # bytes occupied from rel
    align: int        # its address must be a multiple of this (a claim)
    first: int        # inclusive lifetime, in steps of the plan's order
    last: int
    root: str         # end of its alias_of chain (itself when not an alias)
    alias_of: str | None
    batch: str = ""   # dynamic-batch label of its root ("" = runs in every batch)


def exempt(a: Placement, b: Placement) -> bool:
    """True when ``a`` and ``b`` may share bytes: one alias root, or two different batch branches."""
    return a.root == b.root or (a.batch != b.batch and bool(a.batch) and bool(b.batch))


@attrs.frozen(eq=False)
class Layout:
    tensors: tuple[Placement, ...]
    allocations: tuple[Allocation, ...]

    def by_name(self) -> dict[str, Placement]:
        return {t.name: t for t in self.tensors}


def _int(entry: Mapping, key: str, name: str, *, minimum: int | None = 0) -> int:
    value = entry.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise PlanFormatError(f"tensor {name!r}: field {key!r}={value!r} must be an integer", tensor=name)
    if minimum is not None and value < minimum:
        raise PlanFormatError(f"tensor {name!r}: field {key!r}={value!r} must be >= {minimum}", tensor=name)
    return value


def _positive(name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise PlanFormatError(f"{name}={value!r} must be a positive integer")
    return value


def _roots(entries: list[Mapping]) -> dict[str, str]:
    """name -> end of its alias_of chain; PlanFormatError on an unknown target or a cycle."""
    target = {e["name"]: e.get("alias_of") for e in entries}
    roots: dict[str, str] = {}
    for name in target:
        seen = [name]
        cur = name
        while target[cur] is not None and cur not in roots:
            nxt = target[cur]
            if nxt not in target:
                raise PlanFormatError(f"tensor {cur!r}: alias_of={nxt!r} names no tensor of the plan", tensor=cur)
            if nxt in seen:
                raise PlanFormatError(f"tensor {cur!r}: alias_of chain has a cycle through {seen!r}", tensor=cur)
            seen.append(nxt)
            cur = nxt
        root = roots.get(cur, cur)
        for n in seen:
            roots[n] = root
    return roots


def _zero_copy_blocks(plan: Mapping) -> dict[Any, Mapping]:
    blocks = plan.get("blocks") or []
    if not isinstance(blocks, list):
        raise PlanFormatError(f"plan field 'blocks' must be a list, got {type(blocks).__name__}")
    found = {}
    for b in blocks:
        if not isinstance(b, Mapping) or "id" not in b:
            raise PlanFormatError(f"plan block {b!r} has no 'id'")
        if b.get("region") == ZERO_COPY:
            for key in ("offset", "size"):
                if not isinstance(b.get(key), int) or b[key] < 0:
                    raise PlanFormatError(f"zero-copy block {b['id']!r}: field {key!r}={b.get(key)!r} must be an integer >= 0",
                                          block=b["id"])
            found[b["id"]] = b
    return {bid: _top_block(found, b) for bid, b in found.items()}


def _top_block(found: Mapping, block: Mapping) -> Mapping:
    """The top-level block a zero-copy block lies in: a level-2 child placed inside a
    zero-copy parent (GE: block_mem_assigner.cc `AddZeroCopyLifeReuseBlock`) lives in the parent's user buffer."""
    seen = [block["id"]]
    while block.get("parent") is not None:
        parent = found.get(block["parent"])
        if parent is None or parent["id"] in seen:
            raise PlanFormatError(f"zero-copy block {seen[0]!r}: parent chain {seen + [block['parent']]!r} leaves "
                                  "the zero-copy blocks or loops", block=seen[0])
        seen.append(parent["id"])
        block = parent
    return block


def _declared(user_sizes: Mapping, block: Mapping) -> int:
    """The declared size of the user buffer bound to zero-copy ``block``."""
    size = user_sizes.get(block["id"], block["size"])
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise PlanFormatError(f"user buffer of block {block['id']!r}: size={size!r} must be an integer >= 0",
                              block=block["id"])
    return size


def _tensor_entries(plan: Mapping) -> list[Mapping]:
    if not isinstance(plan, Mapping) or not isinstance(plan.get("tensors"), list):
        raise PlanFormatError("plan must be a JSON object with a 'tensors' list")
    names = set()
    for e in plan["tensors"]:
        name = e.get("name") if isinstance(e, Mapping) else None
        if not isinstance(name, str):
            raise PlanFormatError(f"plan tensor entry {e!r} has no string 'name'")
        if name in names:
            raise PlanFormatError(f"duplicate tensor name {name!r} in plan", tensor=name)
        names.add(name)
    return plan["tensors"]


@attrs.frozen
class _Context:
    """What placing one tensor needs besides its own entry."""

    block_align: int
    user_align: int
    tensor_align: int
    zc_align: int
    regions: Mapping
    zc_blocks: Mapping
    user_sizes: Mapping


def _allocation(e: Mapping, offset: int, size: int, aligned: int, ctx: _Context) -> tuple[Allocation, int, int, int]:
    """(allocation, offset in it, extent, required alignment) of tensor entry ``e``."""
    name, region = e["name"], e.get("region")
    if region in MODEL_REGIONS:
        if not isinstance(ctx.regions.get(region), int):
            raise PlanFormatError(f"tensor {name!r} is in region {region!r}, which 'regions' does not size", tensor=name)
        if e.get("alias_of") is not None:
            return Allocation(region, ctx.regions[region], ctx.block_align), offset, size, 1
        return Allocation(region, ctx.regions[region], ctx.block_align), offset, max(size, aligned), ctx.tensor_align
    if region == ZERO_COPY:
        block = ctx.zc_blocks.get(e.get("block"))
        if block is None:
            raise PlanFormatError(f"zero-copy tensor {name!r}: block={e.get('block')!r} is not a zero-copy block "
                                  "of the plan, so no user buffer is bound to it", tensor=name, block=e.get("block"))
        alloc = Allocation(f"user:{block['id']}", _declared(ctx.user_sizes, block), ctx.user_align)
        return alloc, offset - block["offset"], size, 1 if e.get("alias_of") is not None else ctx.zc_align
    raise PlanFormatError(f"tensor {name!r}: unknown region {region!r} (expected one of "
                          f"{MODEL_REGIONS + (ZERO_COPY,)})", tensor=name)


def read_layout(plan: Mapping, *, block_align: int = 512, user_align: int = 64, tensor_align: int | None = None,
                zero_copy_align: int | None = None, user_sizes: Mapping | None = None) -> Layout:
    """Parse ``plan`` (docs/plan-format.md) into a :class:`Layout`.

    ``block_align``: alignment of the model regions' bases (an assumption).
    ``user_align``: alignment the runtime guarantees for user buffers (an assumption).
    ``tensor_align``: required alignment of every tensor owning memory in a model
    region (default: the plan's ``alignment.tensor``, else 32). ``zero_copy_align``:
    the same for a zero-copy tensor (default ``tensor_align``). ``user_sizes``:
    declared size of the user buffer of each zero-copy block id (default: the
    block's ``size``). Raises PlanFormatError naming the tensor or block on malformed input.
    """
    entries = _tensor_entries(plan)
    regions = plan.get("regions") or {}
    if not isinstance(regions, Mapping):
        raise PlanFormatError(f"plan field 'regions' must be an object of region sizes, got {regions!r}")
    if tensor_align is None:
        tensor_align = (plan.get("alignment") or {}).get("tensor", 32)
    tensor_align = _positive("tensor_align", tensor_align)
    ctx = _Context(_positive("block_align", block_align), _positive("user_align", user_align), tensor_align,
                   tensor_align if zero_copy_align is None else _positive("zero_copy_align", zero_copy_align),
                   regions, _zero_copy_blocks(plan), dict(user_sizes or {}))
    labels = plan.get("batch_labels") or {}
    roots = _roots(entries)
    allocs: dict[str, Allocation] = {}
    placed = []
    for e in entries:
        name = e["name"]
        offset = _int(e, "offset", name, minimum=None)
        size, aligned, first, last = (_int(e, k, name) for k in ("size", "aligned_size", "first", "last"))
        if first > last:
            raise PlanFormatError(f"tensor {name!r}: lifetime first={first} > last={last}", tensor=name)
        alloc, rel, extent, align = _allocation(e, offset, size, aligned, ctx)
        allocs.setdefault(alloc.key, alloc)
        batch = labels.get(roots[name]) or labels.get(name) or ""
        placed.append(Placement(name, alloc.key, rel, extent, align, first, last, roots[name], e.get("alias_of"),
                                str(batch)))
    unused = set(ctx.user_sizes) - {b["id"] for b in ctx.zc_blocks.values()}
    if unused:
        raise PlanFormatError(f"user_sizes names blocks that are not top-level zero-copy blocks: {sorted(map(repr, unused))}")
    total = sum(a.size + a.base_align for a in allocs.values())
    if total >= ADDRESS_SPACE:
        raise PlanFormatError(f"allocations total {total} bytes, more than a 64-bit address space")
    return Layout(tuple(placed), tuple(allocs.values()))
