"""The plan of a function's own transient memory: a pack whose slices the function hands from execute
region to execute region.

A function that runs a loop (``scf.for``, as an LSTM's time steps are) packs the resources that live
across its execute regions into one transient allocation and cuts it into slices
(``%3 = stream.resource.subview %result[%2#1]``). This reader follows each slice, as values, through
the function in printed order:

- the steps are the commands of every execute region of the function, a ``stream.cmd.concurrent``
  block counting as one step, a loop body's once (one trip stands for all);
- a tensor per slice (``slice k``), its size from the pack and its offset from the subview after the
  layout pass; an await passes a value on unchanged;
- a loop carries a value it is given (``iter_args(%arg4 = %6#1)``) in place when its body hands the
  same resource back to the next trip (``scf.yield`` of ``%arg4``, through awaits): its result is then
  a tensor of its own, computed in place over the value it was given (``alias_of``), which the body's
  writes write (``in_place``: the bytes they write; a write at an offset that depends on the trip counts
  for the whole tensor). A value the body does not hand back is only read by the body's first trip;
- an execute region reads and writes the tensors it takes (``%6#1 as %arg4``) as the reader of one
  execute does (iree_mlir.py); a tensor a loop body touches lives through the whole body.

Anything else that takes one of these values (a call, a branch, a loop other than ``scf.for``, a
command this reader does not know) is refused naming its line: the plan would miss what it does.
"""
from __future__ import annotations

import collections
import re

from zcspec.checks.foreign.iree_stream_ir import Op, Scope, captures, operands_after, steps
from zcspec.spec.observables.plan import Arena, ByteRange, InPlaceStep, PlacedTensor, PlanObservation

_ITER_ARG = re.compile(r"(%[\w.$-]+) = (%[\w.$-]+(?:#\d+)?)")
# Host ops that take a value of the arena and do nothing to its bytes.
_INERT = ("stream.resource.dealloca", "stream.timepoint.barrier")


def host_plan(fn, pack: Op, sizes: list[int], alloca: Op, alignment: int) -> PlanObservation:
    """The plan of ``pack``'s slices of ``alloca`` across the function ``fn`` (an iree_mlir.Function)."""
    return _Walk(fn, pack, sizes, alloca).plan(alignment)


