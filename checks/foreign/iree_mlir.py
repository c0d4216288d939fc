"""IREE's transient memory plan, read from the stream dialect printed around its layout pass.

One ``iree-compile`` run with

    --mlir-print-ir-before=iree-stream-layout-slices --mlir-print-ir-after=iree-stream-layout-slices

prints every function twice. In a function that packs transient memory, *before* the pass a
``stream.resource.pack`` lists the slices (``[start, end] = size``) and the commands name each access
by the pack's result (``%2#k``, or ``arith.addi %2#k, %cN`` for a piece of a slice); *after* it the same
commands name the same accesses by constant offsets. This reader (no IREE needed) reads each pack
whose result sizes a ``stream.resource.alloca`` of ``!stream.resource<transient>`` as one plan, its
arena of kind ``activations``:

- a pack whose resource one ``stream.cmd.execute`` of the same region takes (``%result as %arg``):
  a tensor per slice the region accesses, its size from the pack, its offset from the accesses after
  the pass (every access must agree), its lifetime from the steps that access it; the steps are the
  region's top-level commands, a ``stream.cmd.concurrent`` block counting as one step (its commands
  run together); ``ro`` bindings and a copy's source are reads, ``wo`` and ``rw`` bindings, fills and a
  copy's target are writes (``rw`` is both);
- a pack of the function's body whose resource is cut into slices (``stream.resource.subview``) that
  the function hands from execute region to execute region, through awaits and ``scf.for`` loops:
  the plan of the whole function (iree_host.py).

Every tensor is listed in ``writes``, with no step when nothing writes it, so a read of a slice no
command wrote is a fact of the plan (LAYOUT-READS-SEE-WRITES). Not read: the pack's own ``[start,
end]`` intervals (the planner's lifetimes, not the program's), external resources (the caller's
buffers, not packed), packs of constants (initializers), and a pack inside a loop body whose slices
leave the execute region (a fresh allocation each trip).
"""
from __future__ import annotations

import os
import re

from zcspec.checks.foreign.artefact_file import read_text
from zcspec.checks.foreign.iree_host import host_plan
from zcspec.checks.foreign.iree_stream_ir import IreeDumpError, Op, Scope, captures, parse_function, scoped, steps
from zcspec.spec.observables.plan import Arena, PlacedTensor, PlanObservation

__all__ = ["IreeDumpError", "read_iree_dump"]

MAX_FILE_BYTES = 512 << 20
# MLIR prints "Pass: name" (newer) or "Pass (name)" (IREE 3.0 to 3.5).
_HEADER = re.compile(r"^// -----// IR Dump (Before|After) \S+(?:: iree-stream-layout-slices| \(iree-stream-layout-slices\)) "
                     r"//----- //")
_PACK = re.compile(r"^(%[\w.$-]+):\d+ = stream\.resource\.pack\b")
_SLICE = re.compile(r"^\[(\d+), (\d+)\] = (%[\w.$-]+),?$")
_ALLOCA = re.compile(r"^(%[\w.$-]+), %[\w.$-]+ = stream\.resource\.alloca .*!stream\.resource<transient>\{(%[\w.#$-]+)\}")


