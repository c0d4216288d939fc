"""PlanOptions: every switch and constant of the memory planner, in one frozen object.

The GE constants are defaults, not hard-coded: a SoC profile or a test can
change them (GE: 512 per block, mem_assigner.h `MEM_ALIGN_SIZE`, 32 per tensor size; kept as
separate parameters, so a 32-byte zero-copy layout can be modelled too).
"""
from __future__ import annotations

import attrs

from zcspec.impl.compiler.errors import OptionError

STRATEGIES = ("ge", "compact")
GE_BATCH_SPLIT = 400 * 1024 * 1024  # kMaxSplitSizeForDynamicBatch (GE: dynamic_batch_mem_assigner.h)


def _positive(instance, attribute, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise OptionError(attribute.name, value, "must be a positive integer", options="plan")


def _non_negative(instance, attribute, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise OptionError(attribute.name, value, "must be a non-negative integer", options="plan")


def _strategy(instance, attribute, value) -> None:
    if value not in STRATEGIES:
        raise OptionError(attribute.name, value, f"must be one of {', '.join(STRATEGIES)}", options="plan")


def _split(instance, attribute, value) -> None:
    if value is not None:
        _positive(instance, attribute, value)


@attrs.frozen
class PlanOptions:
    """How to plan.

    - ``strategy``: ``"ge"`` (GE's BlockMemAssigner + GraphMemAssigner) or
      ``"compact"`` (same rules, feature-map offsets from the interval packer).
    - ``reuse``: memory reuse on; False is GE's ``ge.exec.disableReuseMemory=1``
      (GE: block_mem_assigner.cc `AssignMemoryWithReuse`).
    - ``block_align``: block granularity, ``MEM_ALIGN_SIZE`` = 512 (GE: mem_assigner.h,
      mem_reuse_strategy.cc `AlignMemOffset`); every block, zero-copy ones included, is rounded
      to it (graph_mem_assigner.cc `AssignZeroCopyMemory`).
    - ``size_align``/``size_padding``: a tensor's size is
      ``align(bytes, size_align) + size_padding`` (32 and 32: GE's op_tensor_utils.cc
      `OpTensorUtils::CalibrateTensorSize`).
    - ``weight_align``: offset granularity of weights and variables.
    - ``no_zero_copy_ops``: op types whose tasks cannot refresh addresses on
      this SoC (GE: block_mem_assigner.cc `IsNodeSupportZeroCopy`); their I/O blocks are not zero-copy.
    - ``batch_split_size``: GE's extend-size memory mode splits the max batch
      into parents of at most this many bytes (400 MiB; GE: dynamic_batch_mem_assigner.cc
      `CreateBlocks`); None (GE's
      default mode) makes one parent for the whole batch.
    - ``mem_release_first_reuse_first``: scan the free pool FIFO instead of
      LIFO (graph attr ``_mem_release_first_reuse_first``, GetLastReleaseBlock).
    - ``time_limit``: seconds the compact strategy may spend improving a
      packing (None: the packer's fixed, deterministic budgets).
    """

    strategy: str = attrs.field(default="ge", validator=_strategy)
    reuse: bool = True
    block_align: int = attrs.field(default=512, validator=_positive)
    size_align: int = attrs.field(default=32, validator=_positive)
    size_padding: int = attrs.field(default=32, validator=_non_negative)
    weight_align: int = attrs.field(default=512, validator=_positive)
    no_zero_copy_ops: frozenset = attrs.field(default=frozenset(), converter=frozenset)
    batch_split_size: int | None = attrs.field(default=None, validator=_split)
    mem_release_first_reuse_first: bool = False
    time_limit: float | None = None
