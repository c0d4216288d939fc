"""Planning units: what must be placed, with every GE rule that constrains it applied.

A unit is one piece of feature-map or zero-copy memory the offset assigners
place as a whole:

- ``tensor``: a root tensor and its symbol (views, in-place outputs);
- ``group``: the roots feeding one continuous-input node, laid out back to
  back in input order (padding: each 512-aligned, GE's block_mem_assigner.cc
  `AssignContinuousBlocks`; no padding: raw sizes, one block sized for all,
  `CalNodeAsContinuousInputMaxLife`, graph_mem_assigner.cc `AssignContinuousInputMemory`; a NoPadding
  concat whose output feeds another nests its pieces in that one's group, ``ReAssignContinuousMemory``), or the outputs
  of one continuous-output node (fused HCCL), back to back in output order,
  each 512-aligned, never zero copy (2.11: ``ApplyContinuousMemory``), or, where
  continuous outputs feed padding continuous inputs, the chain of both sequences
  in one block, never reused (``ContinuousMemMng``, ``ApplyContinuousMemWithMng``);
- ``workspace``: a node's scratch memory, live for its step only (ReleaseMemorys).

Each unit carries its planning lifetime, already widened where a GE rule says
its memory is never shared: graph I/O symbols that are not zero-copy and
producers in GE's no-reuse sets (InitReuseFlag), ``_no_reuse`` nodes (ApplyMemory),
atomic outputs (whole graph, AssignAtomicOutputMemory), symbols read on another stream than
their producer's (until the first node of the producer's stream known to run
after that reader, GetDiffStreamMaxLifeTime, a node without a task where a stream edge lands counting as one,
stream_order.takes_place; padding continuous groups written or read there to the end), and everything
when reuse is off (AssignMemoryWithReuse). Widened at the start too: a piece written on another
stream than the unit's may run as soon as that stream's events allow, so the
unit begins at the latest step of its own stream known to run before that
writer (CalNodeAsContinuousInputMaxLife, stream_order.py). Weights and variables are not units: they sit at
fixed offsets in their own regions (CheckIsZeroMemNodeType).
"""
from __future__ import annotations

from typing import Mapping

import attrs

from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory import rules
from zcspec.impl.compiler.memory.continuous_groups import (Chain, CleanSet, chains, clean_sets, input_groups,
                                                             output_groups)
from zcspec.impl.compiler.memory.errors import PlanError
from zcspec.impl.compiler.memory.lifetimes import Lifetimes
from zcspec.impl.compiler.memory.sizes import align, raw_bytes, tensor_size
from zcspec.impl.compiler.memory.unit_facts import Facts, common_label


@attrs.frozen
class Unit:
    """One placeable piece of memory. ``roots``: (root tensor, offset inside the unit).

    ``first``/``last``: the planning lifetime (inclusive). ``size``: bytes the unit
    needs (before block rounding). ``zero_copy``: ``"input"``, ``"output"`` or None.
    ``reusable``: GE's ``reuse_mem_``. ``input_size``: raw bytes of a graph-input
    member (zero-copy inputs are sorted by it, AssignZeroCopyMemory). ``seq``: creation order.
    ``owner``: for a no-padding group, the concat's output, which spans the whole
    unit; the pieces are reported as its aliases.

    On a graph with several streams (else both are empty), what orders the unit against units of
    other streams in level 2 (``ge_level2._follows``): ``uses``, (stream, last step) of the tasks that
    write or read its memory, and ``known``, (stream, step) known to have run before every task that
    writes it (stream_order.py). ``reach``: the last step any member tensor's own lifetime reaches
    (its last reader's, with or without a task), before the stream rules widen ``last``. ``remote``: every
    task reading it runs on one other stream, with no node of its own stream known to run after some of
    them (``Facts.read_elsewhere_only``): level 2 gives its block no interval reuse.
    """

    id: str
    kind: str
    roots: tuple[tuple[str, int], ...]
    size: int
    first: int
    last: int
    stream: int
    batch: str
    zero_copy: str | None
    reusable: bool
    atomic: bool = False
    continuous: bool = False
    same_offset: bool = False
    input_size: int = 0
    unconsumed: bool = False
    alloc_step: int = 0
    seq: int = 0
    owner: str | None = None
    uses: tuple[tuple[int, int], ...] = ()
    known: tuple[tuple[int, int], ...] = ()
    reach: int = -1
    remote: bool = False


