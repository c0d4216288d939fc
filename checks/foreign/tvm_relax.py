"""TVM Relax's static memory plan, read from a module printed as TVMScript (no TVM needed).

TVM's Relax build plans memory in ``relax.transform.StaticPlanBlockMemory``: each tensor a kernel
writes (``R.builtin.alloc_tensor``) it can reuse becomes ``R.memory.alloc_tensor(storage, offset,
shape, dtype)`` in a storage allocated by ``R.memory.alloc_storage(R.shape([bytes]), ...)``; the
others (a function's results, tensors used across blocks) stay ``R.builtin.alloc_tensor``. This
reader takes the Relax functions of the module printed after that pass (``mod["main"].script()``,
or the whole module; the later passes up to ``KillAfterLastUse`` print the same operations plus
kills) and makes, of each function:

- one arena per storage, named by its variable, of kind ``activations``, its size the constant
  of its ``alloc_storage``; a tensor ``alloc_tensor`` places in it at its offset, its bytes its
  shape times its dtype's width. Tensors of one storage share it, so the storage is the arena and
  LAYOUT-NO-OVERLAP compares them;
- one arena per ``R.builtin.alloc_tensor`` (unplanned: the runtime allocates it alone), of kind
  ``user_io`` when the function returns it, else ``scratch``;
- the steps: the function's statements in order, one per binding, call, kill, ``if`` and the
  ``return``. A call reads every tensor it names; the first call to name a tensor since its
  allocation writes it (kernels are called in destination-passing style: their outputs are fresh
  allocations). ``y = x``, a tuple and its items name the same tensors;
- ``R.match_cast``, ``R.reshape``, ``R.memory.view`` and ``R.memory.ensure_zero_offset`` make a
  tensor of their own that is an alias (``alias_of``) of their operand, in its bytes: no data moves;
- a lifetime from the tensor's binding to its ``R.memory.kill_tensor`` (the plan's claim), or,
  when TVM emits none, to its last use. ``R.memory.kill_storage`` ends no lifetime: it drops the
  function's handle, and the VM keeps a storage alive while a tensor in it lives;
- ``arena_allocations``: the steps of the path that run each storage's ``alloc_storage`` (a
  storage the function takes as a parameter exists before the first step and is not listed);
- an ``if``: each **execution path** (a choice at every conditional it runs) is a plan of its own,
  made of the statements that path runs (as for ExecuTorch, docs/foreign-planners.md). A storage
  variable a branch uses but only the other branch allocates (TVM prints it as a bare declaration,
  ``storage: R.Any``) is an arena this path never allocates.

Not read: dynamic shapes (a symbolic size is refused), the TIR functions (kernels are opaque
calls, so an in-place kernel's reads of its output are not told from its writes), tensor
parameters (the caller's memory), and the module after ``LowerRuntimeBuiltin`` (``R.vm.*``).
"""
from __future__ import annotations

import os
import re

import attrs

from zcspec.checks.errors import UsageError
from zcspec.checks.foreign.artefact_file import read_text
from zcspec.checks.foreign.tvm_script import (MAX_BYTES, Function, Stmt, TvmRelaxError, call_parts, constant,
                                              functions, names_in, nbytes, shape, tuple_items)
from zcspec.spec.errors import SpecError
from zcspec.spec.observables.plan import Arena, PlacedTensor, PlanObservation, alias_root

MAX_FILE_BYTES = 16 << 20
MAX_CONDITIONALS = 10   # on one path: 2**10 plans at most
MAX_PATH_STEPS = 1 << 21   # statements over all paths of one function
ALIASES = {"R.match_cast": "match_cast", "R.reshape": "reshape", "R.memory.view": "view",
           "R.memory.ensure_zero_offset": "ensure_zero_offset"}


@attrs.frozen
class RelaxPlan:
    function: str
    path: str            # "" for a function without conditionals, else "if at line 7: true, ..."
    plan: PlanObservation

    @property
    def label(self) -> str:
        return f"{self.function} [{self.path}]" if self.path else self.function


def titles(plans: list[RelaxPlan], program: str = "") -> list[str]:
    """Each plan's title under a kept program's name: ``program [path]`` when the plans are of one
    function, ``program:function [path]`` otherwise; each plan's own label without a name."""
    if not program:
        return [p.label for p in plans]
    one = len({p.function for p in plans}) == 1
    return [(f"{program} [{p.path}]" if p.path else program) if one else f"{program}:{p.label}" for p in plans]


