"""What an XLA fusion computed in place reads and writes of its own buffer, from the HLO text.

A loop fusion whose root is ``dynamic-update-slice(P, update, starts...)``, with ``P`` the fusion's
parameter ``k`` (through ``bitcast`` or ``reshape``, which move no bytes in XLA's default
row-major layouts), is emitted in place: its output shares operand ``k``'s buffer and only the
window ``starts + shape(update)`` is written. Any ``slice`` of ``P`` inside the same fusion is a
read of that buffer; where it flows into the update, its bytes go to the window. This module
transcribes exactly that, for constant start indices and unit-stride slices in default layouts:

    in_place_access(hlo, fusion_name, operand_index)
        -> (writes [(lo, hi)], reads [(lo, hi, to)]) in bytes of the buffer, or None

Anything else (a start computed at run time, a strided or dynamic slice, a non-default layout, a
gather) is not transcribed: None, or no read, and the spec's claim about in-place reads is then not
exercised by that step. The module parses the HLO text only; it needs neither jax nor XLA.
"""
from __future__ import annotations

import math
import re

import attrs

_ELEMENT_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4,
                  "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}
_ARRAY = re.compile(r"^([a-z]+[0-9]*)\[([0-9,]*)\](?:\{([0-9,]*)\})?$")
# Two spellings: ``%name (p: f32[4]) -> f32[4] {`` with ``%`` before every name (jaxlib 0.7.1 and
# 0.10.2 print it), and ``name {`` ... ``} // name`` with bare operand names (jaxlib 0.4.36).
_COMPUTATION = re.compile(r"^(?:ENTRY )?%?([\w.\-]+)(?: \(.*\) -> .*)? \{\s*$")
_INSTRUCTION = re.compile(r"^\s+(ROOT )?%?([\w.\-]+) = (.*)$")
_NAME = re.compile(r"[A-Za-z_][\w.\-]*")
NO_OPERANDS = frozenset({"parameter", "constant", "iota"})   # their parentheses hold a number or a literal
MAX_RUNS = 4096   # a window or slice of more contiguous runs than this is not transcribed


@attrs.frozen
class Instruction:
    name: str
    shape: str
    opcode: str
    operands: tuple[str, ...]
    args: str          # the text inside the opcode's parentheses
    attributes: str    # the text after them
    root: bool


def _split_shape(text: str) -> tuple[str, str]:
    """(shape, rest) of ``SHAPE OPCODE(...)...``; a tuple shape is a balanced ``(...)``."""
    if not text.startswith("("):
        shape, _, rest = text.partition(" ")
        return shape, rest
    depth = 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if depth == 0:
            return text[: i + 1], text[i + 1:].lstrip()
    return text, ""


def _parse_instruction(line: str) -> Instruction | None:
    m = _INSTRUCTION.match(line)
    if m is None:
        return None
    shape, rest = _split_shape(m.group(3))
    op = re.match(r"([a-z][a-z0-9-]*)\(", rest)
    if op is None:
        return None
    depth, i = 0, op.end() - 1
    for i in range(op.end() - 1, len(rest)):
        depth += (rest[i] == "(") - (rest[i] == ")")
        if depth == 0:
            break
    inside, attributes = rest[op.end(): i], rest[i + 1:]
    if "%" in inside or op.group(1) in NO_OPERANDS:
        operands = tuple(re.findall(r"%([^\s,()]+)", inside))
    else:   # the short form: bare operand names, without their shapes
        operands = tuple(part.strip() for part in inside.split(",") if _NAME.fullmatch(part.strip()))
    return Instruction(m.group(2), shape, op.group(1), operands, inside, attributes, bool(m.group(1)))


def computations(text: str) -> dict[str, dict[str, Instruction]]:
    """Computation name -> its instructions by name (in text order)."""
    out: dict[str, dict[str, Instruction]] = {}
    current = None
    for line in text.splitlines():
        if m := _COMPUTATION.match(line):
            current = out.setdefault(m.group(1), {})
        elif line.startswith("}"):
            current = None
        elif current is not None and (ins := _parse_instruction(line)) is not None:
            current[ins.name] = ins
    return out


def entry_parameters(text: str) -> frozenset[str]:
    """The names of the ENTRY computation's parameters: the module's inputs, the caller's buffers
    (a called computation's parameters are not)."""
    entry = next((m.group(1) for line in text.splitlines()
                  if line.startswith("ENTRY ") and (m := _COMPUTATION.match(line))), None)
    comp = computations(text).get(entry, {}) if entry else {}
    return frozenset(name for name, ins in comp.items() if ins.opcode == "parameter")


def _array(shape: str) -> tuple[int, tuple[int, ...]] | None:
    """(element bytes, dims) of a default-layout array shape, None otherwise."""
    m = _ARRAY.match(shape)
    if m is None or m.group(1) not in _ELEMENT_BYTES:
        return None
    dims = tuple(int(d) for d in m.group(2).split(",") if d)
    if m.group(3) is not None and m.group(3):
        layout = tuple(int(d) for d in m.group(3).split(","))
        if layout != tuple(range(len(dims) - 1, -1, -1)):
            return None
    return _ELEMENT_BYTES[m.group(1)], dims