@attrs.frozen
class Units:
    units: tuple[Unit, ...]
    where: Mapping[str, tuple[str, int]]  # root tensor -> (unit id, offset in unit)
    steps: int


def symbol_size(graph: Graph, lt: Lifetimes, r: str, options) -> int:
    """A symbol's block is as large as its largest member (block_mem_assigner.cc ApplyOutMemory grows
    the block to the largest size), and holds every byte a member touches, counted from the root's start.

    A view piece at an offset (an outer-axis Split/Slice: GE's no-task Split, whose NoPadding continuous
    outputs sit back to back by their no-padding sizes inside the input's block, graph_mem_assigner.cc
    AssignContinuousOutputMemory) adds its raw bytes there, not its own padding: a piece of ``b`` bytes
    at offset ``k`` ends by the root's raw end. Counting ``k`` plus its padded size made the last piece
    of a 468-byte tensor reach 516 bytes, so the block took 1024 bytes where the root's own size says
    512, and the model file (whose figures are the tensors' own sizes) was refused.

    A member's size is its set size when the graph sets one (``TensorDesc.size``, ``sizes.desc_size``;
    inlined here, the planner asks once per member)."""
    desc, offset, size = graph.desc, lt.offset, 0
    for m in lt.members[r]:
        d = desc[m]
        nbytes = raw_bytes(d)
        size = max(size, tensor_size(nbytes, options) if d.size is None else d.size, offset[m] + nbytes)
    return size


def _piece_sizes(graph: Graph, lt: Lifetimes, r: str, options) -> tuple[int, int]:
    """A NoPadding piece's symbol: (its size from its shapes alone, as ``symbol_size`` counts it without set
    sizes; the largest set size of a member, 0 if none).

    GE gives a NoPadding group one block, applied for input 0 (block_mem_assigner.cc
    ``GetNoNeedAssignMemoryFlag``: the other inputs get none), as large as the largest size set in that
    symbol, which holds the concat's output (it refs input 0); the pieces sit in it by their shapes' bytes
    (graph_mem_assigner.cc ``GetMemorySize``). So a set size sizes the group's block from its start and
    does not push the block past a later piece: GE's graph_not_first_continuous_input_as_symbol_reuse
    pieces, 2048 B set on 512 B of shape, sit at 0 and 512 in a 2048 B block. Without set sizes this is
    ``symbol_size``, so such groups are planned as before."""
    desc, offset, size, set_size = graph.desc, lt.offset, 0, 0
    for m in lt.members[r]:
        d = desc[m]
        nbytes = raw_bytes(d)
        size = max(size, tensor_size(nbytes, options), offset[m] + nbytes)
        if d.size is not None:
            set_size = max(set_size, d.size)
    return size, set_size


def _interval(facts: Facts, r_first: int, r_last: int, shared: bool) -> tuple[int, int]:
    """The planning lifetime: the whole graph for memory that is never shared."""
    return (r_first, r_last) if shared else (0, facts.lt.steps - 1)


