"""What the spec knows about op types, as data it owns: which outputs are atomic, which inputs must be
contiguous, which nodes run a task.

An observation of a compiled graph transcribes each node's op type and attributes; it never says what
the op's planner rules are. The spec derives those facts here from the op type and the graph's own
attributes, so an op table changed in ``impl`` (an atomic flag dropped, a continuous input forgotten)
is judged against this table instead of agreeing with itself (MEM-ATOMIC-NOREUSE, MEM-CONT-INPUT,
MF-ATOMIC-CLEAN, LAYOUT-STREAM-ORDER). Each fact names the GE attribute or registration it models
(``SOURCES``); the entries describe the op set of this project, whose kernels are the emulated device's
(docs/device.md: ReduceSum accumulates into its output). Nothing here is read from ``impl``.
"""
from __future__ import annotations

from typing import Literal

ContinuousKind = Literal["padding", "nopadding"]

# Where each fact comes from in GE (mirror-cann/ge): the attribute an op carries and who reads it.
SOURCES = {
    "atomic": "ATOMIC_ATTR_OUTPUT_INDEX / ATOMIC_ATTR_IS_ATOMIC_NODE (graph_metadef/graph/attr/ge_attr_define.cc), "
              "read by compiler/graph/passes/memory_conflict/atomic_addr_clean_pass.cc (AtomicAddrCleanPass::Run, "
              "HandleNormalGraph: a memset node linked before every atomic node) and graph_mem_assigner.cc "
              "(ReAssignAtomicMemory, AssignAtomicOutputMemory); here: the ops whose emulated kernel accumulates "
              "into its output (ReduceSum)",
    "continuous_input": "ATTR_NAME_CONTINUOUS_INPUT (HCCL's collectives; padding: each input its own 512-aligned "
                        "piece) and ATTR_NAME_NOPADDING_CONTINUOUS_INPUT with ATTR_NAME_OUTPUT_REUSE_INPUT "
                        "(PhonyConcat; pieces back to back), graph_metadef/graph/attr/ge_attr_define.cc; read by "
                        "compiler/graph/build/memory/block_mem_assigner.cc (IsOutNodeSetContinuousInput) and "
                        "mem_layout_conflict_util.cc (MemLayoutConflictUtil::IsContinuousInput, which asks for "
                        "more than one input anchor)",
    "no_task": "compiler/engines/local_engine/ops_kernel_store/op/no_op.cc (REGISTER_OP_CREATOR(..., NoOp): Data, "
               "Variable, Const, Reshape, Flatten, Squeeze, Unsqueeze, PhonyConcat generate no task); "
               "ge_deleted_op.cc (Identity is removed before task generation); ATTR_NAME_NOTASK ('_no_task', set "
               "on a split the front end turns into a view), skipped by compiler/graph/build/task_generator.cc "
               "(TaskGenerator::GenerateTask); NetOutput's outputs are the model's, it runs no kernel",
    "ge_ops": "GE's own op types, beside ONNX's, that a graph in GE's terms holds: graph_metadef's op type names "
              "(DATA, NETOUTPUT, VARIABLE, CONSTANT, MERGE, MEMCPYASYNC, MEMCPYADDRASYNC, PHONYCONCAT: "
              "graph_metadef/graph/types.cc) and HCCL's collectives (HCOMALLREDUCE, HCOMALLGATHER, HCOMBROADCAST)",
}

# Ops whose outputs are accumulated into, so they are cleaned (memset to 0) before the kernel runs.
ATOMIC_OUTPUT_TYPES = frozenset({"ReduceSum"})

# Ops whose inputs must be contiguous, in input order, and how the next input's offset advances.
CONTINUOUS_INPUT_TYPES: dict[str, ContinuousKind] = {
    "HcomAllReduce": "padding", "HcomAllGather": "padding", "HcomBroadcast": "padding",
    "PhonyConcat": "nopadding",
}

# Ops that run no task (GE's NoOp registrations and the ops its passes delete): graph I/O, state,
# constants and views. Dropout is Identity at inference (ONNX) and deleted as Identity is. Merge, a NoOp
# in GE (its StreamMerge and copies do the join), runs a kernel of its own here: it is not listed.
NO_TASK_TYPES = frozenset({
    "Data", "RefData", "AippData", "NetOutput", "Variable", "Const", "Constant",
    "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout", "PhonyConcat",
})

# The op types a graph in GE's terms (a zcspec graph JSON file) may hold beside ONNX's default-domain ops:
# GE's graph I/O, state, constant, control-flow, copy and collective ops (SOURCES["ge_ops"]).
GE_OP_TYPES = frozenset({
    "Data", "NetOutput", "Variable", "Const", "Merge", "MemcpyAsync", "MemcpyAddrAsync", "PhonyConcat",
    "HcomAllReduce", "HcomAllGather", "HcomBroadcast",
})

# The IR's spelling of GE's ATTR_NAME_NOTASK: a Split or Slice along the outermost axis made a view.
NO_TASK_ATTR = "_view"


def atomic(op_type: str) -> bool:
    """Whether every output of an ``op_type`` node is atomic (cleaned, then accumulated into)."""
    return op_type in ATOMIC_OUTPUT_TYPES


def continuous_input(op_type: str) -> ContinuousKind | None:
    """``"padding"``, ``"nopadding"`` or None: how the inputs of an ``op_type`` node are laid out (a node
    with one input has none to keep together: the claims apply GE's more-than-one-anchor rule)."""
    return CONTINUOUS_INPUT_TYPES.get(op_type)


def runs_task(op_type: str, attrs: dict) -> bool:
    """Whether a node of ``op_type`` with the graph attributes ``attrs`` runs a task of its own."""
    return op_type not in NO_TASK_TYPES and attrs.get(NO_TASK_ATTR) is not True
