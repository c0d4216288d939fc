"""A device probe: what a bare device did with a program of allocations, frees and accesses.

The checker relies on the device refusing illegal accesses (EXEC-NO-FAULT is only as good as
that). A probe puts the device itself to the test: a program mallocs and frees device memory
and launches tasks whose argument slots point in bounds, past the end of an allocation, into
freed memory, outside the device's memory, or write read-only memory. The observation lists,
in order, what the trace shows:

=============  ==============================================================================
kind           fields
=============  ==============================================================================
``alloc``      ``address``, ``size``, ``read_only``: a device allocation; ``refused``: the fault the
               device raised instead (``out_of_memory``: no address, ``size`` the bytes asked for)
``free``       ``address``: the allocation starting there was released; ``refused``: the fault the
               device raised instead (``double_free``, ``invalid_free``: nothing was released)
``access``     ``task``, ``reads``, ``writes``: the ranges a task's slots designated, or with ``task`` None
               a synchronous device-to-device copy's source and destination; ``refused``: the fault
               kind the device raised (None: it ran). A refusal the trace shows without the task's
               ranges (a fault before the slots were read) has none.
=============  ==============================================================================

``memory`` is the device's address space (its base and capacity), a fixed fact of the device,
and ``soc`` the name of its SoC profile (the spec looks up the allocation alignment it owns,
spec/capabilities.py). Nothing here says which accesses are legal: the spec derives that from
the ``alloc`` and ``free`` events alone, and the fault each illegal one deserves from them and
``memory``; likewise which mallocs had room and which frees named a live allocation
(spec/invariants/device_memory.py).

``kernel_runs`` are the probe's compute steps (:class:`KernelRun`): a kernel launched over inputs
and an output of given shapes, the bytes it read and the output's bytes before and after, and
what the device API raised. A refused kernel leaves nothing in the trace, so this record (made
by the probe, not the device) is where its refusal shows. Which ones were legal is again the
spec's to derive, from the shapes alone (spec/invariants/device_kernels.py). ``collective_runs``
(:class:`CollectiveRun`) are its collective steps over several devices: every rank's input and
output bytes, for the spec to recompute what each rank must hold. ``oracle_runs`` (:class:`OracleRun`) are its oracle steps: a
kernel of any op with attributes, its input and output bytes, and what onnxruntime computed (or
raised) for the same node on the same bytes. ``malloc_calls`` (:class:`MallocCall`) are its malloc steps as
it made them: the size and alignment asked for, and what the device API returned or raised. ``allocator_events`` (:class:`AllocatorEvent`) are its
runtime allocators' calls, each with the host thread that made it, and the memory tagged with their
names, as the device trace shows them (spec/invariants/allocator_threads.py).
"""
from __future__ import annotations

from typing import Literal

import attrs

from zcspec.spec.observables.trace import Range

DeviceEventKind = Literal["alloc", "free", "access"]


@attrs.frozen
class DeviceEvent:
    """One happening of a probe, in trace order; see the module doc for which fields each ``kind`` uses."""

    seq: int
    kind: DeviceEventKind
    address: int | None = None
    size: int | None = None
    read_only: bool = False
    task: str | None = None
    reads: tuple[Range, ...] = ()
    writes: tuple[Range, ...] = ()
    refused: str | None = None


@attrs.frozen
class KernelRun:
    """One compute step of a probe: task ``task`` runs kernel ``op_type`` on inputs of shapes ``a`` and
    ``b`` into an output of shape ``out``, all three of ``dtype``. A one-input kernel (Expand) has
    ``b == ()`` and ``b_bytes == ""``.

    ``a_bytes`` and ``b_bytes`` are the inputs' bytes at the launch, ``out_before`` and ``out_after``
    the output's before the launch and after the synchronize (hex text, little-endian elements in
    row-major order). ``refused`` is the name of the exception type the device API raised (None: none
    was raised) and ``message`` its text; ``step`` is the step's index in the program."""

    step: int
    task: str
    op_type: str
    dtype: str
    a: tuple[int, ...]
    b: tuple[int, ...]
    out: tuple[int, ...]
    a_bytes: str = ""
    b_bytes: str = ""
    out_before: str = ""
    out_after: str = ""
    refused: str | None = None
    message: str = ""


@attrs.frozen
class CollectiveRun:
    """One collective step of a probe: ``ranks`` devices in one communicator each launch collective
    ``op_type`` over an input of ``shape`` into an output of ``out`` (both of ``dtype``), with
    attributes ``attrs`` (``reduction``, ``root``). ``inputs[r]`` and ``outputs[r]`` are rank r's input
    bytes at the launch and output bytes after the synchronize (hex text, as in :class:`KernelRun`);
    ``refused``/``message`` what the device API raised, if anything."""

    step: int
    op_type: str
    ranks: int
    dtype: str
    shape: tuple[int, ...]
    out: tuple[int, ...]
    attrs: tuple[tuple[str, int | str], ...] = ()
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    refused: str | None = None
    message: str = ""