def _tensor_unit(facts: Facts, r: str, options) -> Unit:
    graph, lt = facts.graph, facts.lt
    producers = facts.producers(r)
    producer = producers[0]
    zc = facts.zero_copy(r)
    is_atomic = zc is None and facts.atomic(producers)
    reusable = not is_atomic and facts.reusable(r)
    r_first, r_last = lt.span[r]
    first, last = _interval(facts, facts.first_write((r,), producer.stream, r_first),
                            facts.stream_last(r, producer.stream, r_last), reusable)
    consumed = any(map(graph.consumers.get, lt.members[r])) or facts.netoutput_slots.get(r, 0)
    return Unit(
        id=r, kind="tensor", roots=((r, 0),), size=symbol_size(graph, lt, r, options), first=first, last=last,
        stream=producer.stream, batch=common_label(producers), zero_copy=zc, reusable=reusable,
        atomic=is_atomic, input_size=raw_bytes(graph.desc[r]) if zc == "input" else 0,
        unconsumed=not consumed, alloc_step=lt.step[producer.name], reach=r_last,
        remote=reusable and facts.read_elsewhere_only((r,), producer.stream), **_order(facts, (r,)))


def _group_unit(facts: Facts, name: str, roots: list[str], options, inner: Mapping[str, str]) -> Unit:
    graph, lt = facts.graph, facts.lt
    node = graph.node[name]
    padding = rules.continuous_input(node) == "padding"
    offsets: list[tuple[str, int]] = []
    nodes = [node]   # the node and the NoPadding concats nested in it (cascades)
    if padding:
        cursor, total = 0, 0
        for r in roots:
            offsets.append((r, cursor))
            # Each piece reserves its block-rounded size (what the contract says a tensor occupies).
            size = align(symbol_size(graph, lt, r, options), options.block_align)
            total = max(total, cursor + size)
            cursor += size
    else:
        cursor, total = _lay_nopadding(facts, node, 0, inner, offsets, nodes, options)
    roots = [r for r, _ in offsets]
    # An atomic output keeps its bytes for the whole graph (AssignAtomicOutputMemory), also inside a continuous group.
    atomic = any(rules.atomic(p) for r in roots for p in facts.producers(r))
    reusable = all(facts.reusable(r) for r in roots) and not any(rules.no_reuse(n) for n in nodes) and not atomic
    first = facts.first_write(roots, node.stream, min(lt.span[r][0] for r in roots))
    if padding:
        # A padding group written or read on another stream than the node's is held to the end (GE's numbers
        # for graph_continuous_output_memory_reuse need it; ending it where stream_last would plans 38912 B).
        cross = any(n.stream != node.stream for r in roots for n in facts.producers(r) + facts.readers(r))
        last = lt.steps - 1 if cross else max(lt.span[r][1] for r in roots)
    else:
        # A NoPadding group ends where each piece's readers are known done on the node's stream: GE's
        # CalNodeAsContinuousInputMaxLife takes GetNodeMaxLife of every input (GetDiffStreamMaxLifeTime).
        last = max(facts.stream_last(r, node.stream, lt.span[r][1]) for r in roots)
    first, last = _interval(facts, first, last, reusable)
    label = common_label(nodes + [p for r in roots for p in facts.producers(r)])
    return Unit(
        id=f"{name}#in", kind="group", roots=tuple(offsets), size=max(total, cursor), first=first, last=last,
        stream=node.stream, batch=label, zero_copy=None, reusable=reusable,
        continuous=True,
        same_offset=rules.base_type(node.op_type) in rules.SAME_OFFSET_IN_BATCH,
        alloc_step=min(lt.step[graph.producer[r]] for r in roots),
        owner=None if padding or not node.outputs else node.outputs[0], reach=max(lt.span[r][1] for r in roots),
        remote=reusable and facts.read_elsewhere_only(roots, node.stream), **_order(facts, roots))


