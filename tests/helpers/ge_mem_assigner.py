"""The op of GE's memory-assignment test fixture, for the ports of ``mem_assigner_unittest.cc``.

``some_op`` adds to a :class:`tests.ge.conftest.GeGraph` what GE's ``CreateOpWithWsSize(name, ws,
"some", size)`` creates: one output of ``size`` bytes (or several), one workspace, a stream.
"""
from __future__ import annotations


def some_op(g, name, size=2048, ws=1024, stream=1, op="Sum", **attrs_):
    """``CreateOpWithWsSize(name, ws, "some", size)`` of the GE test fixture."""
    g.node(name, op=op, outs=size if isinstance(size, tuple) else (size,), ws=(ws,), stream=stream, **attrs_)
