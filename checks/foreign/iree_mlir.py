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
_EXECUTE_ARG = re.compile(r"(%[\w.$-]+) as (%[\w.$-]+):")
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
            out.append(_Function(b, a, path).plan(alignment))   # packs of constants (initializers) are not read
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

    def _slices(self) -> tuple[str, list[int]]:
        consts = _constants(self.before)
        packs = [i for i, line in enumerate(self.before) if _PACK.match(line)]
        if len(packs) != 1:
            raise self._error(f"{len(packs)} stream.resource.pack ops; one is read")
        i = packs[0]
        result = _PACK.match(self.before[i]).group(1)
        sizes = []
        for line in self.before[i + 1:]:
            m = _SLICE.match(line)
            if m is None:
                break
            if m.group(3) not in consts:
                raise self._error(f"slice [{m.group(1)}, {m.group(2)}] has size {m.group(3)}, not a constant")
            sizes.append(consts[m.group(3)])
        if not sizes:
            raise self._error("the pack lists no slice")
        return result, sizes

    def plan(self, alignment: int) -> tuple[str, PlanObservation]:
        result, sizes = self._slices()
        total = f"{result}#0"
        transient = next((m.group(1) for line in self.before if (m := _ALLOCA.match(line)) and m.group(2) == total), None)
        if transient is None:
            raise self._error(f"no transient alloca of the pack's size {total}")
        steps_before = _steps(self.before, transient)
        steps_after = _steps(self.after, None)
        if len(steps_before) != len(steps_after) or any(len(x) != len(y) for x, y in zip(steps_before, steps_after)):
            raise self._error("the execute region's commands differ before and after the layout pass")
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
                    continue            # not the packed resource
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
        total_value = _evaluate(_alloca_size(self.after), consts_after, self.after) or 0
        tensors = tuple(PlacedTensor(name=f"slice {k}", region="transient", offset=offsets[k], size=sizes[k - 1],
                                     aligned_size=sizes[k - 1], first=min(touched[k]), last=max(touched[k]),
                                     block=None, zero_copy=False) for k in sorted(touched))
        n = len(steps_before)
        return self.name, PlanObservation(
            order=tuple(f"{s}:{_label(steps_before[s])}" for s in range(n)), tensors=tensors,
            regions={"transient": max(total_value, max((t.end for t in tensors), default=0))},
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


def _alloca_size(lines) -> str | None:
    for line in lines:
        m = re.match(r"^\s*%[\w.$-]+, %[\w.$-]+ = stream\.resource\.alloca .*!stream\.resource<transient>\{(%[\w.#$-]+)\}",
                     line)
        if m:
            return m.group(1)
    return None


def _steps(lines, transient: str | None) -> list[list[tuple[str, str, str]]]:
    """The execute region's steps, each a list of (resource argument, offset expression, mode): a
    top-level command, or a ``stream.cmd.concurrent`` block with all its commands."""
    start = next((i for i, line in enumerate(lines) if "stream.cmd.execute" in line), None)
    if start is None:
        return []
    steps: list[list] = []
    depth = 0
    for line in lines[start + 1:]:
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
        if accesses and steps:
            steps[-1].extend(accesses)
        depth += line.count("{") - line.count("}")
    return steps


def _label(accesses) -> str:
    return f"{len(accesses)} accesses"
