"""What the refresh proof expects and assumes: the model file's facts and the API's guarantees.

The *expectation* (:func:`model_facts`) is transcribed from the model file, read back from its
encoded bytes: each argument slot's dtype and bytes (the argument tables) and, for I/O slots, the
zero-copy table's (task, slot, I/O, relative offset); each I/O's planned and raw size. Nothing the
runtime decides enters it.

The *assumptions* (:func:`call_assumptions`) are the legal placements of one call's user buffers,
data this module owns with its GE source (docs/proofs.md "The refresh proof"):

- ``B != 0`` (a null buffer is ACL_ERROR_INVALID_PARAM) and ``B + N < 2**64``;
- ``B`` a multiple of the I/O's element size and nothing more (GE checks no alignment; the
  kernels need element alignment, so a buffer may be any element-aligned view into an allocation);
- ``N >= max(model size - 64, raw bytes)``: ``DavinciModel::CheckUserAndModelSize``
  (davinci_model.cc) accepts ``N + 64 >= model size``; below the raw bytes is refused as
  ``CheckBufferSizeValid`` refuses it on the copy path;
- two outputs, or an input and an output, of one call do not overlap (the caller's contract).
"""
from __future__ import annotations

import attrs
import z3

from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.platform import dtypes

GE_SIZE_SLACK = 64   # CheckUserAndModelSize: user + 64 >= model size


def item_size(dtype: str) -> int:
    """Bytes of one element of ``dtype`` (1 for sub-byte types): the alignment its accesses need."""
    return max(1, dtypes.get(dtype).bits // 8)


@attrs.frozen
class SlotFact:
    """One argument slot as the model file has it: task ``task`` (node ``node``) slot ``slot``
    accesses ``nbytes`` of ``dtype``; ``io``/``rel`` from the zero-copy table (None: not I/O)."""

    task: int
    node: str
    slot: int
    dtype: str
    nbytes: int
    io: tuple | None = None
    rel: int = 0

    @property
    def label(self) -> str:
        return f"task {self.task} ({self.node!r}) slot {self.slot}"


@attrs.frozen
class IoFact:
    """A model input or output as the model file has it: ``size`` planned, ``nbytes`` raw."""

    key: tuple
    name: str
    size: int
    nbytes: int
    dtype: str

    @property
    def min_size(self) -> int:
        """The smallest user buffer the size check accepts (see the module docstring)."""
        return max(self.size - GE_SIZE_SLACK, self.nbytes, 0)


def model_facts(model) -> tuple[tuple[SlotFact, ...], dict[tuple, IoFact]]:
    """The slots and I/O of ``model`` as its encoded file says (transcribed, nothing decided)."""
    read = load_model(encode(model))
    zc = {(z.task, z.slot): ((z.role, z.index), z.relative_offset) for z in read.tasks.zero_copy}
    slots = tuple(SlotFact(t.index, t.node, i, s.dtype, s.nbytes, *zc.get((t.index, i), (None, 0)))
                  for t in read.tasks.tasks for i, s in enumerate(t.slots))
    ios = {(d.role, d.index): IoFact((d.role, d.index), d.tensor, d.size, d.nbytes, d.dtype)
           for d in read.tasks.inputs + read.tasks.outputs}
    return slots, ios


def multiple(x, item: int):
    """``x`` is a multiple of ``item`` (its low bits are zero, for a power of two: cheaper to solve)."""
    if item & (item - 1):
        return z3.URem(x, item) == 0
    return z3.Extract(item.bit_length() - 2, 0, x) == 0


def call_assumptions(ios, bases, sizes, bindings) -> list:
    """The API's guarantees for one call's symbolic buffers (module docstring). ``N <= ~B`` is
    ``B + N < 2**64``, so the 64-bit sums below cannot wrap."""
    out = []
    for key, b in bases.items():
        io, n = ios[key], sizes[key]
        out += [b != 0, z3.ULE(n, ~b), z3.UGE(n, io.min_size)]
        if item_size(io.dtype) > 1:
            out.append(multiple(b, item_size(io.dtype)))
    keys = [b.io.key for b in bindings if b.io.key in bases]
    for i, k in enumerate(keys):
        for j in keys[:i]:
            if "output" in (k[0], j[0]):
                out.append(z3.Or(z3.ULE(bases[k] + sizes[k], bases[j]), z3.ULE(bases[j] + sizes[j], bases[k])))
    return out
