"""What each SoC can do, as data the spec owns: the expectations claims compute from raw facts.

An observation names its SoC (``ascend910b``, ...); it never says what that SoC
supports. The spec looks the name up here and derives from the entry which
MemcpyAddrAsync nodes are required (PASS-MEMCPY-ADDR-ASYNC), which model I/O a
runtime must bind zero copy (V1-ZERO-COPY-WHEN-ELIGIBLE) and which
granularities a plan must keep (LAYOUT-ALIGN, LAYOUT-TENSOR-SIZE) and
the alignment of every device allocation (DEVICE-ALLOC-FIT). The entries
describe the emulated SoCs of this project (docs/device.md); every field names
the GE source of the capability it models (``SOURCES``). Nothing here is read
from ``impl``: a profile changed there is judged against this table.

``PLANNERS`` does the same for the other compilers whose plans zcspec reads: the offset
alignment each one documents for the tensors it places in an arena, with the project's source
file and constant. A plan that names its planner is judged against that alignment
(LAYOUT-ARENA-ALIGN), whatever its arenas declare: an arena read with alignment 1, or a plan
file written by hand, cannot exempt itself from the alignment its planner promises.
"""
from __future__ import annotations

import attrs

from zcspec.spec.errors import SpecError

TASK_KINDS = frozenset({"kernel", "memcpy", "memcpy_addr", "memset", "hccl"})

# Where each capability comes from in GE (mirror-cann/ge): file and function.
SOURCES = {
    "zero_copy_memcpy": "compiler/graph/passes/memory_conflict/memcpy_addr_async_pass.cc (MemcpyAddrAsyncPass::Run: "
                        "rtGetRtCapability(FEATURE_TYPE_MEMCPY, MEMCPY_INFO_SUPPORT_ZEROCOPY))",
    "refreshable_tasks": "runtime/v1/graph/load/model_manager/task_args_refresh_type_classifier.cc "
                         "(TaskArgsRefreshTypeClassifier::ClassifyMultiTasks, OneTaskRefreshTypeClassifier::ClassifyAddrs: a task with "
                         "support_refresh false keeps fixed addresses)",
    "refresh_in_loop": "runtime/v1/graph/load/model_manager/task_args_refresh_type_classifier.cc "
                       "(OneTaskRefreshTypeClassifier::ClassifyAddrs: an address whose AddrDesc::support_refresh is "
                       "false stays fixed; this field says which SoCs give tasks inside loop subgraphs that flag)",
    "hccl_no_zero_copy": "runtime/v1/graph/load/model_manager/task_info/hccl/hccl_task_info.cc "
                         "(HcclTaskInfo::InitZeroCopyInfos); compiler/graph/build/memory/block_mem_assigner.cc "
                         "(IsNodeSupportZeroCopy via OpUtils::IsHcomNodeNotSupportAddrRefresh)",
    "block_align": "compiler/graph/build/memory/mem_assigner.h (MEM_ALIGN_SIZE); "
                   "mem_reuse_strategy.cc (MemReuseUtils::AlignMemOffset)",
    "tensor_align": "compiler/engines/nn_engine/utils/common/op_tensor_utils.cc (OpTensorUtils::CalibrateTensorSize)",
    "alloc_align": "runtime/v1/graph/manager/caching_allocator.cc (CachingAllocator::Malloc: GetBlockSize rounds "
                   "every block to kRoundBlockSize, 512 bytes, caching_allocator.h); the 32-byte entry is the "
                   "emulated ascend310p's (docs/device.md)",
    "padding": "graph_metadef/graph/utils/tensor_size_utils.cc "
               "(TensorUtilsEx::GetTensorMemorySizeInBytesWithAutoPadding: SoC spec padding_size)",
}


class UnknownSocError(SpecError):
    """An observation names a SoC this table has no entry for."""

    def __init__(self, name: str, known: tuple[str, ...]):
        self.name, self.known = name, known
        super().__init__(f"SoC {name!r} has no entry in the spec's capability table "
                         f"(spec/capabilities.py); known: {sorted(known)}")


