"""Errors of the interval packer: bad buffers and bad instance files.

Both are bad input: :class:`~zcspec.impl.compiler.errors.GraphError` s
(so the command line maps them to exit code 2) with structured fields naming
the culprit. (A packing that breaks the rules is the
checker's finding: ``zcspec.checks.packing_check``.)
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

