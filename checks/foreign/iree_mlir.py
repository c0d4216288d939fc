"""IREE's transient memory plan, read from the stream dialect printed around its layout pass.

One ``iree-compile`` run with

    --mlir-print-ir-before=iree-stream-layout-slices --mlir-print-ir-after=iree-stream-layout-slices

prints every function twice. In a function that packs transient memory, *before* the pass a
``stream.resource.pack`` lists the slices (``[start, end] = size``) and the ``stream.cmd.execute``
region names each access by the pack's result (``%2#k``, or ``arith.addi %2#k, %cN`` for a piece of
a slice); *after* it the same region names the same accesses by constant offsets. This reader
(no IREE needed) takes:

- the arena: the transient resource the pack sizes (``stream.resource.alloca`` of
  ``!stream.resource<transient>{%N#0}``), of kind ``activations``;
- a tensor per slice: its size from the pack, its offset from the first access to it after the
  pass (every access must agree), its lifetime from the steps that access it;
- the steps: each top-level command of the execute region, a ``stream.cmd.concurrent`` block
  counting as one step (its commands run together); ``ro`` bindings and a copy's source are
  reads, ``wo`` and ``rw`` bindings, fills and a copy's target are writes (``rw`` is both).

Not read: the pack's own ``[start, end]`` intervals (the planner's lifetimes, not the program's),
external resources (the caller's buffers, not packed), and functions with more than one pack.
"""
from __future__ import annotations

import os
import re

from zcspec.checks.errors import UsageError
from zcspec.checks.foreign.artefact_file import read_text
from zcspec.spec.observables.plan import Arena, PlacedTensor, PlanObservation

MAX_FILE_BYTES = 512 << 20
_HEADER = re.compile(r"^// -----// IR Dump (Before|After) \S+: iree-stream-layout-slices //----- //")
_CONSTANT = re.compile(r"^\s*(%[\w.$-]+) = arith\.constant (-?\d+) : index")
_ADDI = re.compile(r"^\s*(%[\w.$-]+) = arith\.addi (%[\w.#$-]+), (%[\w.#$-]+) : index")
_PACK = re.compile(r"^\s*(%[\w.$-]+):(\d+) = stream\.resource\.pack\b")
_SLICE = re.compile(r"^\s*\[(\d+), (\d+)\] = (%[\w.$-]+),?\s*$")
_ALLOCA = re.compile(r"^\s*(%[\w.$-]+), %[\w.$-]+ = stream\.resource\.alloca .*!stream\.resource<transient>\{(%[\w.#$-]+)\}")
_BINDING = re.compile(r"\b(ro|wo|rw) (%[\w.$-]+)\[(%[\w.#$-]+) for (%[\w.#$-]+)\]")
_FILL = re.compile(r"stream\.cmd\.fill [^,]+, (%[\w.$-]+)\[(%[\w.#$-]+) for (%[\w.#$-]+)\]")
_COPY = re.compile(r"stream\.cmd\.copy (%[\w.$-]+)\[(%[\w.#$-]+)\], (%[\w.$-]+)\[(%[\w.#$-]+)\], (%[\w.#$-]+)")


class IreeDumpError(UsageError):
    """A dump this reader cannot take; the message names the file and what is wrong."""


def _sections(text: str) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m:
            out.append((m.group(1), []))
        elif out:
            out[-1][1].append(line)
    return out


def read_iree_dump(path: str | os.PathLike, *, alignment: int = 1) -> list[tuple[str, PlanObservation]]:
    """(function name, plan) of every function of ``path`` that packs transient memory."""
    path = str(path)
    text = read_text(path, MAX_FILE_BYTES, IreeDumpError)
    sections = _sections(text)
    # The pass runs on functions in parallel, so the dumps interleave: the k-th dump of a function
    # before the pass pairs with its k-th dump after it.
    before: dict[tuple[str, int], list[str]] = {}
    after: dict[tuple[str, int], list[str]] = {}
    seen: dict[tuple[str, str], int] = {}
    for kind, lines in sections:
        head = next((line for line in lines if line.strip()), "")
        k = seen[(kind, head)] = seen.get((kind, head), -1) + 1
        (before if kind == "Before" else after)[(head, k)] = lines
    if not before or set(before) != set(after):
        raise IreeDumpError(f"holds {len(before)} dump(s) before and {len(after)} after the layout pass that do not "
                            "pair up; print both with --mlir-print-ir-before=iree-stream-layout-slices "
                            "--mlir-print-ir-after=iree-stream-layout-slices", file=path)
    pairs = [(before[key], after[key]) for key in before]
    out = []
    for b, a in pairs:
        if any(_PACK.match(line) for line in b) and any(_ALLOCA.match(line) for line in b):
            out.extend(_Function(b, a, path).plans(alignment))   # packs of constants (initializers) are not read
    if not out:
        raise IreeDumpError("has no function that packs transient memory (a stream.resource.pack sizing a "
                            "transient alloca)", file=path)
    return out