@attrs.frozen
class Capabilities:
    """One SoC: see ``SOURCES`` for what each field models in GE."""

    name: str
    zero_copy_memcpy: bool
    refreshable_tasks: frozenset = attrs.field(converter=frozenset)
    refresh_in_loop: bool = True
    hccl_no_zero_copy: frozenset = attrs.field(converter=frozenset, default=frozenset())
    block_align: int = 512
    tensor_align: int = 32
    padding: int = 32
    alloc_align: int = 512   # every device malloc returns a multiple of this (DEVICE-ALLOC-FIT)

    def __attrs_post_init__(self) -> None:
        if unknown := self.refreshable_tasks - TASK_KINDS:
            raise SpecError(f"capabilities of {self.name!r}: unknown task kinds {sorted(unknown)}")

    def can_refresh(self, kind: str, *, in_loop: bool = False) -> bool:
        """Whether a task of ``kind`` (inside a loop subgraph or not) can have its arguments rewritten."""
        return kind in self.refreshable_tasks and (self.refresh_in_loop or not in_loop)

    def tensor_size(self, nbytes: int) -> int:
        """GE's padded tensor size: align(bytes, tensor_align) + padding; an empty tensor gets the padding."""
        if nbytes <= 0:
            return max(self.padding, 1)
        return -(-nbytes // self.tensor_align) * self.tensor_align + self.padding


_ALL = ("kernel", "memcpy_addr", "memset", "hccl")

TABLE: dict[str, Capabilities] = {c.name: c for c in (
    # Training SoC: every task kind with an argument table is refreshable, also inside loops.
    Capabilities("ascend910b", zero_copy_memcpy=True, refreshable_tasks=_ALL),
    # Inference SoC: atomic-clean (memset) tasks keep fixed addresses; broadcast is never zero copy.
    Capabilities("ascend310p", zero_copy_memcpy=True, refreshable_tasks=("kernel", "memcpy_addr", "hccl"),
                 hccl_no_zero_copy=("HcomBroadcast",), alloc_align=32),
    # Older runtime: HCCL tasks and tasks inside loop subgraphs keep fixed addresses.
    Capabilities("legacy", zero_copy_memcpy=True, refreshable_tasks=("kernel", "memcpy_addr", "memset"),
                 refresh_in_loop=False, hccl_no_zero_copy=("HcomAllReduce", "HcomAllGather", "HcomBroadcast")),
    # No zero-copy capability: no argument refresh at all; every model I/O is copied.
    Capabilities("nozc", zero_copy_memcpy=False, refreshable_tasks=(),
                 hccl_no_zero_copy=("HcomAllReduce", "HcomAllGather", "HcomBroadcast")),
)}

GE_DEFAULT = Capabilities("ge-default", zero_copy_memcpy=True, refreshable_tasks=_ALL)
"""GE's constants with every task refreshable: the granularities of a plan that names no SoC."""


def granularities(plan) -> tuple[dict[str, int], int]:
    """(block granularity per region, tensor granularity) a plan must keep: the capability table's
    for a plan that names its SoC; GE's constants (``GE_DEFAULT``) for one that names no SoC but
    names GE as its planner; otherwise the plan's own ``alignment`` (an exporter's claim, GE's
    constants by default)."""
    if plan.soc in TABLE:
        caps = capabilities(plan.soc)
    elif plan.planner == "ge":
        caps = GE_DEFAULT
    else:   # neither a SoC nor GE named: the plan's own claim
        return dict(plan.alignment.block), plan.alignment.tensor
    return {"feature_map": caps.block_align, "zero_copy": caps.block_align}, caps.tensor_align


@attrs.frozen
class PlannerAlignment:
    """The offset alignment a planner documents for every tensor that owns memory in its arenas."""

    planner: str
    alignment: int
    source: str   # the project's file and constant


PLANNERS: dict[str, PlannerAlignment] = {p.planner: p for p in (
    # XLA:CPU slices every intermediate buffer inside its preallocated temp buffer at Align().
    PlannerAlignment("xla", 64, "openxla/xla: xla/backends/cpu/alignment.h (xla::cpu::Align(), 64: \"XLA:CPU "
                                "itself aligns intermediate buffers to this boundary\"; formerly "
                                "xla/cpu_function_runtime.h cpu_function_runtime::Align())"),
    # ExecuTorch's memory planning places each TensorSpec at a multiple of its alignment.
    PlannerAlignment("executorch", 16, "pytorch/executorch: exir/tensor.py (ALIGNMENT = 16, TensorSpec.alignment); "
                                       "exir/passes/memory_planning_pass.py (MemoryPlanningPass(alignment=ALIGNMENT))"),
    # LiteRT's ArenaPlanner aligns every arena tensor to the tensor alignment.
    PlannerAlignment("litert", 64, "google-ai-edge/LiteRT (tensorflow/lite): tensorflow/lite/util.h "
                                   "(kDefaultTensorAlignment = 64, \"memory allocation parameter used by "
                                   "ArenaPlanner\"); tensorflow/lite/arena_planner.cc (tensor_alignment_)"),
    # IREE packs the slices of a transient resource at the resource config's minimum offset alignment.
    PlannerAlignment("iree", 64, "iree-org/iree: compiler/src/iree/compiler/Dialect/Stream/IR/StreamTypes.cpp "
                                 "(clResourceMinOffsetAlignment, --iree-stream-resource-min-offset-alignment, default "
                                 "64; ResourceConfigAttr::getDefaultHostConstraints); Stream/Transforms/"
                                 "LayoutSlices.cpp (packing at getMinBufferOffsetAlignment())"),
    # TVM aligns each storage (an arena's base), not the tensors inside it: StaticPlanBlockMemory gives every
    # tensor offset 0 of its storage, and a storage takes a tensor at any byte offset that fits.
    PlannerAlignment("tvm", 1, "apache/tvm: include/tvm/runtime/device_api.h (kAllocAlignment = 64 aligns each "
                               "allocation, i.e. a storage); src/runtime/memory/memory_manager.cc "
                               "(StorageObj::AllocNDArray checks only offset + size <= the storage's size)"),
)}


def arena_alignment(plan, arena: str) -> int:
    """The multiple every tensor that owns memory in ``arena`` must start at: the documented alignment of
    the planner the plan names (``PLANNERS``), or the arena's own declared alignment when that is larger
    or the plan names no planner of the table (1 for an arena the plan does not declare)."""
    declared = plan.arenas[arena].alignment if arena in plan.arenas else 1
    documented = PLANNERS.get(plan.planner or "")
    return max(declared, documented.alignment) if documented else declared


def capabilities(name: str) -> Capabilities:
    """The entry for SoC ``name``; UnknownSocError (naming the known ones) otherwise."""
    try:
        return TABLE[name]
    except (KeyError, TypeError):
        raise UnknownSocError(str(name), tuple(TABLE)) from None