def read_relax(path: str | os.PathLike, *, function: str | None = None, alignment: int = 1) -> list[RelaxPlan]:
    """One plan per execution path of every Relax function of ``path`` that allocates memory (or of
    ``function`` only); TvmRelaxError naming the file and line for anything it cannot read."""
    path = str(path)
    if alignment < 1:
        raise UsageError(f"alignment={alignment} must be at least 1")
    text = read_text(path, MAX_FILE_BYTES, TvmRelaxError)
    try:
        found = functions(text.splitlines())
    except TvmRelaxError as e:
        raise TvmRelaxError(str(e), file=path) from None
    if not found:
        raise TvmRelaxError("holds no Relax function (@R.function): print the module with mod.script() or a "
                            "function with mod['main'].script() after relax.transform.StaticPlanBlockMemory", file=path)
    names = [f.name for f in found]
    if function is not None and function not in names:
        raise TvmRelaxError(f"has no Relax function {function!r}; functions: {names}", file=path)
    out = []
    for f in found:
        if function is not None and f.name != function:
            continue
        try:
            out += _function_plans(f, alignment)
        except TvmRelaxError as e:
            raise TvmRelaxError(f"function {f.name!r} (line {f.line}): {e}", file=path) from None
        except SpecError as e:
            raise TvmRelaxError(f"function {f.name!r} (line {f.line}) makes no valid plan: {e}", file=path) from None
    if not out:
        raise TvmRelaxError("has no Relax function that allocates memory (R.memory.alloc_tensor or "
                            "R.builtin.alloc_tensor): print the module after relax.transform.StaticPlanBlockMemory",
                            file=path)
    return out


def _function_plans(f: Function, alignment: int) -> list[RelaxPlan]:
    sizes = _storage_sizes(f.body)
    out = []
    for choices, steps in _paths(f.body):
        plan = _Path(sizes, set(f.params), alignment).plan(steps)
        if plan is not None:
            out.append(RelaxPlan(f.name, ", ".join(choices), plan))
    return out


def _walk(stmts):
    for s in stmts:
        yield s
        yield from _walk(s.then)
        yield from _walk(s.orelse)


def _storage_sizes(body) -> dict[str, int]:
    """Each storage variable's size, from its alloc_storage wherever it is in the function."""
    out: dict[str, int] = {}
    for s in _walk(body):
        call = call_parts(s.expr) if s.kind == "bind" else None
        if call and call[0] == "R.memory.alloc_storage":
            size = shape(call[1][0] if call[1] else "", s.line, "the size of storage")
            if len(size) != 1:
                raise TvmRelaxError(f"line {s.line}: storage {s.target!r} is sized {call[1][0]}, not one byte count")
            out[s.target] = max(out.get(s.target, 0), size[0])
        if call and call[0].startswith("R.vm.alloc"):
            raise TvmRelaxError(f"line {s.line}: {call[0]} is the VM's lowered form; print the module before "
                                "relax.transform.LowerRuntimeBuiltin")
        if s.kind in ("bind", "expr") and "R.call_tir(" in s.expr.replace(" ", ""):
            raise TvmRelaxError(f"line {s.line}: R.call_tir is not lowered yet: print the module after "
                                "relax.transform.StaticPlanBlockMemory (it runs after CallTIRRewrite)")
    return out


def _paths(body) -> list[tuple[tuple[str, ...], list[Stmt]]]:
    """(choices, statements run) of every execution path through ``body``'s conditionals."""
    if _count(body) > 2 ** MAX_CONDITIONALS:
        raise TvmRelaxError(f"has more than {2 ** MAX_CONDITIONALS} execution paths; this reader makes one plan "
                            "per path")
    if _count(body) * sum(1 for _ in _walk(body)) > MAX_PATH_STEPS:
        raise TvmRelaxError(f"has {_count(body)} execution paths of up to {sum(1 for _ in _walk(body))} statements, "
                            f"more than the {MAX_PATH_STEPS} this reader reads")
    paths: list[tuple[tuple[str, ...], list[Stmt]]] = [((), [])]
    for s in body:
        if s.kind != "if":
            for _, steps in paths:
                steps.append(s)
            continue
        branches = [(f"if at line {s.line}: {side}", sub) for side, block in (("true", s.then), ("false", s.orelse))
                    for sub in _paths(block)]
        paths = [(choices + (label,) + sub_choices, steps + [s] + sub_steps)
                 for choices, steps in paths for label, (sub_choices, sub_steps) in branches]
    return paths