def _lay_nopadding(facts: Facts, node, base: int, inner: Mapping[str, str], offsets: list, nodes: list,
                   options) -> tuple[int, int]:
    """Lay a NoPadding concat's pieces back to back from ``base`` (appending (root, offset) to ``offsets``);
    return (the cursor after its last piece, the bytes its block needs from the unit's start).

    AssignContinuousInputMemory advances by the piece's raw bytes (its shape's, GetMemorySize/
    CalculateTensorRealSizeAndOutSize, not a set size): the input itself, which may be a smaller ref of its
    root (GE's graph_ref_continuous_input_memory_reuse: h:0 refs e:0). The root's bytes past the piece then
    lie under the next pieces; the in-place guard (aliases.symbols) only lets h write e:0's memory when
    nothing reads e:0 after h, so they are dead before a later piece is written (else LAYOUT-NO-OVERLAP
    refuses the plan). A piece's shape-derived size counts from its offset; a set size from the start of
    its concat's pieces (``_piece_sizes``). An input that is the output of a NoPadding concat nested here
    (``inner``, a cascade) is that concat's pieces, laid out in its place by the same rule; the next piece
    follows both them and the input's own bytes (equal in a consistent graph), so none overlaps."""
    graph, lt = facts.graph, facts.lt
    desc, offset = graph.desc, lt.offset
    cursor, total = base, base
    for t in node.inputs:
        y = graph.producer.get(t)
        if y is not None and inner.get(y) == node.name:
            nodes.append(graph.node[y])
            end, need = _lay_nopadding(facts, graph.node[y], cursor, inner, offsets, nodes, options)
            total = max(total, need)
            cursor = max(end, cursor + offset[t] + raw_bytes(desc[t]))
            continue
        r = lt.root[t]
        offsets.append((r, cursor))
        size, set_size = _piece_sizes(graph, lt, r, options)
        total = max(total, cursor + align(size, options.block_align), base + align(set_size, options.block_align))
        cursor += offset[t] + raw_bytes(desc[t])
    return cursor, total


def _output_group_unit(facts: Facts, name: str, roots: list[str], options) -> Unit:
    """One block for all outputs of a continuous-output node, at output 0: output i at the sum of the
    512-aligned sizes before it; live from the node to the last use of any output (ApplyContinuousMemory,
    AssignContinuousOutputMemory)."""
    graph, lt = facts.graph, facts.lt
    node = graph.node[name]
    offsets, cursor = [], 0
    for r in roots:
        offsets.append((r, cursor))
        cursor += align(symbol_size(graph, lt, r, options), options.block_align)
    reusable = all(facts.reusable(r) for r in roots) and not rules.no_reuse(node)
    cross = any(n.stream != node.stream for r in roots for n in facts.readers(r))
    last = lt.steps - 1 if cross else max(lt.span[r][1] for r in roots)
    first, last = _interval(facts, lt.step[name], last, reusable)
    return Unit(
        id=f"{name}#out", kind="group", roots=tuple(offsets), size=cursor, first=first, last=last,
        stream=node.stream, batch=rules.batch_label(node), zero_copy=None, reusable=reusable, continuous=True,
        same_offset=rules.base_type(node.op_type) in rules.SAME_OFFSET_IN_BATCH, alloc_step=lt.step[name],
        reach=max(lt.span[r][1] for r in roots), remote=reusable and facts.read_elsewhere_only(roots, node.stream),
        **_order(facts, roots))


def _joint_unit(facts: Facts, chain: Chain, options) -> Unit:
    """One block for a chain (``chains``): piece i at the sum of the 512-aligned sizes before it, as a padding
    group and a continuous output both lay their pieces (``SetOffsetForContinuousMem``). GE applies it where
    the chain's first output is assigned (``ApplyContinuousMemWithMng``; the other pieces get none,
    ``IsNeedAssignMemory``), for a block the ContinuousMem of this scenario never lets be reused
    (``can_reuse_`` is false unless ATOMIC_CLEAN_POLICY cleans separately, which zcspec has not): its life
    is the whole graph. It asks without ``continuous``, so it is no continuous input's block (the id's
    ``#joint``, ge_level2._feeds_continuous_input) and stays where it was created."""
    graph, lt = facts.graph, facts.lt
    offsets, cursor = [], 0
    for r in chain.roots:
        offsets.append((r, cursor))
        cursor += align(symbol_size(graph, lt, r, options), options.block_align)
    first = graph.node[graph.producer[chain.roots[0]]]
    producers = [p for r in chain.roots for p in facts.producers(r)]
    return Unit(
        id=f"{chain.roots[0]}#joint", kind="group", roots=tuple(offsets), size=cursor, first=0, last=lt.steps - 1,
        stream=first.stream, batch=common_label([graph.node[n] for n in chain.nodes] + producers), zero_copy=None,
        reusable=False, atomic=any(rules.atomic(p) for p in producers), continuous=True,
        same_offset=rules.base_type(first.op_type) in rules.SAME_OFFSET_IN_BATCH, alloc_step=lt.step[first.name],
        reach=max(lt.span[r][1] for r in chain.roots), **_order(facts, chain.roots))


