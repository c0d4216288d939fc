"""CompiledModel: everything a runtime needs, as one frozen value (what a .zcm file holds)."""
from __future__ import annotations

import attrs

from zcspec.impl.compiler.tasks.tasklist import TaskList


@attrs.frozen
class WeightEntry:
    """Weight ``name`` sits at ``offset`` in the weight region; ``data`` is its bytes
    (one element when ``splat``, broadcast to ``shape`` at load)."""

    name: str
    offset: int
    shape: tuple[int, ...] = attrs.field(converter=tuple)
    dtype: str
    splat: bool
    data: bytes = attrs.field(repr=lambda d: f"<{len(d)} bytes>")


@attrs.frozen
class CompiledModel:
    """``plan`` is the MemoryPlan's contract dict (DESIGN.md); ``regions`` maps region -> bytes."""

    name: str
    soc: str
    options: dict
    regions: dict
    plan: dict
    tasks: TaskList
    weights: tuple[WeightEntry, ...] = attrs.field(converter=tuple)

    @property
    def zero_copy_size(self) -> int:
        return self.regions.get("zero_copy", 0)

    @property
    def memory_size(self) -> int:
        """GE's ``memory_size`` attribute: feature map plus the zero-copy region (ge-facts.md 3.2.6)."""
        return self.regions.get("feature_map", 0) + self.zero_copy_size
