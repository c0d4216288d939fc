"""A loaded model as the spec sees it: options, the model's own regions, its I/O, its tasks as the
model file defines them, and the SoC it runs on (by name: what that SoC can do is the spec's own
data, spec/capabilities.py). ``copy_only`` is the runtime's own label, kept for reports: no claim's
verdict depends on it; the spec computes which I/O must be copied (spec/invariants/_copy_only.py)."""
from __future__ import annotations

from typing import Literal

import attrs

from zcspec.spec.observables.model_file import Role, Task, ZeroCopyEntry
from zcspec.spec.observables.trace import Event


@attrs.frozen
class LoadOptionsObservation:
    """Runtime options of a load (GE: davinci_model.cc `InitFeatureMapAndP2PMem`, lowering_opt.h
    `LoweringOption`; ``ge_compat`` reproduces GE's unchecked AllocModelOutTensor sharing,
    model_outputs.cc)."""

    runtime: Literal["v1", "v2"]
    zero_copy: bool = True
    reuse_zero_copy_memory: bool = False
    always_zero_copy: bool = False
    ge_compat: bool = False
    trust_shape_on_out_tensor: bool = False
    legacy_copy_only_addrs: bool = False   # v1 decides copies as GE's legacy paths do (copy_only_addrs_)
    single_stream: bool = False   # v2's enable_single_stream: the caller asked for every task on one stream


@attrs.frozen
class RegionBinding:
    """One of the model's own regions on the device. ``backed`` says whether the device trace shows memory under
    it: one live device allocation (the model's, its session's or the caller's) holding all of its bytes. It is
    False for an empty region and for one nothing was allocated for (the I/O region under reuseZeroCopyMemory,
    GE: davinci_model.cc `InitFeatureMapAndP2PMem`); an observer transcribes it from the trace, never from the
    runtime's own bookkeeping."""

    name: str
    address: int
    size: int
    backed: bool = True

    def contains(self, address: int) -> bool:
        return self.address <= address < self.address + self.size


@attrs.frozen
class IoTensor:
    """One model input or output: the model's own address for it (None: the runtime keeps none, as
    runtime v2, whose I/O is the caller's tensors), its padded ``size`` and raw
    ``raw_size`` (GE: zero_copy_offset.cc `InitInputDataInfo`, `InitOutputDataInfo`), whether its block is a zero-copy block (``_is_zero_copy_block``),
    whether an HCCL task without zero-copy support reads or writes it (GE: hccl_task_info.cc `HcclTaskInfo::SetAddrs`), where
    the model file places it (``region`` + ``offset``, the logical address task slots are written in),
    ``tensor``, the model file's name of its tensor (what a launch's ranges name; None: the display
    ``name`` is that name), and ``alias_root``, the tensor whose memory it shares by the model file's
    plan (the end of its ``alias_of`` chain; None: its own memory, or not transcribed)."""

    name: str
    role: Role
    model_address: int | None
    size: int
    raw_size: int
    zero_copy_block: bool = True
    hccl_no_zero_copy: bool = False
    region: str = "zero_copy"
    offset: int = 0
    tensor: str | None = None
    alias_root: str | None = None


@attrs.frozen
class LoadObservation:
    options: LoadOptionsObservation
    regions: tuple[RegionBinding, ...] = ()
    io: tuple[IoTensor, ...] = ()
    zero_copy_table: tuple[ZeroCopyEntry, ...] = ()
    copy_only: tuple[str, ...] = ()
    events: tuple[Event, ...] = ()
    tasks: tuple[Task, ...] = ()
    soc: str | None = None
    # The memory the caller gave the model (its work and weight memory, as the caller passed them: a
    # transcription of the call's arguments, not of the model's bases); None: the runtime allocated it.
    caller_memory: tuple[RegionBinding, ...] | None = None

    def region(self, name: str) -> RegionBinding | None:
        return next((r for r in self.regions if r.name == name), None)

    def io_tensor(self, name: str) -> IoTensor | None:
        return next((t for t in self.io if t.name == name), None)
