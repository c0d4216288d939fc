"""Hypothesis strategies for bare packing problems: lists of buffers with random lifetimes, sizes and alignments.

``buffer_lists()`` draws the input of the interval packer
(``zcspec.impl.compiler.memory.packing``): buffers ``b0, b1, ...`` with
half-open lifetimes inside ``[0, max_step)``; it shrinks toward fewer,
smaller, shorter-lived and unaligned buffers.
"""
from __future__ import annotations

from hypothesis import strategies as st

from zcspec.impl.compiler.memory.packing import Buffer

ALIGNMENTS = (1, 1, 2, 4, 8)  # 1 twice: most buffers unaligned, as in the instances we meet


def buffer_lists(*, min_buffers: int = 0, max_buffers: int = 12, max_step: int = 12, max_size: int = 40,
                 aligned: bool = True) -> st.SearchStrategy[list[Buffer]]:
    """Lists of ``min_buffers`` to ``max_buffers`` buffers, sizes 1 to ``max_size``, each living over
    ``[lower, upper)`` with ``0 <= lower < upper <= max_step``; alignments from :data:`ALIGNMENTS`
    when ``aligned`` (else 1)."""
    if not 0 <= min_buffers <= max_buffers:
        raise ValueError(f"min_buffers={min_buffers!r}, max_buffers={max_buffers!r}: need 0 <= min <= max")
    if max_step < 1 or max_size < 1:
        raise ValueError(f"max_step={max_step!r}, max_size={max_size!r}: both must be at least 1")
    return _buffer_lists(min_buffers, max_buffers, max_step, max_size, aligned)


@st.composite
def _buffer_lists(draw, min_buffers, max_buffers, max_step, max_size, aligned):
    n = draw(st.integers(min_buffers, max_buffers))
    buffers = []
    for i in range(n):
        lower = draw(st.integers(0, max_step - 1))
        upper = draw(st.integers(lower + 1, max_step))
        size = draw(st.integers(1, max_size))
        align = draw(st.sampled_from(ALIGNMENTS)) if aligned else 1
        buffers.append(Buffer(f"b{i}", lower, upper, size, align))
    return buffers