def _count(body) -> int:
    n = 1
    for s in body:
        if s.kind == "if":
            n *= _count(s.then) + _count(s.orelse)
            if n > 2 ** MAX_CONDITIONALS:
                return n
    return n


@attrs.define
class _Tensor:
    name: str
    region: str
    offset: int
    size: int
    first: int
    alias_of: str | None = None
    kill: int | None = None
    reads: set = attrs.field(factory=set)
    writes: set = attrs.field(factory=set)


class _Path:
    """The plan of one execution path: its statements in order, read as the module doc says."""

    def __init__(self, sizes: dict[str, int], params: set[str], alignment: int):
        self.sizes, self.params, self.alignment = sizes, params, alignment
        self.values: dict[str, tuple] = {}         # variable -> ("tensor", name) | ("tuple", [values])
        self.bound: dict[str, int] = {}            # variable -> the line binding it on this path
        self.tensors: dict[str, _Tensor] = {}
        self.storages: dict[str, list[int]] = {}   # storage -> allocating steps on this path
        self.unplanned: set[str] = set()
        self.written: set[str] = set()             # family roots written since their allocation
        self.order: list[str] = []
        self.outputs: list[str] = []

    def plan(self, stmts) -> PlanObservation | None:
        for s in stmts:
            self._step(s)
        if not self.tensors:
            return None
        return self._observation()

    def _step(self, s: Stmt) -> None:
        step = len(self.order)
        if s.kind == "decl":
            return
        if s.kind == "bind":
            if s.target in self.bound:
                raise TvmRelaxError(f"line {s.line}: {s.target!r} is bound again (first at line "
                                    f"{self.bound[s.target]}) on one execution path")
            self.bound[s.target] = s.line
            self.order.append(f"{s.line}:{s.target} = {self._bind(s, step)}"[:80])
        elif s.kind == "if":
            self.order.append(f"{s.line}:if {s.expr}"[:80])
            self._touch(s.expr, step)
        elif s.kind == "return":
            self.order.append(f"{s.line}:return")
            self._touch(s.expr, step)
            self.outputs = self._tensors_of(names_in(s.expr))
        else:
            call = call_parts(s.expr)
            self.order.append(f"{s.line}:{call[0] if call else s.expr}"[:80])
            if call and call[0] == "R.memory.kill_tensor":
                for t in self._tensors_of(names_in(s.expr)):
                    self.tensors[t].kill = step if self.tensors[t].kill is None else self.tensors[t].kill
            elif not (call and call[0] == "R.memory.kill_storage"):
                self._touch(s.expr, step)

    def _bind(self, s: Stmt, step: int) -> str:
        """Record binding ``s`` at ``step``; returns what it does, for the step's name."""
        call = call_parts(s.expr)
        op, args = call if call else ("", [])
        if op == "R.memory.alloc_storage":
            self.storages.setdefault(s.target, []).append(step)
            return "alloc_storage"
        if op == "R.memory.alloc_tensor":
            if len(args) < 4 or not re.fullmatch(r"[A-Za-z_]\w*", args[0]):
                raise TvmRelaxError(f"line {s.line}: R.memory.alloc_tensor takes (storage, offset, shape, dtype)")
            self._new(s.target, args[0], constant(args[1], s.line, "the offset"), nbytes(args[2], args[3], s.line),
                      step, s.line)
            return "alloc_tensor"
        if op == "R.builtin.alloc_tensor":
            if len(args) < 2:
                raise TvmRelaxError(f"line {s.line}: R.builtin.alloc_tensor takes (shape, dtype, ...)")
            self._new(s.target, s.target, 0, nbytes(args[0], args[1], s.line), step, s.line)
            self.unplanned.add(s.target)
            return "builtin.alloc_tensor"
        if op in ALIASES and args:
            src = self.values.get(args[0].strip())
            if src is not None and src[0] == "tensor":
                of = self.tensors[src[1]]
                self.tensors[s.target] = _Tensor(s.target, of.region, of.offset, of.size, step, alias_of=of.name)
                self.values[s.target] = ("tensor", s.target)
            return ALIASES[op]
        expr = s.expr.strip()
        if re.fullmatch(r"[A-Za-z_]\w*", expr):
            if expr in self.values:
                self.values[s.target] = self.values[expr]
            return expr
        items = tuple_items(expr)
        if items is not None:
            self.values[s.target] = ("tuple", [self.values.get(i.strip()) for i in items])
            return "tuple"
        m = re.fullmatch(r"([A-Za-z_]\w*)\[(\d+)\]", expr)
        if m and self.values.get(m.group(1), ("",))[0] == "tuple":
            items_of = self.values[m.group(1)][1]
            if int(m.group(2)) < len(items_of) and items_of[int(m.group(2))] is not None:
                self.values[s.target] = items_of[int(m.group(2))]
            return f"{m.group(1)}[{m.group(2)}]"
        self._touch(expr, step)
        return op or "value"

    def _new(self, name: str, region: str, offset: int, size: int, step: int, line: int) -> None:
        if region in self.tensors and region != name:
            raise TvmRelaxError(f"line {line}: {region!r} names a tensor, not a storage")
        if offset + size > MAX_BYTES:
            raise TvmRelaxError(f"line {line}: tensor {name!r} ends past {MAX_BYTES} bytes")
        self.tensors[name] = _Tensor(name, region, offset, size, step)
        self.values[name] = ("tensor", name)

    def _tensors_of(self, names) -> list[str]:
        out: list[str] = []
        todo = [self.values.get(n) for n in names]
        while todo:
            v = todo.pop(0)
            if v is None:
                continue
            if v[0] == "tensor":
                out.append(v[1])
            else:
                todo.extend(v[1])
        return out

    def _root(self, name: str) -> str:
        return alias_root(self.tensors, name)

    def _touch(self, expr: str, step: int) -> None:
        """Every tensor ``expr`` names is used at ``step``: written if its family is unwritten, else read."""
        fresh = set()
        for t in dict.fromkeys(self._tensors_of(names_in(expr))):
            root = self._root(t)
            if root not in self.written or root in fresh:
                self.tensors[t].writes.add(step)
                self.written.add(root)
                fresh.add(root)
            else:
                self.tensors[t].reads.add(step)

    def _observation(self) -> PlanObservation:
        clash = set(self.storages) & self.unplanned
        if clash:
            raise TvmRelaxError(f"{sorted(clash)[0]!r} is both a storage and a tensor")
        regions: dict[str, int] = {}
        arenas: dict[str, Arena] = {}
        allocations: dict[str, tuple[int, ...]] = {}
        tensors = []
        for t in self.tensors.values():
            steps = t.reads | t.writes
            last = t.kill if t.kill is not None else max(steps | {t.first})
            tensors.append(PlacedTensor(t.name, t.region, t.offset, t.size, t.size, t.first, last, None, False,
                                        alias_of=t.alias_of))
            if t.alias_of is not None:
                continue
            if t.region in self.unplanned:
                kind = "user_io" if t.region in self.outputs else "scratch"
                arenas[t.region], regions[t.region] = Arena(kind, self.alignment), t.size
                allocations[t.region] = (t.first,)
            else:
                arenas[t.region] = Arena("activations", self.alignment)
                ends = max((u.offset + u.size for u in self.tensors.values() if u.region == t.region), default=0)
                regions[t.region] = self.sizes.get(t.region, ends)
                if t.region not in self.params:    # a storage the caller passes exists before the first step
                    allocations[t.region] = tuple(self.storages.get(t.region, ()))
        for storage, steps in self.storages.items():
            arenas.setdefault(storage, Arena("activations", self.alignment))
            regions.setdefault(storage, self.sizes[storage])
            allocations.setdefault(storage, tuple(steps))
        return PlanObservation(
            order=tuple(self.order), tensors=tuple(tensors), regions=regions, arenas=arenas,
            graph_outputs=tuple(dict.fromkeys(self.outputs)),
            consumers={t.name: tuple(sorted(t.reads)) for t in self.tensors.values() if t.reads},
            writes={t.name: tuple(sorted(t.writes)) for t in self.tensors.values() if t.writes},
            arena_allocations=allocations, planner="tvm")
