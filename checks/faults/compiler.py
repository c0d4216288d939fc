"""Compiler variants: a pass forgotten, a view offset computed wrong.

The MemcpyAddrAsync variant is hunted with model-file scenarios (the pass
decisions are observed there); the view-offset variant is self-consistent (plan,
slots and relative offsets agree), so it only shows when a task really reads
the wrong bytes: it is hunted with differential executions (v1 and v2 against
the onnx.reference oracle).

(A first version zeroed only the I/O table's relative offsets; runtime v1's
loader cross-checks that table against the slots and refused to load, an
InternalError that is a crash, not a spec verdict.)
"""
from __future__ import annotations

from zcspec.checks.faults.strategies import execution_scenarios, model_file_scenarios
from zcspec.checks.faults.variant import Variant, swap


def _skipped(step_name: str):
    def make(pipeline):
        return tuple(step for step in pipeline if step[0] != step_name)
    return swap("zcspec.impl.compiler.passes", "PIPELINE", make)


def _memcpy_addr_async_skipped():
    """The pipeline loses its MemcpyAddrAsync step (GE: memcpy_addr_async_pass.cc
    `MemcpyAddrAsyncPass::Run`): a weight feeding the graph output
    is bound to the user's output buffer."""
    return _skipped("memcpy_addr_async")


def _layout_conflict_skipped():
    """The pipeline loses its memory-layout conflict step (GE: mem_layout_conflict_optimizer.cc
    `MemLayoutConflictOptimizer::Run`): tasks that cannot be
    refreshed stay bound to model I/O."""
    return _skipped("mem_layout_conflict")


def _view_offset_dropped():
    """A view's byte offset inside its root is lost (taken as 0) when symbols are built (GE's
    relative offsets: set_input_output_offset_pass.cc SetInputOutputOffsetPass::Run): the plan, the relative
    offsets of model I/O and every
    slot agree with each other, but a
    task reading an outer-axis Split/Slice piece reads the root's first bytes."""
    def make(symbols):
        def wrong(graph, order, own):
            root, members, offset = symbols(graph, order, own)
            return root, members, {t: 0 for t in offset}
        return wrong
    return swap("zcspec.impl.compiler.aliases", "symbols", make)


VARIANTS = (
    Variant("memcpy-addr-async-skipped", "compiler",
            "the MemcpyAddrAsync pass is forgotten: a weight feeding the graph output has no copy before the "
            "NetOutput (GE: MemcpyAddrAsyncPass::Run)",
            _memcpy_addr_async_skipped, model_file_scenarios, ("PASS-MEMCPY-ADDR-ASYNC",)),
    Variant("layout-conflict-skipped", "compiler",
            "the memory-layout conflict pass is forgotten: where the SoC cannot refresh a task, it stays "
            "bound to model I/O (GE: MemLayoutConflictOptimizer::Run)",
            _layout_conflict_skipped, model_file_scenarios, ("PASS-LAYOUT-CONFLICT",)),
    Variant("view-offset-dropped", "compiler",
            "a wrong relative offset: a view's offset inside its root taken as 0, so slots and the I/O "
            "relative offsets point at the root's start (GE: SetInputOutputOffsetPass::Run)",
            _view_offset_dropped, lambda n: execution_scenarios(("differential",), max_nodes=n), ("EXEC-ORACLE",)),
)