@attrs.frozen
class OracleTensor:
    """A tensor of an oracle step: its shape, dtype and (for inputs and onnxruntime's outputs) its bytes, hex
    text as in :class:`KernelRun`."""

    shape: tuple[int, ...]
    dtype: str
    data: str = ""


@attrs.frozen
class OracleRun:
    """One oracle step of a probe: task ``task`` runs kernel ``op_type`` with attributes ``attrs`` (JSON text)
    on ``inputs`` into output slots ``outs`` (their shapes and dtypes). ``before`` and ``after`` are each
    output's bytes before the launch and after the synchronize; ``refused``/``message`` what the device API
    raised. ``oracle`` is onnxruntime's outputs for a one-node ONNX model of the same op, attributes
    (``onnx_attrs``, JSON text; opset ``opset``) and input bytes, and ``oracle_error`` the error onnxruntime
    raised instead ("" when it ran)."""

    step: int
    task: str
    op_type: str
    attrs: str = "{}"
    onnx_attrs: str = "{}"
    opset: int = 13
    inputs: tuple[OracleTensor, ...] = ()
    outs: tuple[OracleTensor, ...] = ()
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    refused: str | None = None
    message: str = ""
    oracle: tuple[OracleTensor, ...] = ()
    oracle_error: str = ""


@attrs.frozen
class MallocCall:
    """One malloc step of a probe, as the probe made it: the ``size`` and alignment (``align``; None: the
    device's own) it asked for, the address the device API returned (None: none) and the name of the exception
    it raised (None: none was raised) with its text. The trace shows an allocation the call made, or the
    fault of one it was refused for want of memory; a call refused for its arguments leaves nothing there."""

    step: int
    size: int
    align: int | None = None
    address: int | None = None
    raised: str | None = None
    message: str = ""


@attrs.frozen
class LogicalPiece:
    """One piece of a model's feature-map memory as a caller hands it to runtime v1's active-memory allocator
    (GE's ``MemoryBlock`` of ``ActiveMemoryAllocator::MallocMemory``): where it starts in the model's logical
    memory, its bytes, whether it needs memory, whether it is the zero-copy piece."""

    offset: int
    size: int
    alloc: bool = True
    zero_copy: bool = False


@attrs.frozen
class ActiveMemoryRequest:
    """One ``malloc_memory`` call of a probe to runtime v1's active-memory allocator, as the probe made it: the
    pieces it passed, in order. Requests are listed in the order the calls entered (the probe's threads take
    turns), so the n-th is the n-th ``malloc_memory`` enter of a v1 active-memory allocator in the trace."""

    pieces: tuple[LogicalPiece, ...]


AllocatorEventKind = Literal["enter", "exit", "raise", "alloc", "free", "reserve", "release"]


@attrs.frozen
class AllocatorEvent:
    """One happening of a runtime allocator, in trace order (spec/invariants/allocator_threads.py):
    ``enter`` of its method ``call`` on host thread ``thread``, and its ``exit`` (returned) or ``raise``; ``alloc``/``free`` of device
    memory and ``reserve``/``release`` of a virtual range tagged with its name (``address``, ``size``).
    ``runtime`` (v1, v2) says whose allocator it is, so which threading contract it keeps."""

    seq: int
    kind: AllocatorEventKind
    allocator: str
    runtime: str
    call: str | None = None
    thread: int | None = None
    address: int | None = None
    size: int | None = None


@attrs.frozen
class DeviceObservation:
    """The events of one probe program run on a fresh device (``name`` identifies the program), and its
    compute steps' outcomes. ``counters``: what the device's own counters say of the whole program (its
    ``faults``, ``tasks_executed``, ``alloc_calls``, ``free_calls``...), copied as they are; empty when not
    transcribed. ``active_requests``: what the probe asked of runtime v1's active-memory allocators, recorded
    by the probe (the caller), not by the allocator."""

    name: str
    events: tuple[DeviceEvent, ...]
    memory: Range | None = None
    kernel_runs: tuple[KernelRun, ...] = ()
    collective_runs: tuple[CollectiveRun, ...] = ()
    soc: str | None = None
    oracle_runs: tuple[OracleRun, ...] = ()
    allocator_events: tuple[AllocatorEvent, ...] = ()
    counters: dict[str, int] = attrs.field(factory=dict)
    malloc_calls: tuple[MallocCall, ...] = ()
    active_requests: tuple[ActiveMemoryRequest, ...] = ()

    def accesses(self) -> tuple[DeviceEvent, ...]:
        return tuple(e for e in self.events if e.kind == "access")