class _Function:
    def __init__(self, before: list[str], after: list[str], path: str):
        self.before, self.after, self.path = before, after, path
        self.name = next((m.group(1) for line in before if (m := re.match(r"^util\.func \w+ @([\w.$-]+)", line))), "?")

    def _error(self, why: str) -> IreeDumpError:
        return IreeDumpError(f"function @{self.name}: {why}", file=self.path)

    def _packs(self) -> list[tuple[str, list[int]]]:
        """(result name, slice sizes) of every pack, in order."""
        consts = _constants(self.before)
        out = []
        for i, line in enumerate(self.before):
            m = _PACK.match(line)
            if m is None:
                continue
            sizes = []
            for slice_line in self.before[i + 1:]:
                sm = _SLICE.match(slice_line)
                if sm is None:
                    break
                if sm.group(3) not in consts:
                    raise self._error(f"slice [{sm.group(1)}, {sm.group(2)}] has size {sm.group(3)}, not a constant")
                sizes.append(consts[sm.group(3)])
            out.append((m.group(1), sizes))
        return out

    def plans(self, alignment: int) -> list[tuple[str, PlanObservation]]:
        """One plan per pack that sizes a transient alloca (packs of constants are not read)."""
        transients = [(m.group(1), m.group(2)) for line in self.before if (m := _ALLOCA.match(line))]
        sized = {size: (j, resource) for j, (resource, size) in enumerate(transients)}
        chosen = [(result, sizes) for result, sizes in self._packs() if f"{result}#0" in sized and sizes]
        out = []
        for k, (result, sizes) in enumerate(chosen):
            j, resource = sized[f"{result}#0"]
            name = self.name if len(chosen) == 1 else f"{self.name}#{k}"
            out.append((name, self._plan(result, sizes, j, resource, alignment)))
        return out

    def _plan(self, result: str, sizes: list[int], j: int, resource: str, alignment: int) -> PlanObservation:
        region = _execute_of(self.before, resource)
        if region is None:
            raise self._error(f"no stream.cmd.execute uses the transient resource {resource}")
        index, arg = region
        steps_before = _steps(self.before, index, arg)
        steps_after = _steps(self.after, index, None)
        if len(steps_before) != len(steps_after):
            raise self._error("the execute region's commands differ before and after the layout pass")
        steps_after = [[x for x, y in zip(after, _steps(self.before, index, None)[s]) if y[0] == arg]
                       for s, after in enumerate(steps_after)]
        if any(len(x) != len(y) for x, y in zip(steps_before, steps_after)):
            raise self._error("the execute region's accesses differ before and after the layout pass")
        derived = _derived(self.before, result)
        consts_after = _constants(self.after)
        offsets: dict[int, int] = {}
        touched: dict[int, set[int]] = {}
        reads: dict[int, set[int]] = {}
        writes: dict[int, set[int]] = {}
        for step, (accesses, later) in enumerate(zip(steps_before, steps_after)):
            for (_, expr, mode), (_, expr_after, _) in zip(accesses, later):
                slot = derived.get(expr)
                if slot is None:
                    continue            # an access at an offset the pack does not give (a whole-resource one)
                k, delta = slot
                if not 1 <= k <= len(sizes):
                    raise self._error(f"an access names pack result #{k}; the pack has {len(sizes)} slices")
                value = _evaluate(expr_after, consts_after, self.after)
                if value is None:
                    raise self._error(f"after the layout pass, the access to slice {k} at step {step} has offset "
                                      f"{expr_after}, not a constant")
                offset = value - delta
                if offsets.setdefault(k, offset) != offset:
                    raise self._error(f"slice {k} is accessed at offset {offsets[k]} and at {offset}")
                touched.setdefault(k, set()).add(step)
                if mode in ("ro", "rw"):
                    reads.setdefault(k, set()).add(step)
                if mode in ("wo", "rw"):
                    writes.setdefault(k, set()).add(step)
        sizes_after = _transient_sizes(self.after)
        total_value = _evaluate(sizes_after[j], consts_after, self.after) if j < len(sizes_after) else None
        tensors = tuple(PlacedTensor(name=f"slice {k}", region="transient", offset=offsets[k], size=sizes[k - 1],
                                     aligned_size=sizes[k - 1], first=min(touched[k]), last=max(touched[k]),
                                     block=None, zero_copy=False) for k in sorted(touched))
        n = max(len(steps_before), 1)
        return PlanObservation(
            order=tuple(f"{s}:{_label(steps_before[s]) if s < len(steps_before) else 'empty'}" for s in range(n)),
            tensors=tensors,
            regions={"transient": max(total_value or 0, max((t.end for t in tensors), default=0))},
            arenas={"transient": Arena("activations", alignment)},
            consumers={f"slice {k}": tuple(sorted(v)) for k, v in reads.items()},
            writes={f"slice {k}": tuple(sorted(v)) for k, v in writes.items()})


