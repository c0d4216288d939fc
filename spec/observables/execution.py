"""One execute call as the spec sees it: the user's buffers, the slots after refresh, the trace, the outputs."""
from __future__ import annotations

from typing import Literal

import attrs

from zcspec.spec.errors import ObservationConsistencyError
from zcspec.spec.observables.load import LoadObservation, RegionBinding
from zcspec.spec.observables.model_file import Role
from zcspec.spec.observables.trace import Event


@attrs.frozen
class UserBuffer:
    """The buffer the user bound to I/O ``name``; ``address`` 0 means none was given (null)."""

    name: str
    role: Role
    address: int
    size: int
    placement: Literal["device", "host"] = "device"

    def contains(self, address: int) -> bool:
        return self.address <= address < self.address + self.size


# An argument slot holds one 64-bit address (kAddrSize, runtime/v1/graph/load/model_manager/davinci_model.cc).
ADDR_BYTES = 8


@attrs.frozen
class SlotValue:
    """The address slot ``index`` of task ``task`` held when the task ran."""

    task: int
    index: int
    value: int


@attrs.frozen
class OutputResult:
    """An output's digest; ``peer_digest`` is the other runtime's (v1 vs v2), ``oracle_max_abs_diff``
    the largest difference to the independent reference (relative to its largest magnitude), within
    ``tolerance`` when correct (the checker states it per output: coarser for float16 and bfloat16 outputs,
    finer for float64 ones, checks/execution/judge.py ``tolerance_for``)."""

    name: str
    digest: str
    peer_digest: str | None = None
    oracle_max_abs_diff: float | None = None
    tolerance: float = 1e-4


@attrs.frozen
class CallResult:
    """Whether the call succeeded; its error message as the caller received it, and the buffer it blames."""

    ok: bool
    error: str | None = None
    culprit: str | None = None


@attrs.frozen
class OutputTensor:
    """The caller's tensor of output ``name``: its shape as the caller passed it (``given``; None: none
    set), as it is after the call (``after``), and the output's shape the model file states (``computed``)."""

    name: str
    given: tuple[int, ...] | None
    after: tuple[int, ...] | None
    computed: tuple[int, ...]


@attrs.frozen
class ExecutionObservation:
    """One execute call of a loaded model.

    ``io_addresses`` maps each I/O name to the device address the runtime says the
    model's tasks read or wrote for it in this call (the user's buffer under zero
    copy, the model's or a runtime allocation otherwise): the runtime's own record,
    kept as a label for reports; no claim reads it (the trace's launches and copies
    say where the tasks went). ``counters`` are the
    device's counters of the call alone, as the device reports them (field name
    -> count; empty when not transcribed). ``out_tensors``: the caller's output
    tensor objects (runtime v2's API hands them back with a shape; empty for v1).
    ``caller_memory``: the memory the caller had given the model when it made this call (its work and
    weight memory, as the caller's own load and move calls gave them: a RegionBinding each, named
    ``work`` or ``weight``); None when the observer does not know the caller's calls, and then the
    model's bound regions (``load.regions``) stand in for it.

    A model is unloaded once: ``events`` hold at most one ``unload`` (the unload that follows the model's
    last call); a second one is refused as a trace no runtime can have made.
    """

    load: LoadObservation
    buffers: tuple[UserBuffer, ...] = ()
    slots: tuple[SlotValue, ...] = ()
    io_addresses: dict[str, int] = attrs.field(factory=dict)
    events: tuple[Event, ...] = ()
    outputs: tuple[OutputResult, ...] = ()
    result: CallResult = attrs.field(factory=lambda: CallResult(ok=True))
    counters: dict[str, int] = attrs.field(factory=dict)
    out_tensors: tuple[OutputTensor, ...] = ()
    caller_memory: tuple[RegionBinding, ...] | None = None

    def __attrs_post_init__(self) -> None:
        unloads = [i for i, e in enumerate(self.events) if e.kind == "unload"]
        if len(unloads) > 1:
            raise ObservationConsistencyError(
                f"{len(unloads)} unload events (seq {', '.join(str(self.events[i].seq) for i in unloads)}): a model "
                "is unloaded once", path=f"events[{unloads[1]}]")

    def buffer(self, name: str) -> UserBuffer | None:
        return next((b for b in self.buffers if b.name == name), None)
