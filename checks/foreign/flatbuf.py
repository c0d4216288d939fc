"""Reading a FlatBuffers file by field number, bounded: what the readers of ``.pte`` and ``.tflite`` share.

A table's field ``i`` is the i-th field of its schema (a union takes two: its type, then its value);
the readers name those numbers from the schema, no generated code needed. Decoding goes through the
``flatbuffers`` library's ``Table``; every offset is checked against the buffer first, and every
vector's length against the bytes left, so a crafted file raises :class:`FlatbufferError` (the
caller names the file) instead of reading past the end, looping over a huge count or recursing
without end.
"""
from __future__ import annotations

import struct

from flatbuffers import number_types as N
from flatbuffers.table import Table

MAX_DEPTH = 64


class FlatbufferError(ValueError):
    """The bytes are not a well-formed flatbuffer where the reader looked."""


class Node:
    """A table of the buffer: ``scalar``, ``table``, ``vector``, ``string`` and ``union`` read field i."""

    def __init__(self, buf: bytes | bytearray | memoryview, pos: int, depth: int = 0):
        self.buf, self.pos, self.depth = buf, pos, depth
        if depth > MAX_DEPTH:
            raise FlatbufferError(f"tables nested deeper than {MAX_DEPTH}")
        self._need(pos, 4)
        vtable = pos - struct.unpack_from("<i", buf, pos)[0]
        self._need(vtable, 4)
        self._vt_len = struct.unpack_from("<H", buf, vtable)[0]
        self._need(vtable, self._vt_len)
        self.tab = Table(buf, pos)

    @classmethod
    def root(cls, buf: bytes, identifier: bytes | None = None) -> "Node":
        if len(buf) < 8:
            raise FlatbufferError(f"{len(buf)} bytes: too short for a flatbuffer")
        if identifier is not None and bytes(buf[4:8]) != identifier:
            raise FlatbufferError(f"file identifier {bytes(buf[4:8])!r}, expected {identifier!r}")
        return cls(buf, struct.unpack_from("<I", buf, 0)[0])

    def _need(self, at: int, n: int) -> None:
        if at < 0 or n < 0 or at + n > len(self.buf):
            raise FlatbufferError(f"offset {at} (+{n}) is outside the {len(self.buf)} bytes")

    def _field(self, i: int) -> int:
        slot = 4 + 2 * i
        if slot + 2 > self._vt_len:
            return 0
        o = self.tab.Offset(slot)
        if o:
            self._need(self.pos + o, 1)
        return o

    def scalar(self, i: int, kind, default=0):
        """A scalar field; ``kind`` a flatbuffers number type (``N.Int32Flags``, ...)."""
        o = self._field(i)
        if not o:
            return default
        self._need(self.pos + o, kind.bytewidth)
        return self.tab.Get(kind, self.pos + o)

    def _indirect(self, at: int) -> int:
        self._need(at, 4)
        target = at + struct.unpack_from("<I", self.buf, at)[0]
        self._need(target, 4)
        return target

    def table(self, i: int) -> "Node | None":
        o = self._field(i)
        return Node(self.buf, self._indirect(self.pos + o), self.depth + 1) if o else None

    def _vector(self, i: int, width: int) -> tuple[int, int]:
        o = self._field(i)
        if not o:
            return 0, 0
        start = self._indirect(self.pos + o)
        n = struct.unpack_from("<I", self.buf, start)[0]
        self._need(start + 4, n * width)
        return start + 4, n

    def scalars(self, i: int, kind) -> list:
        start, n = self._vector(i, kind.bytewidth)
        return [self.tab.Get(kind, start + k * kind.bytewidth) for k in range(n)]

    def tables(self, i: int) -> list["Node"]:
        start, n = self._vector(i, 4)
        return [Node(self.buf, self._indirect(start + 4 * k), self.depth + 1) for k in range(n)]

    def string(self, i: int) -> str:
        o = self._field(i)
        if not o:
            return ""
        start = self._indirect(self.pos + o)
        n = struct.unpack_from("<I", self.buf, start)[0]
        self._need(start + 4, n)
        return bytes(self.buf[start + 4:start + 4 + n]).decode("utf-8", errors="replace")

    def union(self, i: int) -> tuple[int, "Node | None"]:
        """(type, table) of the union whose type is field ``i`` and value field ``i + 1``."""
        kind = self.scalar(i, N.Uint8Flags)
        return kind, (self.table(i + 1) if kind else None)


__all__ = ["FlatbufferError", "N", "Node"]
