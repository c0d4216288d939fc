"""Errors of the interval packer: bad buffers, bad instance files, and a packing that breaks the rules.

The first two are bad input: :class:`~zcspec.impl.compiler.errors.GraphError` s
(so the command line maps them to exit code 2) with structured fields naming
the culprit. :class:`InvalidPackingError` is a broken promise of the packer
itself (an ``AssertionError``: a bug, not bad input), raised when
``validate.check`` finds violations.
"""
from __future__ import annotations

from zcspec.impl.compiler.errors import GraphError


class InvalidBufferError(GraphError):
    """A buffer breaks a rule of the packing problem (size > 0, lower < upper, ...)."""

    def __init__(self, buffer: str, why: str, *, file: str = "", line: int = 0):
        self.buffer, self.line, self.why = buffer, line, why
        where = f"line {line}: " if line else ""
        super().__init__(f"{where}buffer {buffer!r}: {why}", file=file, tensor=buffer)


class BufferFileError(GraphError):
    """An instance file (MiniMalloc CSV) is unreadable or malformed."""

    def __init__(self, file: str, why: str, *, line: int = 0):
        self.line = line
        where = f"line {line}: " if line else ""
        super().__init__(f"{where}{why}", file=file)


class InvalidPackingError(AssertionError):
    """A packing breaks a rule of its problem: ``violations`` (``validate.PackingFinding`` s) name the buffers."""

    SHOWN = 5  # violations quoted in the message; the rest are counted

    def __init__(self, violations):
        self.violations = tuple(violations)
        lines = [str(v) for v in self.violations[:self.SHOWN]]
        more = len(self.violations) - self.SHOWN
        if more > 0:
            lines.append(f"... and {more} more")
        super().__init__(f"invalid packing ({len(self.violations)} violation(s)): " + "; ".join(lines))
