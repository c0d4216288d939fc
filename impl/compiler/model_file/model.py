"""CompiledModel: everything a runtime needs, as one frozen value (what a .zcm file holds)."""
from __future__ import annotations

import attrs

from zcspec.impl.compiler.memory.plan_types import MemoryPlan
from zcspec.impl.compiler.options import CompileOptions
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
    """The compiler's last artefact, typed all the way: the options it was built with, the MemoryPlan,
    the TaskList and the weights. ``regions`` (region -> bytes) are the plan's."""

    name: str
    options: CompileOptions
    plan: MemoryPlan
    tasks: TaskList
    weights: tuple[WeightEntry, ...] = attrs.field(converter=tuple)

    @property
    def soc(self) -> str:
        return self.options.soc

    @property
    def regions(self) -> dict[str, int]:
        return dict(self.plan.regions)

    @property
    def zero_copy_size(self) -> int:
        return self.plan.attributes.zero_copy_memory_size

    @property
    def memory_size(self) -> int:
        """GE's ``memory_size`` attribute: feature map plus the zero-copy region (GE: model_builder.cc
        ``BuildModelDefForMem``)."""
        return self.plan.attributes.memory_size
