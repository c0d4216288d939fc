"""ExecuTorch's memory plan, read from a ``.pte`` file (no ExecuTorch or torch needed).

A ``.pte`` file is a FlatBuffers ``Program`` (file identifier ``ET12``; ExecuTorch's
``schema/program.fbs``). This reader takes, of one execution plan (a method, ``forward`` by
default):

- each planned tensor: an ``EValue`` of type ``Tensor`` whose ``allocation_info`` gives a
  ``memory_id`` and an offset (``memory_offset_low`` + ``memory_offset_high`` << 32); its bytes are
  its ``sizes`` times its scalar type's width (the upper bound of a dynamically bounded shape);
- the arenas: ``non_const_buffer_sizes[id]`` for each ``memory_id`` (id 0 is reserved), of kind
  ``activations``, aligned to 16 bytes (ExecuTorch's ``MemoryPlanningPass`` default; ``alignment=``
  overrides it);
- the steps: the instructions of the plan's first chain. A ``KernelCall``'s arguments name the
  values it touches (a ``TensorList`` its items); its out arguments are the trailing ones the call
  repeats as its return values (an out variant's ``out`` and its result), the writes; the others
  are reads. A tensor's lifetime runs from its first to its last instruction (a method input from
  step 0, an output to the end);
- ``MoveCall(from, to)`` moves a pointer, not data: from then on value ``to`` is an alias of
  ``from``'s memory (a tensor ``v{to}@{step}``, alive until ``to``'s last use);
- an element-wise kernel (``ELEMENTWISE``) whose out tensor is planned at the offset and size of a
  tensor it reads, when no tensor of that memory (the read tensor, its root, their aliases) is used
  after the kernel or is a method output (the caller reads it after the last step), computed its
  result in place: ExecuTorch's planner shares such a pair by design
  (a pass sets ``_share_alloc_with_arg_idx``; ``storage_base``, formerly ``inplace_base``). The out
  tensor is an alias of the read one and the step an in-place step that reads each element where it
  writes it. Memory still used after the kernel is overwritten, not shared: the two stay separate
  tensors, for LAYOUT-NO-OVERLAP to judge;
- ``JumpFalseCall``: a jump on a boolean value to a later instruction whose preceding instruction
  is an unconditional jump (a ``JumpFalseCall`` on a constant false) is a ``torch.cond``: the
  instructions between are its true branch, those from the destination to the end of the
  unconditional jump its false branch. Each **execution path** (a choice at every conditional
  that runs) is a plan of its own, built from the instructions that path runs: a tensor read in
  both branches of a later conditional lives, on each path, only to the read that path makes.
  Checking one linear plan with both branches in it would report overlaps no execution has.

- a loop (``torch.ops.higher_order.map``; ExecuTorch emits a jump back to the start of the body):
  one iteration stands for all. A tensor the body writes before reading and that only the body
  uses lives as in one iteration; any other tensor the body touches (the loop's inputs and
  outputs, values carried across iterations) lives through the whole body.

Not read: delegate calls' internal memory (their arguments are read as a kernel's), constants
(they live in the file's segments, not in planned memory), and the planner's own lifetimes, which
the file does not keep.
"""
from __future__ import annotations

import itertools
import math
import os

import attrs

from zcspec.checks.errors import UsageError
from zcspec.checks.foreign.artefact_file import read_bytes
from zcspec.checks.foreign.flatbuf import FlatbufferError, N, Node
from zcspec.spec.capabilities import PLANNERS
from zcspec.spec.observables.plan import Arena, ByteCopy, ByteRange, InPlaceStep, PlacedTensor, PlanObservation, alias_root

ALIGNMENT = PLANNERS["executorch"].alignment   # exir/tensor.py ALIGNMENT, MemoryPlanningPass's default
MAX_FILE_BYTES = 1 << 30
MAX_INSTRUCTIONS = 1 << 20
MAX_CONDITIONALS = 10   # 2^10 paths at most

