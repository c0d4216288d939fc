"""GE's planning rules as data: small predicates and tables the planner consults.

Each answers one question about a node or a symbol and cites the GE fact it
comes from. Nothing here assigns memory.
"""
from __future__ import annotations

import re

from zcspec.impl.compiler import ops

# GE's block_mem_assigner.cc `InitReuseFlag` (kNoPreReuseTypes, kNoPostReuseTypes): producers whose output
# symbols are never pre- or post-reused.
NO_PRE_REUSE_TYPES = frozenset({
    "Data", "AippData", "AnnData", "QueueData", "Proposal", "Const", "Constant", "GetNext",
    "DropOutGenMask", "RefData", "AdpGetNext", "DynamicGetNext",
})
NO_POST_REUSE_TYPES = frozenset({
    "Data", "AippData", "QueueData", "Enter", "RefEnter", "NextIteration", "RefNextIteration",
    "RefData", "GetNext", "AdpGetNext", "DynamicGetNext", "DropOutGenMask",
})
# GE's block_mem_assigner.cc `SizeIndependentOfBatch`: collectives whose size does not depend on the batch keep
# one offset in all batches.
SAME_OFFSET_IN_BATCH = frozenset({"HcomBroadcast", "HcomAllReduce", "HcomAllGather"})
_VERSIONED = re.compile(r"^(.*)V[1-4]$")  # InitReuseFlag: "FooV2" matches "Foo"


def base_type(op_type: str) -> str:
    m = _VERSIONED.match(op_type)
    return m.group(1) if m else op_type


def reusable_producer(op_type: str) -> bool:
    """False for producers in GE's no-pre-reuse or no-post-reuse sets (InitReuseFlag)."""
    t = base_type(op_type)
    return t not in NO_PRE_REUSE_TYPES and t not in NO_POST_REUSE_TYPES


def supports_zero_copy(op_type: str, options) -> bool:
    """Whether the op's tasks can have their I/O addresses refreshed (IsNodeSupportZeroCopy, SoC-dependent)."""
    info = ops.info(op_type)
    return info is not None and info.zero_copy and op_type not in options.no_zero_copy_ops


def no_reuse(node) -> bool:
    """GE's ``no_reuse_mem_flag`` (node attr ``_no_reuse``): the node's blocks are never shared (ApplyMemory)."""
    return bool(node.attr("_no_reuse", False))


def batch_label(node) -> str:
    """The dynamic-batch branch of a node (``ATTR_NAME_BATCH_LABEL``, node attr ``_batch_label``;
    MemoryBlock::IsSameBatchLabel)."""
    label = node.attr("_batch_label", "")
    return label if isinstance(label, str) else str(label)


def continuous_input(node) -> str | None:
    """``"padding"`` (AssignContinuousBlocks), ``"nopadding"`` (CalNodeAsContinuousInputMaxLife) or None.
    Only a node with more than one input has
    continuous inputs: an op of such a type with one input is planned as an ordinary op (GE's
    ``MemLayoutConflictUtil::IsContinuousInput`` and ``MemReuseUtils::IsNoPaddingContinuousInput``,
    mem_layout_conflict_util.cc, both ask for more than one input anchor), so a one-input HcomAllGather
    keeps its input reusable and a Data feeding it zero copy."""
    info = ops.info(node.op_type)
    if info is None or len(node.inputs) < 2:
        return None
    return info.continuous_input


def separate_clean(node) -> bool:
    """GE's separate-clean continuous input (block_mem_assigner.cc ``IsSeparateCleanContinuousInputNode``): a
    padding continuous-input node (``ATTR_NAME_CONTINUOUS_INPUT``, more than one input: NoPadding concats never
    are one) that cleans its inputs with its own task, node attributes ``need_gentask_atomic`` True and
    ``atomic_input_index`` (GE's ``ATOMIC_ATTR_INPUT_INDEX``; present with any value, as GE asks ``HasAttr``).
    Its group is then no continuous block: the first input's memory is an ordinary reusable block as large as
    the group (``GetOutputTotalSizeAndOutCount``, ``ApplyOutMemory`` with ``as_input_continuous`` false), the
    other inputs get none (``GetNoNeedAssignMemoryFlag``) and sit after it (graph_mem_assigner.cc
    ``AssignContinuousInputMemory``), so one first input may start several such groups."""
    return (node.attr("need_gentask_atomic", False) is True and node.attr("atomic_input_index") is not None
            and continuous_input(node) == "padding")


def continuous_output(node) -> bool:
    """GE's ``ATTR_NAME_CONTINUOUS_OUTPUT`` (node attribute ``continuous_output``, fused HCCL) on a node
    with two or more outputs (``MemLayoutConflictUtil::IsContinuousOutput``, which the planner's
    ``IsContinuousOutput`` calls): its outputs sit back to back in one block, each 512-aligned
    (ApplyContinuousMemory)."""
    return bool(node.attr("continuous_output", False)) and len(node.outputs) > 1


def atomic(node) -> bool:
    """Outputs accumulated into, cleaned before the node runs (IsAtomicOutputMemory, AssignAtomicOutputMemory)."""
    info = ops.info(node.op_type)
    return bool(info is not None and info.atomic)


def zero_memory(node) -> bool:
    """Nodes whose outputs take no feature-map block: variables sit at fixed addresses (CheckIsZeroMemNodeType)."""
    info = ops.info(node.op_type)
    return info is not None and info.kind == "variable"


def is_data(node) -> bool:
    info = ops.info(node.op_type)
    return info is not None and info.kind == "data"
