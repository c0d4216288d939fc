"""XLA's buffer assignment, read from the text files of ``--xla_dump_to`` (no jax or XLA needed).

With ``XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text`` every compiled module leaves, after
its optimisations, three files this reader transcribes:

- ``*-buffer-assignment.txt``: the allocations (size; ``parameter N``, ``maybe-live-out``,
  ``constant``, ``thread-local``, ``preallocated-temp``) and in each the values it holds, with their
  offset and size (``value: <ID NAME @COLOR> (size=S,offset=O): SHAPE``);
- ``*-live-range.txt``: the schedule (``InstructionSequence``, one step per instruction, nested
  computations flattened) and each value's live range ``NAME{INDEX}:START-END`` in those steps,
  where END equal to the ``max`` in the header means live out;
- ``*-buffer-assignment-values.txt``: each value's uses (``INSTRUCTION, operand K``) and the
  instruction that defines it;
- the module itself (``*.txt``, the HLO text): each instruction's opcode.

Older releases (jaxlib 0.4.36 to 0.7.2; 0.10.2 writes the files above) print the values and the
live ranges as sections of the buffer-assignment file (``Used values:``, ``HloLiveRange (max N):``),
read the same way; jaxlib 0.4.36 prints the HLO text without ``%`` before names
(checks/foreign/xla_hlo.py reads both spellings).

The plan: one arena per allocation (``allocation N``), with a kind from its attributes (a parameter
or a live-out allocation holds the caller's buffers, ``user_io``; a constant ``constants``; a temp
``activations``); a tensor per value with its bytes and live range; reads at the steps of its uses
(but for a loop, a conditional or a call, which hand their operands to the called computation's
parameters); a write at the step of its defining instruction. XLA shares an operand's buffer with an output it
computes in place (a loop fusion, a dynamic-update-slice, a donated parameter): the output is then
recorded as an alias of the operand when the two share bytes and the output's instruction reads the
operand; any other sharing stays two tensors, for LAYOUT-NO-OVERLAP to judge. The graph's inputs are
the ENTRY computation's parameters (not a loop's parameter that XLA puts in a dead input's
allocation), its outputs the values live out of a live-out allocation. Thread-local values
(the scalars of a reduction's computation, kept on a thread's stack) are in no schedule and are left
out. XLA's CPU backend aligns every intermediate buffer to 64 bytes (``xla::cpu::Align()``, the spec's
planner table), so each arena declares that alignment; ``alignment=`` overrides it.

For an output a loop fusion computes in place (a dynamic-update-slice over its operand), the bytes
it writes and the slices of the shared buffer it reads are taken from the fusion's computation in
the HLO text (checks/foreign/xla_hlo.py) into ``in_place``: a fusion that reads a shifted slice of
the buffer it updates (openxla/xla#49176) shows there. What is not visible: reads the HLO gives no
constant bytes for (a dynamic slice at a run-time index, a gather), and any other in-place op.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import attrs

from zcspec.checks.errors import UsageError
from zcspec.checks.foreign.artefact_file import read_text
from zcspec.checks.foreign import xla_hlo
from zcspec.spec.capabilities import PLANNERS
from zcspec.spec.observables.plan import Arena, ByteCopy, ByteRange, InPlaceStep, PlacedTensor, PlanObservation

CPU_ALIGNMENT = PLANNERS["xla"].alignment   # xla/backends/cpu/alignment.h xla::cpu::Align()
SUFFIXES = ("-buffer-assignment.txt", "-live-range.txt", "-buffer-assignment-values.txt", ".txt")
MAX_FILE_BYTES = 256 << 20   # a dump file larger than this is refused, not read

_ALLOCATION = re.compile(r"^allocation (\d+): size (\d+)(.*):\s*$")
_VALUE = re.compile(r"^ value: <(\d+) (\S+?)(\{[\d,]*\})?(?: \(phi\))? @(\d+)> \(size=(\d+),offset=(\d+)\): (.*)$")
_STEP = re.compile(r"^\s+(\d+):(\S+)\s*$")
_RANGE = re.compile(r"^\s+(\S+?)(\{[\d,]*\}):(\d+)-(\d+)\s*$")
_VALUE_HEAD = re.compile(r"^<(\d+) (\S+?)(\{[\d,]*\})?(?: \(phi\))? @\d+>\s*$")
_USE = re.compile(r"^  (\S+), operand \d+(?: \{[\d,]*\})?\s*$")
_VALUES_HEAD = re.compile(r"^Used values:\s*$", re.M)
_LIVE_RANGE_HEAD = re.compile(r"^HloLiveRange \(max (\d+)\):", re.M)


class XlaDumpError(UsageError):
    """A dump that cannot be read: a missing file, a line of an unknown form, a value without a
    live range. The message names the file and line."""


@attrs.frozen
class XlaModule:
    """One compiled module of a dump: its name and the three files read."""

    name: str
    files: tuple[Path, Path, Path, Path]


def find_modules(path: str | os.PathLike, module: str | None = None) -> list[XlaModule]:
    """The modules of the dump folder ``path`` (or the one module a file of it names), in name order;
    ``module`` keeps those whose name contains it."""
    p = Path(path)
    if not p.exists():
        raise XlaDumpError("no such file or folder", file=str(p))
    if p.is_file():
        name = _module_name(p.name)
        if name is None:
            raise XlaDumpError(f"not a buffer-assignment file of an XLA dump (expected a name ending in "
                               f"{SUFFIXES[0]!r})", file=str(p))
        folder, names = p.parent, [name]
    else:
        folder = p
        names = sorted({n for f in p.iterdir() if (n := _module_name(f.name)) is not None})
    if module is not None:
        names = [n for n in names if module in n]
    out = []
    for n in names:
        out.append(XlaModule(n, _files(folder, n)))
    if not out:
        what = f"no module whose name contains {module!r}" if module else "no module"
        raise XlaDumpError(f"{what} with a buffer assignment (files *{SUFFIXES[0]}); dump with "
                           "XLA_FLAGS='--xla_dump_to=DIR --xla_dump_hlo_as_text'", file=str(p))
    return out


def _files(folder: Path, name: str) -> tuple[Path, Path, Path, Path]:
    """The four files of module ``name``. Older releases print the values and the live ranges into
    the buffer-assignment file, after its allocations: a missing values or live-range file is then
    that file, when it holds the section."""
    files = [folder / f"{name}{s}" for s in SUFFIXES]
    combined = None
    for k, head in ((1, _LIVE_RANGE_HEAD), (2, _VALUES_HEAD)):
        if files[k].is_file() or not files[0].is_file():
            continue
        if combined is None:
            combined = read_text(files[0], MAX_FILE_BYTES, XlaDumpError)
        if head.search(combined):
            files[k] = files[0]
    missing = [f.name for f in files if not f.is_file()]
    if missing:
        raise XlaDumpError(f"module {name!r} lacks {missing}: dump with --xla_dump_hlo_as_text", file=str(folder))
    return tuple(files)


def _module_name(filename: str) -> str | None:
    if not filename.endswith(SUFFIXES[0]):
        return None
    return filename[: -len(SUFFIXES[0])]


def _lines(path: Path) -> list[str]:
    return read_text(path, MAX_FILE_BYTES, XlaDumpError).splitlines()


@attrs.frozen
class _Value:
    key: str          # NAME{INDEX}, as the live ranges name it
    allocation: int
    offset: int
    size: int


def _section(path: Path, head: re.Pattern | None, stop: re.Pattern | None) -> tuple[list[str], int]:
    """The lines of ``path`` from the first that ``head`` matches (the first line when None) up to the
    first after it that ``stop`` matches, and the number of the first line: the sections of a
    buffer-assignment file that holds them all (see :func:`_files`)."""
    lines = _lines(path)
    start = 0 if head is None else next((i for i, line in enumerate(lines) if head.match(line)), len(lines))
    end = next((i for i in range(start + 1, len(lines)) if stop is not None and stop.match(lines[i])), len(lines))
    return lines[start:end], start + 1


def _allocations(path: Path) -> tuple[dict[int, tuple[int, str]], list[_Value]]:
    allocations: dict[int, tuple[int, str]] = {}
    values: list[_Value] = []
    current = None
    lines, first = _section(path, None, re.compile(rf"{_VALUES_HEAD.pattern}|{_LIVE_RANGE_HEAD.pattern}"))
    for i, line in enumerate(lines, first):
        if m := _ALLOCATION.match(line):
            current = int(m.group(1))
            allocations[current] = (int(m.group(2)), m.group(3))
        elif line.startswith(" value:"):
            m = _VALUE.match(line)
            if m is None or current is None:
                raise XlaDumpError(f"line {i}: a value line of an unknown form: {line.strip()[:120]!r}", file=str(path))
            key = m.group(2) + (m.group(3) or "{}")
            values.append(_Value(key, current, int(m.group(6)), int(m.group(5))))
    if not allocations:
        raise XlaDumpError("holds no allocation (expected lines 'allocation N: size S, ...:')", file=str(path))
    return allocations, values


def _live_ranges(path: Path, combined: bool) -> tuple[list[str], dict[str, tuple[int, int]], int]:
    """The schedule and the live ranges: the whole live-range file, or the section of a combined
    buffer-assignment file that starts at its ``HloLiveRange`` line."""
    lines, first = _section(path, _LIVE_RANGE_HEAD if combined else None, None)
    head = _LIVE_RANGE_HEAD.match(lines[0] if lines else "")
    if head is None:
        where = f"line {first}" if lines else "no line"
        raise XlaDumpError(f"{where}: expected 'HloLiveRange (max N):'", file=str(path))
    end = int(head.group(1))
    order: list[str] = []
    ranges: dict[str, tuple[int, int]] = {}
    section = ""
    for i, line in enumerate(lines[1:], first + 1):
        stripped = line.strip()
        if stripped in ("InstructionSequence:", "BufferLiveRange:"):
            section = stripped
        elif not line.startswith("    "):
            section = ""      # the peak and stack-trace report that follows
        elif section == "InstructionSequence:":
            m = _STEP.match(line)
            if m is None or int(m.group(1)) != len(order):
                raise XlaDumpError(f"line {i}: expected step {len(order)} of the instruction sequence, got "
                                   f"{stripped[:80]!r}", file=str(path))
            order.append(m.group(2))
        elif section == "BufferLiveRange:":
            m = _RANGE.match(line)
            if m is None:
                raise XlaDumpError(f"line {i}: a live range of an unknown form: {stripped[:120]!r}", file=str(path))
            ranges[m.group(1) + m.group(2)] = (int(m.group(3)), int(m.group(4)))
    if not order:
        raise XlaDumpError("has no InstructionSequence", file=str(path))
    return order, ranges, end


def _uses(path: Path) -> dict[str, tuple[str, list[str]]]:
    """Value key -> (defining instruction, the instructions that use it)."""
    out: dict[str, tuple[str, list[str]]] = {}
    key, section = None, ""
    lines, _ = _section(path, None, _LIVE_RANGE_HEAD)
    for line in lines:
        if m := _VALUE_HEAD.match(line):
            key, section = m.group(2) + (m.group(3) or "{}"), ""
            out[key] = (m.group(2), [])
        elif key is None:
            continue
        elif line.startswith(" ") and line.strip() in ("positions:", "uses:"):
            section = line.strip()
        elif line.startswith(" from instruction:"):
            section = ""
        elif section == "uses:" and (m := _USE.match(line)):
            out[key][1].append(m.group(1))
    return out


def _kind(attributes: str) -> str | None:
    if "thread-local" in attributes:
        return None
    if "parameter" in attributes or "maybe-live-out" in attributes or "output shape" in attributes:
        return "user_io"
    if "constant" in attributes:
        return "constants"
    return "activations"


def read_module(module: XlaModule, *, alignment: int = CPU_ALIGNMENT) -> PlanObservation:
    """The plan of one module (see the module doc)."""
    assignment, live, uses_file, hlo = module.files
    allocations, values = _allocations(assignment)
    order, ranges, end = _live_ranges(live, combined=live == assignment)
    uses = _uses(uses_file)
    hlo_text = "\n".join(_lines(hlo))
    comps = xla_hlo.computations(hlo_text)
    entry_parameters = xla_hlo.entry_parameters(hlo_text)
    instructions = {name: ins for comp in comps.values() for name, ins in comp.items()}
    inst_opcode = {name: ins.opcode for name, ins in instructions.items()}
    step = {name: i for i, name in enumerate(order)}
    kinds = {a: _kind(attrs_) for a, (_, attrs_) in allocations.items()}
    arenas = {f"allocation {a}": Arena(k, alignment) for a, k in kinds.items() if k is not None}
    regions = {f"allocation {a}": size for a, (size, _) in allocations.items() if kinds[a] is not None}
    placed, consumers, writes, outputs, inputs = [], {}, {}, [], []
    for v in values:
        if kinds[v.allocation] is None:
            continue
        if v.key not in ranges:
            raise XlaDumpError(f"value {v.key!r} of allocation {v.allocation} has no live range", file=str(live))
        start, stop = ranges[v.key]
        name = _tensor_name(v.key)
        placed.append(dict(name=name, region=f"allocation {v.allocation}", offset=v.offset, size=v.size,
                           aligned_size=v.size, first=start, last=min(stop, end - 1), block=None, zero_copy=False))
        defined_by, users = uses.get(v.key, (v.key.split("{")[0], []))
        # A loop, branch or call hands its operand to the called computation's parameter (an alias
        # below); the flattened schedule puts the calling instruction after the callee's steps.
        reads = sorted({step[u] for u in users if u in step and inst_opcode.get(u) not in CALLERS})
        if reads:
            consumers[name] = tuple(reads)
        if defined_by in step:
            writes[name] = (step[defined_by],)
        if stop >= end and "maybe-live-out" in allocations[v.allocation][1]:
            outputs.append(name)
        if defined_by in entry_parameters:
            inputs.append(name)    # the caller's buffer; a loop's or call's parameter is not
    computed = _mark_shared(placed, uses, inst_opcode, step)
    in_place = _in_place_steps(placed, computed, uses, comps, instructions, step)
    tensors = tuple(PlacedTensor(**t) for t in placed)
    return PlanObservation(order=tuple(order), tensors=tensors, regions=regions, arenas=arenas,
                           consumers=consumers, writes=writes, graph_inputs=tuple(inputs),
                           graph_outputs=tuple(outputs), in_place=in_place, planner="xla")


def _in_place_steps(placed, computed: dict[str, str], uses, comps, instructions, step) -> tuple[InPlaceStep, ...]:
    """For each output a fusion computes in place over an operand: the bytes it writes and the bytes of
    the shared buffer it reads elsewhere, when the HLO shows them (checks/foreign/xla_hlo.py)."""
    by_name = {t["name"]: t for t in placed}
    defined = {_tensor_name(k): d for k, (d, _) in uses.items()}
    out = []
    for name, older in sorted(computed.items()):
        op, source = defined.get(name), defined.get(older)
        ins = instructions.get(op)
        if ins is None or ins.opcode != "fusion" or source not in ins.operands:
            continue
        access = xla_hlo.in_place_access(comps, op, ins.operands.index(source))
        if access is None:
            continue
        base = by_name[name]["offset"]
        writes, reads = access
        out.append(InPlaceStep(step[op], name, tuple(ByteRange(base + lo, base + hi) for lo, hi in writes),
                               tuple(ByteCopy(base + lo, base + hi, base + to) for lo, hi, to in reads)))
    return tuple(out)


def _tensor_name(key: str) -> str:
    return key[:-2] if key.endswith("{}") else key


CALLERS = frozenset({"while", "conditional", "call"})

# Instructions that write no bytes: their value is (an element of) a value that already exists, so
# sharing that value's bytes is what they are (a tuple of pointers, a loop's or branch's parameter,
# a loop's or conditional's result, a reinterpretation).
PASS_THROUGH = frozenset({"parameter", "tuple", "get-tuple-element", "while", "conditional", "call", "bitcast",
                          "optimization-barrier"})


def _mark_shared(placed: list[dict], uses, opcode_of, step) -> dict[str, str]:
    """A value that takes over the bytes of a live one at the step it is defined, by XLA's design:
    either its instruction writes no bytes (``PASS_THROUGH``) or it reads the older value and
    computes in place over it (a loop fusion, a dynamic-update-slice, a donated parameter). It is
    recorded as an alias of the older value's root. Any other sharing stays two tensors. Returns the
    values computed in place: name -> the value whose bytes they took over."""
    users = {_tensor_name(k): set(u) for k, (_, u) in uses.items()}
    defined = {_tensor_name(k): d for k, (d, _) in uses.items()}
    computed: dict[str, str] = {}
    by_region: dict[str, list[dict]] = {}
    for t in placed:
        by_region.setdefault(t["region"], []).append(t)
    for ts in by_region.values():
        if len(ts) < 2:
            continue
        ts = sorted(ts, key=lambda t: (t["first"], t["name"]))
        for k, t in enumerate(ts):
            op = defined.get(t["name"])
            if op is None or step.get(op) != t["first"]:
                continue
            through = opcode_of.get(op) in PASS_THROUGH
            for older in ts[:k]:
                inside = older["offset"] <= t["offset"] and t["offset"] + t["size"] <= older["offset"] + older["size"]
                if inside and older["last"] >= t["first"] and (through or op in users.get(older["name"], ())):
                    # older was placed before t (sorted by first), so its own root is already known
                    t["alias_of"] = older.get("alias_of") or older["name"]
                    if not through:
                        computed[t["name"]] = older["name"]
                    break
    return computed