def _constants(lines) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for line in lines if (m := _CONSTANT.match(line))}


def _derived(lines, result: str) -> dict[str, tuple[int, int]]:
    """Offset expression -> (slice, bytes into it): ``%2#k`` itself, and ``arith.addi`` of one with a constant."""
    consts = _constants(lines)
    out: dict[str, tuple[int, int]] = {}
    pattern = re.compile(re.escape(result) + r"#(\d+)")
    for line in lines:
        for m in pattern.finditer(line):
            out.setdefault(m.group(0), (int(m.group(1)), 0))
    for line in lines:
        m = _ADDI.match(line)
        if m:
            a, b = m.group(2), m.group(3)
            if a in out and b in consts:
                out[m.group(1)] = (out[a][0], out[a][1] + consts[b])
            elif b in out and a in consts:
                out[m.group(1)] = (out[b][0], out[b][1] + consts[a])
    return out


def _evaluate(expr: str | None, consts: dict[str, int], lines) -> int | None:
    if expr is None:
        return None
    if expr in consts:
        return consts[expr]
    for line in lines:
        m = _ADDI.match(line)
        if m and m.group(1) == expr:
            a, b = _evaluate(m.group(2), consts, lines), _evaluate(m.group(3), consts, lines)
            return None if a is None or b is None else a + b
    return None


def _transient_sizes(lines) -> list[str]:
    """The size expressions of the transient allocas, in order."""
    return [m.group(2) for line in lines if (m := _ALLOCA.match(line))]


def _execute_of(lines, resource: str) -> tuple[int, str] | None:
    """(ordinal among the function's execute ops, argument name) of the execute region that takes ``resource``."""
    k = -1
    for line in lines:
        if "stream.cmd.execute" in line:
            k += 1
            m = re.search(re.escape(resource) + r" as (%[\w.$-]+):", line)
            if m:
                return k, m.group(1)
    return None


def _steps(lines, index: int, arg: str | None) -> list[list[tuple[str, str, str]]]:
    """The steps of the function's ``index``-th execute region, each a list of (resource argument, offset
    expression, mode) (only those on ``arg`` when given): a top-level command, or a
    ``stream.cmd.concurrent`` block with all its commands."""
    starts = [i for i, line in enumerate(lines) if "stream.cmd.execute" in line]
    if index >= len(starts):
        return []
    steps: list[list] = []
    depth = 0
    for line in lines[starts[index] + 1:]:
        stripped = line.strip()
        if depth == 0 and stripped.startswith("}"):
            break
        if depth == 0 and stripped.startswith("stream.cmd."):
            steps.append([])
        accesses = [(m.group(2), m.group(3), m.group(1)) for m in _BINDING.finditer(line)]
        if m := _FILL.search(line):
            accesses.append((m.group(1), m.group(2), "wo"))
        if m := _COPY.search(line):
            accesses += [(m.group(1), m.group(2), "ro"), (m.group(3), m.group(4), "wo")]
        if steps:
            steps[-1].extend(a for a in accesses if arg is None or a[0] == arg)
        depth += line.count("{") - line.count("}")
    return steps


def _label(accesses) -> str:
    return f"{len(accesses)} accesses"