def _clean_unit(facts: Facts, clean: CleanSet, options) -> Unit:
    """One ordinary block for the separate-clean groups that start with one tensor (``clean_sets``): each
    group's pieces back to back from the block's start, each at the sum of the 512-aligned sizes before it in
    its group (graph_mem_assigner.cc ``AssignContinuousInputMemory`` from input 0's offset), the block as large
    as the largest group (block_mem_assigner.cc ``GetOutputTotalSizeAndOutCount``).

    GE asks for it as the first input's own output block, without ``continuous`` (``ApplyOutMemory`` with
    ``as_input_continuous`` false) and reusable, so first-stage reuse may take and give it and level 2 merges
    it as any block: ``continuous`` is False and the id ends ``#clean``, which ge_blocks._may_reuse and
    ``_feeds_continuous_input`` do not count as a continuous input's. It lives on the first input's stream,
    from the first write of any piece (``CalNodeAsContinuousInputMaxLife`` lowers ``life_begin_`` to the
    inputs' earliest producer) to the last read of any piece there (``GetNodeMaxLife`` of each input). It is
    created with its earliest piece: GE creates it with the first input but takes no released block whose life
    reaches that begin (``CanReuseBlock``), which comes to the same blocks.

    Two groups' later pieces share the bytes after the first input; GE does not check that they are never live
    at once (its test graphs' are not): a PlanError names two that are, as nothing can hold both."""
    graph, lt = facts.graph, facts.lt
    offsets: list[tuple[str, int]] = [(clean.head, 0)]
    pieces: list[tuple[str, str, int, int]] = []   # (node, root, offset, end) of each later piece
    size = head_size = align(symbol_size(graph, lt, clean.head, options), options.block_align)
    for name, roots in clean.groups:
        cursor = head_size
        for r in roots[1:]:
            size_of = align(symbol_size(graph, lt, r, options), options.block_align)
            pieces.append((name, r, cursor, cursor + size_of))
            offsets.append((r, cursor))
            cursor += size_of
        size = max(size, cursor)
    _check_clean_pieces(lt, clean, pieces)
    roots = [r for r, _ in offsets]
    producers = [p for r in roots for p in facts.producers(r)]
    head = facts.producers(clean.head)[0]
    nodes = [graph.node[name] for name, _ in clean.groups]
    atomic = any(rules.atomic(p) for p in producers)
    reusable = all(facts.reusable(r) for r in roots) and not any(rules.no_reuse(n) for n in nodes) and not atomic
    first = facts.first_write(roots, head.stream, min(lt.span[r][0] for r in roots))
    last = max(facts.stream_last(r, head.stream, lt.span[r][1]) for r in roots)
    first, last = _interval(facts, first, last, reusable)
    return Unit(
        id=f"{clean.head}#clean", kind="group", roots=tuple(offsets), size=size, first=first, last=last,
        stream=head.stream, batch=common_label(nodes + producers), zero_copy=None, reusable=reusable,
        atomic=atomic, same_offset=rules.base_type(head.op_type) in rules.SAME_OFFSET_IN_BATCH,
        alloc_step=min(lt.step[graph.producer[r]] for r in roots), reach=max(lt.span[r][1] for r in roots),
        remote=reusable and facts.read_elsewhere_only(roots, head.stream), **_order(facts, roots))