# ScalarType (scalar_type.fbs) -> bytes per element; sub-byte packed types are counted a byte each.
ELEMENT_BYTES = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 11: 1, 12: 1, 13: 1, 14: 4, 15: 2, 16: 1, 17: 1,
                 22: 2, 23: 1, 24: 1, 25: 1, 26: 1, 27: 2, 28: 4, 29: 8}
# aten operators (the name before the overload) that compute each output element from the elements
# at the same position: an out tensor in the bytes of one of their inputs is computed in place.
ELEMENTWISE = frozenset({
    "aten::abs", "aten::add", "aten::clamp", "aten::cos", "aten::div", "aten::exp", "aten::gelu",
    "aten::hardtanh", "aten::leaky_relu", "aten::log", "aten::maximum", "aten::minimum", "aten::mul",
    "aten::neg", "aten::pow", "aten::reciprocal", "aten::relu", "aten::rsqrt", "aten::sigmoid", "aten::silu",
    "aten::sin", "aten::sqrt", "aten::sub", "aten::tanh", "aten::where"})
# KernelTypes union (program.fbs)
BOOL, TENSOR, TENSOR_LIST, OPTIONAL_TENSOR_LIST = 3, 5, 10, 11
# InstructionArguments union
KERNEL_CALL, DELEGATE_CALL, MOVE_CALL, JUMP_FALSE_CALL, FREE_CALL = 1, 2, 3, 4, 5


class PteError(UsageError):
    """A ``.pte`` file this reader cannot take: not a flatbuffer Program, a reference out of range,
    a construct it does not transcribe. The message names the file and what is wrong."""


@attrs.frozen
class _Value:
    kind: int
    node: Node | None


def read_pte(path: str | os.PathLike, *, method: str | None = None,
             alignment: int = ALIGNMENT) -> tuple[str, list[tuple[str, PlanObservation]]]:
    """(method name, [(path, plan)]) of ``path``'s method ``method`` (default: the first): one plan per
    execution path through its conditionals (module doc); a method without one has the single path ""."""
    path = str(path)
    buf = read_bytes(path, MAX_FILE_BYTES, PteError)
    try:
        return _read(buf, method, alignment, path)
    except FlatbufferError as e:
        raise PteError(f"is not a well-formed ExecuTorch program: {e}", file=path) from None


def methods(path: str) -> list[str]:
    with open(path, "rb") as f:
        buf = f.read(MAX_FILE_BYTES)
    try:
        return [p.string(0) for p in Node.root(buf, b"ET12").tables(1)]
    except FlatbufferError as e:
        raise PteError(f"is not a well-formed ExecuTorch program: {e}", file=path) from None


def _read(buf: bytes, method: str | None, alignment: int, path: str) -> tuple[str, list[tuple[str, PlanObservation]]]:
    program = Node.root(buf, b"ET12")
    plans = program.tables(1)
    if not plans:
        raise PteError("holds no execution plan", file=path)
    names = [p.string(0) for p in plans]
    if method is not None and method not in names:
        raise PteError(f"has no method {method!r}; methods: {names}", file=path)
    plan = plans[names.index(method) if method is not None else 0]
    reader = _Method(plan, alignment, path)
    return plan.string(0), [(label, reader.observe(choice)) for label, choice in reader.paths()]


