"""The op of GE's memory-assignment test fixture, for the ports of ``mem_assigner_unittest.cc``.

``some_op`` adds to a :class:`tests.ge.conftest.GeGraph` what GE's ``CreateOpWithWsSize(name, ws,
"some", size)`` creates: one output of ``size`` bytes (or several), one workspace, a stream.

Each test rebuilds one GE test's graph (``conftest.GeGraph``: GE's op sizes, workspaces,
streams and DFS order) and checks GE's expected number or fact against zcspec's plan.
``memory_size`` is GE's HBM total after ``MemoryAssigner::AssignMemory`` (feature map,
atomic and zero-copy memory); a test that reads ``HybridMemAssigner::GetMemOffsets``
compares the feature-map region (GE's planner score). A strict xfail records a
deviation: GE's value, zcspec's, and the GE function that decides it.
"""
from __future__ import annotations


def some_op(g, name, size=2048, ws=1024, stream=1, op="Sum", **attrs_):
    """``CreateOpWithWsSize(name, ws, "some", size)`` of the GE test fixture."""
    g.node(name, op=op, outs=size if isinstance(size, tuple) else (size,), ws=(ws,), stream=stream, **attrs_)
