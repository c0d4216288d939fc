"""The pass pipeline: one ordered tuple, read top to bottom.

Each pass is a pure ``(graph, options) -> graph`` function that returns its
input unchanged when it finds nothing to do. ``CompileOptions.disabled_passes``
switches any of them off by name.
"""
from __future__ import annotations

from zcspec.impl.compiler.errors import OptionError
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.passes.mem_layout_conflict import mem_layout_conflict
from zcspec.impl.compiler.passes.memcpy_addr_async import memcpy_addr_async
from zcspec.impl.compiler.passes.outer_axis_views import outer_axis_views
from zcspec.impl.compiler.validate import validate

PIPELINE = (
    # Outer-axis Split/Slice cut contiguous ranges: make them views so no copy runs
    # and model inputs can be split among tasks at relative offsets (GE: SetInputOutputOffsetPass::Run).
    ("outer_axis_views", outer_axis_views),
    # GE's MemcpyAddrAsyncPass (OptimizeStage2): a refreshable copy from a constant to the
    # graph output, and from a graph input to it in offline builds (GE: MemcpyAddrAsyncPass::Run).
    ("memcpy_addr_async", memcpy_addr_async),
    # GE's MemLayoutConflictOptimizer (MemConflictProc, before memory assignment): a copy where
    # user memory meets a continuous block or an unrefreshable task, where a weight or a tensor
    # another block holds would sit in a continuous block (GE: MemLayoutConflictOptimizer::Run).
    ("mem_layout_conflict", mem_layout_conflict),
)


def check_disabled_passes(names) -> None:
    """OptionError naming any of ``names`` (``CompileOptions.disabled_passes``) that is not a pass of PIPELINE."""
    unknown = set(names) - {name for name, _ in PIPELINE}
    if unknown:
        raise OptionError("disabled_passes", sorted(unknown),
                          f"unknown passes {sorted(unknown)}; known: {[n for n, _ in PIPELINE]}")


def run_passes(graph: Graph, options) -> Graph:
    """Every enabled pass in order; the result is validated again."""
    check_disabled_passes(options.disabled_passes)
    for name, apply in PIPELINE:
        if name not in options.disabled_passes:
            graph = apply(graph, options)
    return validate(graph)