def _runs(dims: tuple[int, ...], start: tuple[int, ...], size: tuple[int, ...], elem: int) -> list[tuple[int, int]] | None:
    """The contiguous byte runs of the box ``start + [0, size)`` in a row-major array of ``dims``."""
    if len(dims) != len(start) or len(dims) != len(size):
        return None
    strides = [math.prod(dims[i + 1:]) for i in range(len(dims))]
    # The trailing dimensions the box covers whole fold into one run.
    k = len(dims)
    while k > 0 and start[k - 1] == 0 and size[k - 1] == dims[k - 1]:
        k -= 1
    run = math.prod(size[k - 1:]) if k > 0 else math.prod(size)
    if k == 0:
        return [(0, run * elem)] if run else []
    outer = [range(start[i], start[i] + size[i]) for i in range(k - 1)]
    count = math.prod(len(r) for r in outer)
    if count > MAX_RUNS:
        return None
    runs = []
    for idx in _product(outer):
        base = sum(i * strides[d] for d, i in enumerate(idx)) + start[k - 1] * strides[k - 1]
        runs.append((base * elem, (base + run) * elem))
    return runs


def _product(ranges):
    if not ranges:
        yield ()
        return
    for i in ranges[0]:
        for rest in _product(ranges[1:]):
            yield (i,) + rest


def _through_moves(comp: dict[str, Instruction], name: str) -> str:
    """Follow ``bitcast`` / ``reshape`` / ``copy``-free moves back to their source instruction."""
    seen = set()
    while name in comp and comp[name].opcode in ("bitcast", "reshape") and name not in seen:
        seen.add(name)
        name = comp[name].operands[0]
    return name


def _constant(comp: dict[str, Instruction], name: str) -> int | None:
    ins = comp.get(name)
    if ins is None or ins.opcode != "constant":
        return None
    return int(ins.args) if re.fullmatch(r"-?\d+", ins.args.strip()) else None


def _slice_box(ins: Instruction) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    m = re.search(r"slice=\{([^}]*)\}", ins.attributes)
    if m is None:
        return None
    start, size = [], []
    for part in re.findall(r"\[([^\]]*)\]", m.group(1)):
        bits = [int(b) for b in part.split(":")]
        if len(bits) == 3 and bits[2] != 1:
            return None     # strided: not transcribed
        start.append(bits[0])
        size.append(bits[1] - bits[0])
    return tuple(start), tuple(size)


def in_place_access(text_or_comps, fusion: str, operand: int):
    """(writes, reads) of the in-place fusion ``fusion`` over its operand ``operand`` (module doc), or None."""
    comps = computations(text_or_comps) if isinstance(text_or_comps, str) else text_or_comps
    caller = next((c[fusion] for c in comps.values() if fusion in c), None)
    if caller is None or caller.opcode != "fusion":
        return None
    called = re.search(r"calls=%?(\S+?)[,\s]", caller.attributes + " ")
    comp = comps.get(called.group(1)) if called else None
    if not comp:
        return None
    root = next((i for i in comp.values() if i.root), None)
    param = next((i.name for i in comp.values() if i.opcode == "parameter" and i.args.strip() == str(operand)), None)
    if root is None or param is None or root.opcode != "dynamic-update-slice":
        return None
    if _through_moves(comp, root.operands[0]) != param:
        return None
    out, upd = _array(root.shape), _array(comp[root.operands[1]].shape) if root.operands[1] in comp else None
    starts = [_constant(comp, s) for s in root.operands[2:]]
    if out is None or upd is None or None in starts or len(starts) != len(out[1]):
        return None
    elem, dims = out
    # DynamicUpdateSlice clamps each start into [0, dim - update_dim].
    starts = tuple(max(0, min(s, d - u)) for s, d, u in zip(starts, dims, upd[1]))
    writes = _runs(dims, starts, upd[1], elem)
    if writes is None:
        return None
    reads = []
    window_lo = writes[0][0] if writes else 0
    for ins in comp.values():
        if ins.opcode != "slice" or _through_moves(comp, ins.operands[0]) != param:
            continue
        box, src = _slice_box(ins), _array(comp[ins.operands[0]].shape) if ins.operands[0] in comp else None
        if box is None or src is None:
            continue
        runs = _runs(src[1], box[0], box[1], src[0])
        if runs is None or len(runs) != 1 or len(writes) != 1:
            continue    # a multi-run slice or window: where each run lands is not transcribed
        lo, hi = runs[0]
        reads.append((lo, hi, window_lo if _feeds(comp, ins.name, root.operands[1]) else lo))
    return tuple(writes), tuple(reads)


def _feeds(comp: dict[str, Instruction], source: str, target: str) -> bool:
    """Whether ``source`` flows into ``target`` through moves and element-wise ops of one operand shape."""
    users: dict[str, list[str]] = {}
    for ins in comp.values():
        for o in ins.operands:
            users.setdefault(o, []).append(ins.name)
    frontier, seen = [source], {source}
    while frontier:
        n = frontier.pop()
        if n == target:
            return True
        for u in users.get(n, ()):
            if u not in seen and comp[u].opcode not in ("dynamic-update-slice", "slice", "dynamic-slice", "gather"):
                seen.add(u)
                frontier.append(u)
    return False