class _Walk:
    def __init__(self, fn, pack: Op, sizes: list[int], alloca: Op):
        self.fn, self.sizes, self.alloca = fn, sizes, alloca
        self.result = pack.results[0].split("#")[0]
        self.resource = alloca.results[0]
        self.order: list[str] = []
        self.tensors: dict[str, tuple[int, str | None]] = {}     # name -> (slice, alias_of)
        self.offsets: dict[int, int] = {}
        self.reads: dict[str, set[int]] = collections.defaultdict(set)
        self.writes: dict[str, set[int]] = collections.defaultdict(set)
        self.in_place: list[tuple[int, str, int, int]] = []
        self.loops: list[tuple[int, int]] = []
        self.carried: set[str] = set()
        self._region(fn.before.regions[0], collections.ChainMap(), None)

    # -- the walk --------------------------------------------------------------------------------

    def _region(self, ops: list[Op], env: collections.ChainMap, parent: Scope | None) -> None:
        scope = Scope(tuple(ops), parent)
        for op in ops:
            if op.name == "stream.resource.subview" and f" {self.resource}[" in op.text:
                self._subview(op, scope, env)
            elif op.name == "stream.timepoint.await":
                env.update({r: env[v] for r, v in zip(op.results, operands_after(op, " => ")) if v in env})
            elif op.name == "stream.cmd.execute":
                self._execute(op, scope, env)
            elif op.name == "scf.for":
                self._loop(op, scope, env)
            elif op.name not in _INERT and op.name != "scf.yield" and (used := self._takes(op, env)):
                raise self.fn.error(f"{used} ({env[used]!r}) is taken by {op.name}, which this reader does not "
                                    "follow", op.line)

    def _takes(self, op: Op, env) -> str | None:
        """A value of the arena that ``op`` or an op nested in it names, if any."""
        for sub in op.walk():
            for name in re.findall(r"%[\w.$-]+(?:#\d+)?", sub.text.split(" = ", 1)[-1] if sub is op else sub.text):
                if name in env:
                    return name
        return None

    def _subview(self, op: Op, scope: Scope, env) -> None:
        m = re.search(re.escape(self.resource) + r"\[(%[\w.$-]+#(\d+))\]", op.text)
        k = int(m.group(2)) if m and m.group(1).startswith(self.result + "#") else None
        if k is None or not 1 <= k <= len(self.sizes):
            raise self.fn.error(f"a subview of {self.resource} at an offset that is no slice of the pack", op.line)
        twin, twin_scope = self.fn.counterpart(op, "stream.resource.subview")
        at = re.search(r"\[(%[\w.$-]+(?:#\d+)?)\]", twin.text)
        offset = twin_scope.value(at.group(1)) if at else None
        if offset is None:
            raise self.fn.error(f"after the layout pass, slice {k}'s subview has no constant offset", twin.line)
        name = f"slice {k}"
        if name in self.tensors:
            raise self.fn.error(f"slice {k} is cut from {self.resource} twice", op.line)
        self.tensors[name], self.offsets[k] = (k, None), offset
        env[op.results[0]] = name

    def _execute(self, op: Op, scope: Scope, env) -> None:
        taken = {arg: env[v] for v, arg in captures(op) if v in env}
        inner = Scope(tuple(op.regions[0]) if op.regions else (), scope)
        for command, accesses in steps(op):
            step = len(self.order)
            self.order.append(f"{step}:{command.name} (line {command.line})")
            for a in accesses:
                if a.resource not in taken:
                    continue
                name = taken[a.resource]
                if a.mode in ("ro", "rw"):
                    self.reads[name].add(step)
                if a.mode in ("wo", "rw"):
                    self.writes[name].add(step)
                    if name in self.carried:
                        self.in_place.append((step, name, *self._bytes(name, a, inner)))
            for owner, sub in _commands(command):
                if any(re.search(re.escape(arg) + r"\b", sub.text) for arg in taken) and \
                        not any(a.line == sub.line for a in accesses):
                    raise self.fn.error(f"{owner} takes a slice of {self.resource} in a way this reader does not read",
                                        sub.line)

    def _bytes(self, name: str, access, scope: Scope) -> tuple[int, int]:
        """The bytes of the arena an access writes: the whole tensor unless offset and length are constants."""
        k = self.tensors[name][0]
        lo, size = self.offsets[k], self.sizes[k - 1]
        off, length = scope.value(access.offset), scope.value(access.length)
        if off is None or length is None:
            return lo, lo + size
        if not 0 <= off <= off + length <= size:
            raise self.fn.error(f"a command writes bytes [{off}, {off + length}) of {name!r}, a slice of {size} bytes",
                                access.line)
        return lo + off, lo + off + length

    def _loop(self, op: Op, scope: Scope, env) -> None:
        pairs = _ITER_ARG.findall(op.text.split("iter_args(", 1)[-1].split(") ->", 1)[0]) if "iter_args(" in op.text else []
        body = op.regions[0] if op.regions else []
        yields = operands_after(body[-1], "scf.yield ") if body and body[-1].name == "scf.yield" else []
        if len(yields) != len(pairs) or len(op.results) != len(pairs):
            raise self.fn.error("an scf.for whose iter_args, results and yield do not line up", op.line)
        renames = {r: v for sub in body if sub.name == "stream.timepoint.await"
                   for r, v in zip(sub.results, operands_after(sub, " => "))}
        inside, results = collections.ChainMap({}, env), {}
        for (arg, init), result, out in zip(pairs, op.results, yields):
            if init not in env:
                continue
            while out in renames:
                out = renames[out]
            if out == arg:          # handed back: the loop updates what it was given in place
                self.tensors[result] = (self.tensors[env[init]][0], env[init])
                self.carried.add(result)
                inside[arg] = results[result] = result
            else:
                inside[arg] = env[init]
        first = len(self.order)
        self._region(body, inside, scope)
        if len(self.order) > first:
            self.loops.append((first, len(self.order) - 1))
        for (arg, _), result, out in zip(pairs, op.results, yields):
            if out in inside and result not in results:
                raise self.fn.error(f"the loop hands {out} ({inside[out]!r}) out as {result} without having been "
                                    "given it in place", body[-1].line)
        env.update(results)

    # -- the plan ---------------------------------------------------------------------------------

    def plan(self, alignment: int) -> PlanObservation:
        touched = {n: self.reads[n] | self.writes[n] for n in self.tensors}
        for lo, hi in sorted(self.loops, key=lambda span: span[1] - span[0]):
            for steps_ in touched.values():
                if any(lo <= s <= hi for s in steps_):
                    steps_ |= {lo, hi}
        for n, (_, root) in self.tensors.items():      # a root only its in-place results touch lives with them
            if root is not None and not touched[root]:
                touched[root] = {min(touched[n])} if touched[n] else set()
        names = [n for n in self.tensors if touched[n]]
        tensors = tuple(PlacedTensor(name=n, region="transient", offset=self.offsets[self.tensors[n][0]],
                                     size=self.sizes[self.tensors[n][0] - 1], aligned_size=self.sizes[self.tensors[n][0] - 1],
                                     first=min(touched[n]), last=max(touched[n]), block=None, zero_copy=False,
                                     alias_of=self.tensors[n][1]) for n in names)
        size = self.fn.transient_size(self.alloca)
        return PlanObservation(
            order=tuple(self.order) or ("0:empty",), tensors=tensors,
            regions={"transient": max(size or 0, max((t.end for t in tensors), default=0))},
            arenas={"transient": Arena("activations", alignment)},
            consumers={n: tuple(sorted(self.reads[n])) for n in names if self.reads[n]},
            writes={n: tuple(sorted(self.writes[n])) for n in names},
            in_place=tuple(InPlaceStep(step, name, (ByteRange(lo, hi),)) for step, name, lo, hi in self.in_place),
            planner="iree")


def _commands(op: Op, owner: str = ""):
    """(the innermost ``stream.cmd`` op around it, op) for ``op`` and every op nested in it."""
    owner = op.name if op.name.startswith("stream.cmd.") else owner
    yield owner, op
    for region in op.regions:
        for sub in region:
            yield from _commands(sub, owner)