class _Method:
    def __init__(self, plan: Node, alignment: int, path: str):
        self.path, self.alignment = path, alignment
        self.values = [_Value(*e.union(0)) for e in plan.tables(2)]
        self.inputs, self.outputs = plan.scalars(3, N.Int32Flags), plan.scalars(4, N.Int32Flags)
        chains = plan.tables(5)
        self.instructions = [c.union(0) for c in chains[0].tables(2)] if chains else []
        if len(self.instructions) > MAX_INSTRUCTIONS:
            raise PteError(f"has {len(self.instructions)} instructions, more than {MAX_INSTRUCTIONS}", file=path)
        self.operators = [f"{o.string(0)}.{o.string(1)}" if o.string(1) else o.string(0) for o in plan.tables(6)]
        self.sizes = plan.scalars(8, N.Int64Flags)

    def _error(self, why: str) -> PteError:
        return PteError(why, file=self.path)

    def _value(self, i: int, where: str) -> _Value:
        if not 0 <= i < len(self.values):
            raise self._error(f"{where} names value {i}, but the plan has {len(self.values)} values")
        return self.values[i]

    def _placement(self, i: int):
        """(arena, offset, bytes) of value i if it is a planned tensor, else None."""
        v = self.values[i]
        if v.kind != TENSOR or v.node is None:
            return None
        info = v.node.table(6)
        if info is None:
            return None
        memory = info.scalar(0, N.Uint32Flags)
        offset = info.scalar(1, N.Uint32Flags) | (info.scalar(2, N.Uint32Flags) << 32)
        if not 0 < memory < len(self.sizes):
            raise self._error(f"value {i} is planned in memory {memory}, but the plan declares memories "
                              f"1..{len(self.sizes) - 1} (non_const_buffer_sizes)")
        dims = v.node.scalars(2, N.Int32Flags)
        if any(d < 0 for d in dims):
            raise self._error(f"value {i} has a negative size {dims}")
        kind = v.node.scalar(0, N.Int8Flags)
        if kind not in ELEMENT_BYTES:
            raise self._error(f"value {i} has scalar type {kind}, which this reader does not know")
        return f"mem {memory}", offset, math.prod(dims) * ELEMENT_BYTES[kind]

    def _tensors_of(self, i: int, where: str) -> list[int]:
        v = self._value(i, where)
        if v.kind in (TENSOR_LIST, OPTIONAL_TENSOR_LIST) and v.node is not None:
            items = [k for k in v.node.scalars(0, N.Int32Flags) if k >= 0]
            for k in items:
                self._value(k, f"{where} (a list item)")
            return [k for k in items if self.values[k].kind == TENSOR]
        return [i] if v.kind == TENSOR else []

    def _constant_false(self, i: int) -> bool:
        v = self._value(i, "a jump")
        return v.kind == BOOL and v.node is not None and not v.node.scalar(0, N.BoolFlags)

    def _branches(self) -> list[tuple[int, int, int]]:
        """(jump, false start, end) of each conditional: see the module doc."""
        out = []
        for i, (kind, node) in enumerate(self.instructions):
            if kind != JUMP_FALSE_CALL:
                continue
            cond, dest = node.scalar(0, N.Int32Flags), node.scalar(1, N.Int32Flags)
            if not 0 <= dest <= len(self.instructions):
                raise self._error(f"instruction {i} jumps to {dest}, outside the {len(self.instructions)} instructions")
            if dest <= i:
                continue       # a loop's back edge (see _loops)
            if self._constant_false(cond):
                continue       # an unconditional jump: the end of a true branch
            kind_before, before = self.instructions[dest - 1]
            if kind_before != JUMP_FALSE_CALL or not self._constant_false(before.scalar(0, N.Int32Flags)):
                raise self._error(f"instruction {i} jumps on value {cond} to {dest}, but instruction {dest - 1} "
                                  "is not the unconditional jump that ends a true branch")
            out.append((i, dest, before.scalar(1, N.Int32Flags)))
        return out

    def paths(self) -> list[tuple[str, dict[int, bool]]]:
        """Every distinct execution path: a choice per conditional, told apart by the instructions run."""
        branches = self._branches()
        if len(branches) > MAX_CONDITIONALS:
            raise self._error(f"has {len(branches)} conditionals; at most {MAX_CONDITIONALS} are read (2^n paths)")
        out, seen = [], set()
        for bits in itertools.product((True, False), repeat=len(branches)):
            choice = dict(enumerate(bits))
            run = self._executed(branches, choice)
            key = frozenset(run)
            if key in seen:
                continue        # a choice of a conditional nested in a branch not taken
            seen.add(key)
            label = ", ".join(f"cond at {branches[k][0]}: {'true' if b else 'false'}" for k, b in choice.items()
                              if branches[k][0] in key)
            out.append((label, choice))
        return out

    def _loops(self) -> list[tuple[int, int]]:
        """(first, last) instruction of each loop body: a jump back from ``last`` to ``first``."""
        return [(node.scalar(1, N.Int32Flags), i) for i, (kind, node) in enumerate(self.instructions)
                if kind == JUMP_FALSE_CALL and node.scalar(1, N.Int32Flags) <= i]

    def _executed(self, branches, choice: dict[int, bool]) -> list[int]:
        skipped: set[int] = set()
        for k, (i, d, e) in enumerate(branches):
            if i in skipped:
                continue        # nested in a branch not taken
            skipped |= set(range(d, e)) if choice[k] else set(range(i + 1, d))
        return [s for s in range(len(self.instructions)) if s not in skipped]

    def observe(self, choice: dict[int, bool] | None = None) -> PlanObservation:
        """The plan of the path ``choice`` takes (default: every conditional true). Its steps are the
        instructions the path runs, in order; each step's name starts with the instruction's index."""
        branches = self._branches()
        executed = self._executed(branches, choice or {k: True for k in range(len(branches))})
        holders: dict[int, set[str]] = {}
        placed: dict[str, dict] = {}
        for i in range(len(self.values)):
            p = self._placement(i)
            if p is not None:
                placed[f"v{i}"] = dict(name=f"v{i}", region=p[0], offset=p[1], size=p[2], steps=set(),
                                       alias_of=None)
                holders[i] = {f"v{i}"}
        reads: dict[str, set[int]] = {}
        writes: dict[str, set[int]] = {}
        kernels: list[tuple[int, list[str], list[str]]] = []     # element-wise steps: (step, reads, writes)
        # The plan's steps are the instructions this path runs, in order; order names each by its index.
        for step, at in enumerate(executed):
            kind, node = self.instructions[at]
            if kind == KERNEL_CALL or kind == DELEGATE_CALL:
                args = node.scalars(1, N.Int32Flags)
                outs = _returned(args) if kind == KERNEL_CALL else 0
                touched: tuple[list[str], list[str]] = ([], [])
                for pos, a in enumerate(args):
                    for t in self._tensors_of(a, f"instruction {at}"):
                        for name in holders.get(t, ()):
                            placed[name]["steps"].add(step)
                            out = pos >= len(args) - 2 * outs
                            (writes if out else reads).setdefault(name, set()).add(step)
                            touched[out].append(name)
                if kind == KERNEL_CALL and self._label(at).split(".")[0] in ELEMENTWISE:
                    kernels.append((step, *touched))
            elif kind == MOVE_CALL:
                src, dst = node.scalar(0, N.Int32Flags), node.scalar(1, N.Int32Flags)
                self._value(src, f"instruction {at}")
                self._value(dst, f"instruction {at}")
                new = set()
                for name in holders.get(src, ()):
                    alias = f"v{dst}@{at}"
                    root = placed[name]
                    placed[alias] = dict(name=alias, region=root["region"], offset=root["offset"], size=root["size"],
                                         steps={step}, alias_of=name)
                    root["steps"].add(step)
                    new.add(alias)
                holders[dst] = new
            elif kind == JUMP_FALSE_CALL:
                for t in self._tensors_of(node.scalar(0, N.Int32Flags), f"instruction {at}"):
                    for name in holders.get(t, ()):     # the jump reads its condition
                        placed[name]["steps"].add(step)
                        reads.setdefault(name, set()).add(step)
            elif kind == FREE_CALL:
                self._value(node.scalar(0, N.Int32Flags), f"instruction {at}")
        end = len(executed) - 1
        if end < 0:
            placed = {}         # a method with no instruction: nothing runs, nothing is planned for a step
        inputs = sorted(f"v{i}" for i in self.inputs if f"v{i}" in placed)
        outputs = sorted({name for i in self.outputs if 0 <= i < len(self.values) for name in holders.get(i, ())})
        position = {at: k for k, at in enumerate(executed)}
        loops = [(position[a], position[b]) for a, b in self._loops() if a in position and b in position]
        tensors = []
        for name, t in placed.items():
            steps = set(t["steps"])
            if name in inputs:
                steps.add(0)
            if not steps:
                continue        # planned but never touched on this path
            steps |= _carried(steps, reads.get(name, set()), writes.get(name, set()), loops)
            last = max(end, max(steps)) if name in outputs else max(steps)
            tensors.append(PlacedTensor(name=name, region=t["region"], offset=t["offset"], size=t["size"],
                                        aligned_size=t["size"], first=min(steps), last=last,
                                        block=None, zero_copy=False, alias_of=t["alias_of"]))
        tensors, in_place = _in_place(tensors, kernels, set(outputs))
        kept = {t.name for t in tensors}
        arenas = {f"mem {m}": Arena("activations", self.alignment) for m in range(1, len(self.sizes))}
        return PlanObservation(
            order=tuple(f"{at}:{self._label(at)}" for at in executed), tensors=tuple(tensors), in_place=in_place,
            regions={f"mem {m}": self.sizes[m] for m in range(1, len(self.sizes))}, arenas=arenas,
            consumers={k: tuple(sorted(v)) for k, v in reads.items() if k in kept},
            writes={k: tuple(sorted(v)) for k, v in writes.items() if k in kept},
            graph_inputs=tuple(i for i in inputs if i in kept), graph_outputs=tuple(o for o in outputs if o in kept),
            planner="executorch")

    def _label(self, step: int) -> str:
        kind, node = self.instructions[step]
        if kind == KERNEL_CALL:
            op = node.scalar(0, N.Int32Flags)
            return self.operators[op] if 0 <= op < len(self.operators) else f"operator {op}"
        return {DELEGATE_CALL: "delegate", MOVE_CALL: "move", JUMP_FALSE_CALL: "jump", FREE_CALL: "free"}.get(kind, "?")