def _sections(text: str) -> list[tuple[str, int, list[str]]]:
    """(Before or After, the file's line number of the section's first line, its lines)."""
    out: list[tuple[str, int, list[str]]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        m = _HEADER.match(line)
        if m:
            out.append((m.group(1), n + 1, []))
        elif out:
            out[-1][2].append(line)
    return out


def read_iree_dump(path: str | os.PathLike, *, alignment: int = 1) -> list[tuple[str, PlanObservation]]:
    """(function name, plan) of every pack of transient memory in ``path`` that this reader reads."""
    path = str(path)
    sections = _sections(read_text(path, MAX_FILE_BYTES, IreeDumpError))
    # The pass runs on functions in parallel, so the dumps interleave: the k-th dump of a function
    # before the pass pairs with its k-th dump after it.
    before: dict[tuple[str, int], tuple[int, list[str]]] = {}
    after: dict[tuple[str, int], tuple[int, list[str]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for kind, first, lines in sections:
        head = next((line for line in lines if line.strip()), "")
        k = seen[(kind, head)] = seen.get((kind, head), -1) + 1
        (before if kind == "Before" else after)[(head, k)] = (first, lines)
    if not before or set(before) != set(after):
        raise IreeDumpError(f"holds {len(before)} dump(s) before and {len(after)} after the layout pass that do not "
                            "pair up; print both with --mlir-print-ir-before=iree-stream-layout-slices "
                            "--mlir-print-ir-after=iree-stream-layout-slices", file=path)
    out = []
    for key, (first, lines) in before.items():
        if any(_PACK.match(line.strip()) for line in lines) and any(_ALLOCA.match(line.strip()) for line in lines):
            first_after, lines_after = after[key]
            fn = Function(parse_function(lines, first, path), parse_function(lines_after, first_after, path), path)
            out.extend(fn.plans(alignment))
    if not out:
        raise IreeDumpError("has no function that packs transient memory (a stream.resource.pack sizing a "
                            "transient alloca)", file=path)
    return out


class Function:
    """One function's dumps before and after the layout pass, paired op for op by their printed order
    (the pass replaces each pack by constants and leaves every other op where it was)."""

    def __init__(self, before: Op, after: Op, path: str):
        self.before, self.after, self.path = before, after, path
        self.name = m.group(1) if (m := re.match(r"^util\.func \w+ @([\w.$-]+)", before.text)) else "?"
        self._ops_before = list(scoped(before.regions[0]))
        self._ops_after = list(scoped(after.regions[0]))

    def error(self, why: str, line: int | None = None) -> IreeDumpError:
        where = f"line {line}: " if line else ""
        return IreeDumpError(f"{where}function @{self.name}: {why}", file=self.path)

    def counterpart(self, op: Op, kind: str) -> tuple[Op, Scope]:
        """The op after the pass that is ``op`` before it: the same ordinal among the ops of ``kind``."""
        mine = [o for o, _ in self._ops_before if o.name == kind]
        theirs = [(o, s) for o, s in self._ops_after if o.name == kind]
        if len(mine) != len(theirs):
            raise self.error(f"has {len(mine)} {kind} op(s) before the layout pass and {len(theirs)} after it", op.line)
        return theirs[mine.index(op)]

    def transient_size(self, alloca: Op) -> int | None:
        """The size the alloca gets after the pass, when it is a constant."""
        twin, scope = self.counterpart(alloca, "stream.resource.alloca")
        m = _ALLOCA.match(twin.text)
        return scope.value(m.group(2)) if m else None

    def packs(self) -> list[tuple[Op, Scope, list[int]]]:
        """(pack op, its scope, slice sizes) of every pack, in printed order."""
        out = []
        for op, scope in self._ops_before:
            if not _PACK.match(op.text):
                continue
            sizes = []
            for line in (op.regions[0] if op.regions else []):
                m = _SLICE.match(line.text)
                if m is None:
                    raise self.error(f"the pack's slice {line.text!r} is not '[start, end] = size'", line.line)
                if (size := scope.value(m.group(3))) is None:
                    raise self.error(f"slice [{m.group(1)}, {m.group(2)}] has size {m.group(3)}, not a constant", line.line)
                sizes.append(size)
            out.append((op, scope, sizes))
        return out

    def plans(self, alignment: int) -> list[tuple[str, PlanObservation]]:
        """One plan per pack that sizes a transient alloca (packs of constants are not read)."""
        out = []
        for pack, scope, sizes in self.packs():
            result = _PACK.match(pack.text).group(1)
            alloca = next((op for op in scope.ops if (m := _ALLOCA.match(op.text)) and m.group(2) == f"{result}#0"), None)
            if alloca is None or not sizes:
                continue
            resource = _ALLOCA.match(alloca.text).group(1)
            execute = next((op for op in scope.ops if op.name == "stream.cmd.execute"
                            and any(v == resource for v, _ in captures(op))), None)
            cut = any(op.name == "stream.resource.subview" and f" {resource}[" in op.text for op in scope.ops)
            if execute is not None:
                out.append(self._plan(pack, scope, sizes, alloca, execute, alignment))
            elif cut and scope.parent is None:
                out.append(host_plan(self, pack, sizes, alloca, alignment))
            elif not cut:
                raise self.error(f"no stream.cmd.execute uses the transient resource {resource}", alloca.line)
            # else: a pack of a loop body cut into slices that leave it: a fresh allocation each trip, not read
        return [(self.name if len(out) == 1 else f"{self.name}#{k}", plan) for k, plan in enumerate(out)]

    def _plan(self, pack: Op, scope: Scope, sizes: list[int], alloca: Op, execute: Op,
              alignment: int) -> PlanObservation:
        result = _PACK.match(pack.text).group(1)
        arg = next(a for v, a in captures(execute) if v == _ALLOCA.match(alloca.text).group(1))
        twin, twin_scope = self.counterpart(execute, "stream.cmd.execute")
        mine, theirs = steps(execute), steps(twin)
        if len(mine) != len(theirs) or any(len(a) != len(b) for (_, a), (_, b) in zip(mine, theirs)):
            raise self.error("the execute region's commands differ before and after the layout pass", execute.line)
        inner, inner_after = _body_scope(execute, scope), _body_scope(twin, twin_scope)
        offsets: dict[int, int] = {}
        touched: dict[int, set[int]] = {}
        reads: dict[int, set[int]] = {}
        writes: dict[int, set[int]] = {}
        for step, ((_, accesses), (_, later)) in enumerate(zip(mine, theirs)):
            for access, access_after in zip(accesses, later):
                if access.resource != arg:
                    continue
                base, delta = inner.sum_of(access.offset)
                k = _slice_of(base, result)
                if k is None:
                    continue            # an access at an offset the pack does not give (a whole-resource one)
                if not 1 <= k <= len(sizes):
                    raise self.error(f"an access names pack result #{k}; the pack has {len(sizes)} slices", access.line)
                value = inner_after.value(access_after.offset)
                if value is None:
                    raise self.error(f"after the layout pass, the access to slice {k} at step {step} has offset "
                                     f"{access_after.offset}, not a constant", access_after.line)
                offset = value - delta
                if offsets.setdefault(k, offset) != offset:
                    raise self.error(f"slice {k} is accessed at offset {offsets[k]} and at {offset}", access_after.line)
                touched.setdefault(k, set()).add(step)
                if access.mode in ("ro", "rw"):
                    reads.setdefault(k, set()).add(step)
                if access.mode in ("wo", "rw"):
                    writes.setdefault(k, set()).add(step)
        tensors = tuple(PlacedTensor(name=f"slice {k}", region="transient", offset=offsets[k], size=sizes[k - 1],
                                     aligned_size=sizes[k - 1], first=min(touched[k]), last=max(touched[k]),
                                     block=None, zero_copy=False) for k in sorted(touched))
        n = max(len(mine), 1)
        return PlanObservation(
            order=tuple(f"{s}:{sum(a.resource == arg for a in mine[s][1])} accesses" if s < len(mine) else f"{s}:empty"
                        for s in range(n)),
            tensors=tensors,
            regions={"transient": max(self.transient_size(alloca) or 0, max((t.end for t in tensors), default=0))},
            arenas={"transient": Arena("activations", alignment)},
            consumers={f"slice {k}": tuple(sorted(v)) for k, v in reads.items()},
            writes={f"slice {k}": tuple(sorted(writes.get(k, ()))) for k in sorted(touched)}, planner="iree")


def _body_scope(execute: Op, scope: Scope) -> Scope:
    """The scope of an execute region's commands."""
    return Scope(tuple(execute.regions[0]) if execute.regions else (), scope)


def _slice_of(value: str, result: str) -> int | None:
    """k when ``value`` is ``{result}#k``, the pack's k-th result (slice k; #0 is the total size)."""
    m = re.fullmatch(re.escape(result) + r"#(\d+)", value)
    return int(m.group(1)) if m else None