def _check_clean_pieces(lt: Lifetimes, clean: CleanSet, pieces) -> None:
    """No two later pieces of different groups in one separate-clean block share a byte while both are live."""
    for i, (a_node, a, a_at, a_end) in enumerate(pieces):
        for b_node, b, b_at, b_end in pieces[i + 1:]:
            if a_node == b_node or a_end <= b_at or b_end <= a_at:
                continue
            if lt.span[a][0] <= lt.span[b][1] and lt.span[b][0] <= lt.span[a][1]:
                raise PlanError(f"tensors {a!r} (input of {a_node!r}) and {b!r} (input of {b_node!r}) sit at the "
                                f"same bytes of the separate-clean block of {clean.head!r}, which starts both "
                                "groups, while both are live; copy the shared first input for one of them",
                                node=b_node, tensor=b,
                                rule="separate clean, graph_mem_assigner.cc AssignContinuousInputMemory")


def _order(facts: Facts, roots) -> dict:
    """``Unit.uses`` and ``Unit.known`` of the memory of ``roots``: their symbols' writers and readers."""
    if not facts.multi_stream:
        return {}
    return facts.order_facts([p for r in roots for p in facts.producers(r)],
                             [n for r in roots for n in facts.readers(r)])


def _workspace_units(facts: Facts, options) -> list[Unit]:
    graph, lt = facts.graph, facts.lt
    out = []
    for ws in lt.workspaces:
        node = graph.node[ws.node]
        reusable = options.reuse and not rules.no_reuse(node)
        first, last = (ws.step, ws.step) if reusable else (0, lt.steps - 1)
        out.append(Unit(id=ws.name, kind="workspace", roots=((ws.name, 0),), size=ws.nbytes, first=first, last=last,
                        stream=node.stream, batch=rules.batch_label(node), zero_copy=None, reusable=reusable,
                        alloc_step=ws.step, reach=ws.step, **facts.order_facts([node])))
    return out


def fm_roots(graph: Graph, lt: Lifetimes) -> list[str]:
    """Roots that need planner memory: node outputs that are not variables' (weights are not node outputs)."""
    return [r for r in lt.members if r not in graph.weight and not rules.zero_memory(graph.node[graph.producer[r]])]


def build_units(graph: Graph, lt: Lifetimes, options) -> Units:
    """Every unit of ``graph``, in GE's block creation order (by step: outputs, then workspaces)."""
    facts = Facts(graph, lt, options)
    groups, inner = input_groups(graph, lt)
    out_groups = output_groups(graph, lt, groups)
    clean = clean_sets(graph, lt, groups, out_groups)   # before chains, which take the joined groups away
    joint = chains(graph, groups, out_groups)
    grouped = {r for roots in (*groups.values(), *out_groups.values(), *(c.roots for c in joint)) for r in roots}
    grouped.update(r for c in clean for _, roots in c.groups for r in roots)
    units = [_tensor_unit(facts, r, options) for r in fm_roots(graph, lt) if r not in grouped]
    units += [_clean_unit(facts, c, options) for c in clean]
    units += [_group_unit(facts, name, roots, options, inner) for name, roots in groups.items()]
    units += [_output_group_unit(facts, name, roots, options) for name, roots in out_groups.items()]
    units += [_joint_unit(facts, chain, options) for chain in joint]
    units += _workspace_units(facts, options)
    phase = {"tensor": 0, "group": 0, "workspace": 1}
    units.sort(key=lambda u: (u.alloc_step, phase[u.kind]))
    for i, u in enumerate(units):
        object.__setattr__(u, "seq", i)  # set once, before anyone else sees the unit (evolve is slow at 100k)
    where = {r: (u.id, off) for u in units for r, off in u.roots}
    return Units(tuple(units), where, lt.steps)