def _in_place(tensors: list[PlacedTensor], kernels,
              outputs: frozenset[str] | set[str] = frozenset()) -> tuple[list[PlacedTensor], tuple[InPlaceStep, ...]]:
    """Out tensors of element-wise kernels computed in the bytes of a read tensor whose memory is not
    used after the kernel (module doc): aliases of that memory, and in-place steps. A method output
    is used after every step: the caller reads it."""
    by_name = {t.name: t for t in tensors}

    def root(name: str) -> str:
        return alias_root(by_name, name)

    in_place = []
    for step, read, written in kernels:
        for w in (by_name.get(n) for n in written):
            if w is None or w.alias_of is not None:
                continue
            for r in (by_name.get(n) for n in read):
                if r is None or r is w or (r.region, r.offset, r.size) != (w.region, w.offset, w.size):
                    continue
                base = root(r.name)
                family = [t for t in by_name.values() if root(t.name) == base]
                if max(t.last for t in family) != step or any(t.name in outputs for t in family):
                    continue        # the memory is used after this step: an overwrite, not an in-place step
                by_name[w.name] = attrs.evolve(w, alias_of=r.name)
                in_place.append(InPlaceStep(step, w.name, (ByteRange(w.offset, w.end),),
                                            (ByteCopy(w.offset, w.end, w.offset),)))
                break
    return [by_name[t.name] for t in tensors], tuple(in_place)


def _carried(steps: set[int], reads: set[int], writes: set[int], loops) -> set[int]:
    """The steps of a loop body a tensor lives through beyond its own accesses: all of them, when it
    is touched outside the body too or read in the body before (or as) it is written there (its
    value crosses iterations); none when the body writes it first and only the body uses it (each
    iteration makes it anew)."""
    extra: set[int] = set()
    for first, last in loops:
        inside = {s for s in steps if first <= s <= last}
        if not inside:
            continue
        read_in, write_in = {s for s in reads if first <= s <= last}, {s for s in writes if first <= s <= last}
        crosses = inside != steps or not write_in or (read_in and min(read_in) <= min(write_in))
        if crosses:
            extra |= set(range(first, last + 1))
    return extra


def _returned(args: list[int]) -> int:
    """How many trailing arguments an out-variant call repeats as its return values."""
    for k in range(len(args) // 2, 0, -1):
        if args[-k:] == args[-2 * k:-k]:
            return k
    return 0
