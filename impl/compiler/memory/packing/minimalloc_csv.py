"""Read MiniMalloc's instance format: a CSV with header ``id,lower,upper,size``.

Each row is a buffer that must stay intact over steps ``[lower, upper)``
(half-open) and needs ``size`` bytes. An optional ``alignment`` column (as
MiniMalloc writes it) becomes :attr:`Buffer.align`; other extra columns (such
as ``offset`` in solution files) are ignored.
"""
from __future__ import annotations

import csv

from zcspec.impl.compiler.memory.packing.errors import BufferFileError, InvalidBufferError
from zcspec.impl.compiler.memory.packing.problem import Buffer

REQUIRED = ("id", "lower", "upper", "size")


def read_minimalloc_csv(path) -> list[Buffer]:
    """The buffers of ``path``, in file order.

    Raises :class:`BufferFileError` (file unreadable, header missing a column,
    a field not an integer) or :class:`InvalidBufferError` (negative or zero
    size, ``lower >= upper``, duplicate id), each naming the file and line.
    """
    path = str(path)
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError) as e:
        raise BufferFileError(path, f"cannot read buffer file: {e}") from e
    if not rows:
        raise BufferFileError(path, "empty file: expected a header line id,lower,upper,size")
    header = [h.strip().lower() for h in rows[0]]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise BufferFileError(path, f"header {','.join(rows[0])!r} lacks column(s) {', '.join(missing)}: "
                              "expected id,lower,upper,size", line=1)
    col = {name: header.index(name) for name in header}
    buffers, first_line = [], {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        buffer = _row(path, line, row, col)
        if buffer.id in first_line:
            raise InvalidBufferError(buffer.id, f"duplicate buffer id (first on line {first_line[buffer.id]}): "
                                     "every buffer needs its own id", file=path, line=line)
        first_line[buffer.id] = line
        buffers.append(buffer)
    return buffers


def _row(path: str, line: int, row: list[str], col: dict[str, int]) -> Buffer:
    if len(row) < len(col):
        raise BufferFileError(path, f"row {','.join(row)!r} has {len(row)} fields, the header has {len(col)}",
                              line=line)
    ident = row[col["id"]].strip()
    values = {}
    for name in ("lower", "upper", "size") + (("alignment",) if "alignment" in col else ()):
        text = row[col[name]].strip()
        try:
            values[name] = int(text)
        except ValueError:
            raise BufferFileError(path, f"buffer {ident!r}: {name}={text!r} is not an integer", line=line) from None
    try:
        return Buffer(ident, values["lower"], values["upper"], values["size"], values.get("alignment", 1))
    except InvalidBufferError as e:
        raise InvalidBufferError(ident, e.why, file=path, line=line) from None
