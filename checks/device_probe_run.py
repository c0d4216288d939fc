"""Running a device probe program (drawn by :mod:`zcspec.checks.strategies.device_probes`) on a fresh
emulated device: each step's allocation, access, compute, collective, oracle or allocator call, its
fault transcribed rather than raised, and for oracle steps onnxruntime's outputs on a one-node model of
the same bytes (an input's given ``values`` or the element-varying fill; ``onnx_only`` inputs and
``onnx_attrs`` go to onnxruntime alone; an accumulating kernel's outputs are cleaned to zero first, as the
runtime's atomic clean does; the step's allocations are freed after it). A copy step is a synchronous
``Device.memcpy`` (D2D) between the probe's scratch allocation and its target; the Fault the device records
for a copy it refuses names only the range that faulted, so the probe records the refused copy itself
(``RefusedCopy``: where in the trace, both ranges, the fault's kind), as it records a compute step's outcome.

``run_probe(steps)`` runs one (``run_program`` when only the device is wanted); ``observe_probe(scenario)``
runs one and transcribes the trace (with the device's memory and SoC name) and the compute records.
"""
from __future__ import annotations

import contextlib
import json
import math

import attrs
import numpy as np

from zcspec.checks.allocator_threads import run_allocator_threads
from zcspec.checks.errors import OracleUnavailable, ScenarioError
from zcspec.impl.device import (
    SLOT_BYTES, Device, DeviceError, DeviceFault, DeviceUsageError, HcclComm, HcclTask, KernelTask, MemsetTask,
    Slot,
)
from zcspec.impl.device.kernels import ACCUMULATES
from zcspec.impl.device.observe import RefusedCopy, observe_device
from zcspec.checks.onnxruntime_oracle import onnxruntime_node
from zcspec.spec.observables.device import (
    ActiveMemoryRequest, CollectiveRun, KernelRun, MallocCall, OracleRun, OracleTensor,
)

COLLECTIVES = ("HcomAllReduce", "HcomAllGather", "HcomBroadcast")   # the collectives a probe runs
PROBE_CAPACITY = 4 << 20   # the probe device's memory: small, so its allocator steps can fill it
_OUT_FILL = 0x5A   # an output's bytes before its launch: float16 203, float32 1.5e16, far above any sum or
                   # product of _fill's floats, so a kernel that wrote shows


def _bad(i: int, why: str) -> ScenarioError:
    return ScenarioError(f"device probe step {i}: {why}", key=f"runtime.program[{i}]")


def _int(step: dict, i: int, key: str, *, low: int | None = None) -> int:
    v = step.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or (low is not None and v < low):
        raise _bad(i, f"{key}={v!r} must be an int" + (f" >= {low}" if low is not None else ""))
    return v


def _address(step: dict, i: int, handles: list[int | None]) -> int | None:
    """Handle ``h``'s address plus the step's offset (the offset itself without a handle); None when the
    device refused handle ``h``'s malloc (the step is skipped: there is nothing to aim at)."""
    h, offset = step.get("handle"), _int(step, i, "offset")
    if h is None:
        return offset
    if not isinstance(h, int) or isinstance(h, bool) or not 0 <= h < len(handles):
        raise _bad(i, f"handle={h!r} names no earlier malloc (there are {len(handles)})")
    return None if handles[h] is None else handles[h] + offset


def _task(i: int, step: dict, args: int, scratch: int, address: int):
    """The task of an access step and the addresses of its slots."""
    n = _int(step, i, "nbytes", low=0)
    op, via = step.get("op"), step.get("via")
    if via == "memset" and op == "write":
        return MemsetTask(f"probe {i} memset", args=args, slots=(Slot("out", (n,), "uint8"),)), [address]
    if via != "kernel":
        raise _bad(i, f"via={via!r} must be 'kernel' or 'copy' (or 'memset' for a write)")
    task = KernelTask(f"probe {i} {op}", "MemcpyAsync", args, (Slot("in", (n,), "uint8"), Slot("out", (n,), "uint8")))
    return task, ([address, scratch] if op == "read" else [scratch, address])


def _shape(step: dict, i: int, key: str) -> tuple[int, ...]:
    v = step.get(key)
    if not isinstance(v, (list, tuple)) or not all(type(d) is int and d >= 0 for d in v):
        raise _bad(i, f"{key}={v!r} must be a list of ints >= 0 (a shape)")
    return tuple(v)


def _compute_slots(step: dict, i: int) -> tuple[Slot, ...]:
    """The input slots (two, one for a step without ``b``) and the output slot of a compute step
    (ScenarioError for a malformed one)."""
    keys = ("a", "b", "out") if "b" in step else ("a", "out")
    shapes = [_shape(step, i, key) for key in keys]
    if not isinstance(step.get("kernel"), str):
        raise _bad(i, f"kernel={step.get('kernel')!r} must be an op type, e.g. 'Add'")
    try:
        return tuple(Slot("out" if k == "out" else "in", shape, step.get("dtype")) for k, shape in zip(keys, shapes))
    except ValueError as e:   # an unknown dtype (UnknownDTypeError is a ValueError)
        raise _bad(i, f"dtype={step.get('dtype')!r}: {e}") from e


def _fill(dev: Device, addr: int, slot: Slot, salt: int) -> None:
    """Element k gets ``itemsize`` bytes of value 0x38 + (7k + salt) % 10: elements that differ, finite floats
    (float16 0.53 to 2.6, float32 4e-5 to 12)."""
    size = slot.np_dtype.itemsize
    for k in range(slot.nbytes // size):
        dev.memset(addr + k * size, size, 0x38 + (7 * k + salt) % 10)


def _bytes(dev: Device, addr: int, slot: Slot) -> str:
    return dev.peek(addr, (slot.nbytes,), "uint8").tobytes().hex()


def _prepare(dev: Device, i: int, slots) -> list[int]:
    """Fresh allocations for ``slots``: the inputs filled (salts 0 and 3), the output with _OUT_FILL bytes."""
    addrs = [dev.malloc(max(s.nbytes, 1), tag=f"probe {i} slot {j}") for j, s in enumerate(slots)]
    for k, (addr, s) in enumerate(zip(addrs[:-1], slots[:-1])):
        _fill(dev, addr, s, 3 * k)
    dev.memset(addrs[-1], slots[-1].nbytes, _OUT_FILL)
    return addrs


def _run_compute(dev: Device, i: int, step: dict, args: int) -> KernelRun | None:
    """Run compute step ``i`` in fresh allocations and record what happened (see the module doc).

    None when the device refused the host's own setup or read-back (a malloc, memset or peek that
    faulted): that fault is in the trace, where DEVICE-BOUNDS judges it, and there is no step to record."""
    slots = _compute_slots(step, i)
    task = KernelTask(f"probe {i} {step['kernel']}", step["kernel"], args, slots)
    try:
        addrs = _prepare(dev, i, slots)
        recorded = [_bytes(dev, addr, s) for addr, s in zip(addrs, slots)]
    except DeviceFault:
        return None
    refused, message = None, ""
    try:
        dev.write_args(task, addrs)
        dev.launch(task)
        dev.synchronize()
    except DeviceError as e:   # the device refusing the task, transcribed; any other exception is a crash
        refused, message = type(e).__name__, str(e)
    try:
        after = _bytes(dev, addrs[-1], slots[-1])
    except DeviceFault:
        return None
    a, b = slots[0], slots[1] if len(slots) == 3 else None
    return KernelRun(i, task.name, task.op_type, step["dtype"], a.shape, () if b is None else b.shape, slots[-1].shape,
                     a_bytes=recorded[0], b_bytes="" if b is None else recorded[1], out_before=recorded[-1],
                     out_after=after, refused=refused, message=message)


def _run_collective(dev: Device, i: int, step: dict) -> CollectiveRun | None:
    """Run collective step ``i`` with ``dev`` as rank 0 of a fresh communicator (see the module doc);
    None when the device refused the host's own setup or read-back, as for a compute step."""
    op, ranks, shape = step.get("kernel"), _int(step, i, "ranks", low=1), _shape(step, i, "shape")
    if op not in COLLECTIVES:
        raise _bad(i, f"kernel={op!r} must be one of {list(COLLECTIVES)}")
    if ranks > 8 or math.prod(shape) > 4096:
        raise _bad(i, f"ranks={ranks} and shape={list(shape)} must stay within 8 ranks of 4096 elements")
    out = ((ranks * shape[0],) + shape[1:]) if op == "HcomAllGather" and shape else shape
    root = _int(step, i, "root") if "root" in step else 0   # an int: what the device makes of it is the probe's
    attrs_ = (("reduction", str(step.get("reduction", "sum"))), ("root", root))
    devs = [dev] + [Device(dev.soc.name, device_id=r, capacity=1 << 20) for r in range(1, ranks)]
    comm = f"probe {i}"
    HcclComm(devs, comm)
    slots = (Slot("in", shape, step.get("dtype")), Slot("out", out, step.get("dtype")))
    tasks, addrs = [], []
    try:   # the host's own setup: a fault here is in the trace (DEVICE-BOUNDS), with no step to record
        for r, d in enumerate(devs):
            a = [d.malloc(max(s.nbytes, 1), tag=f"probe {i} rank {r} {s.role}") for s in slots]
            _fill(d, a[0], slots[0], 3 * r + 1)   # salts 1, 4, 7, 0: every rank its own bytes
            d.memset(a[1], slots[1].nbytes, _OUT_FILL)
            task = HcclTask(f"probe {i} {op} rank {r}", op, d.malloc(2 * SLOT_BYTES, tag=f"probe {i} rank {r} args"),
                            slots, attrs_, comm=comm)
            d.write_args(task, a)
            tasks.append(task)
            addrs.append(a)
        inputs = tuple(_bytes(d, a[0], slots[0]) for d, a in zip(devs, addrs))
    except DeviceFault:
        return None
    refused, message = None, ""
    try:
        for d, t in zip(devs, tasks):
            d.launch(t)
        dev.synchronize()
    except DeviceError as e:
        refused, message = type(e).__name__, str(e)
    try:
        outputs = tuple(_bytes(d, a[1], slots[1]) for d, a in zip(devs, addrs))
    except DeviceFault:
        return None
    return CollectiveRun(i, op, ranks, slots[0].dtype, shape, out, attrs_, inputs, outputs, refused, message)


def _fill_small(dev: Device, addr: int, slot: Slot, salt: int) -> None:
    """An integer tensor's element k gets the value (7k + salt) % 10 (small: sums and products stay exact)."""
    size = slot.np_dtype.itemsize
    dev.memset(addr, slot.nbytes, 0)
    for k in range(slot.nbytes // size):
        dev.memset(addr + k * size, 1, (7 * k + salt) % 10)


def _oracle_slots(step: dict, i: int) -> tuple[list[Slot], list[int], list]:
    """The kernel's input and output slots of an oracle step, each input's ONNX input position (the kernel's
    inputs first, then the ``onnx_only`` ones) and each input's given values (None: the default fill)."""
    ins, outs = step.get("inputs"), step.get("outs")
    if not isinstance(ins, list) or not isinstance(outs, list) or not outs or not all(
            isinstance(x, dict) for x in ins + outs):
        raise _bad(i, "an oracle step needs inputs and outs: lists of {shape, dtype}")
    ins = [x for x in ins if not x.get("onnx_only")] + [x for x in ins if x.get("onnx_only")]
    try:
        slots = [Slot("in", _shape(x, i, "shape"), x.get("dtype")) for x in ins]
        slots += [Slot("out", _shape(x, i, "shape"), x.get("dtype")) for x in outs]
    except ValueError as e:
        raise _bad(i, f"dtype: {e}") from e
    positions = [x.get("index", k) for k, x in enumerate(ins)]
    if len(set(positions)) != len(positions) or not all(type(p) is int and 0 <= p < 16 for p in positions):
        raise _bad(i, f"input indices {positions!r} must be distinct ints in 0..15")
    values = [_values(x, s, i) for x, s in zip(ins, slots)]
    if any(x.get("onnx_only") and v is None for x, v in zip(ins, values)):
        raise _bad(i, "an onnx_only input needs its values")
    return slots, positions, values


def _values(x: dict, slot: Slot, i: int) -> np.ndarray | None:
    """An input's ``values`` (a flat list) as a tensor of its slot's shape and dtype; None without them."""
    if "values" not in x:
        return None
    v = x["values"]
    if not isinstance(v, list) or len(v) != math.prod(slot.shape) or not all(
            isinstance(e, (int, float)) for e in v):
        raise _bad(i, f"values={v!r} must be a flat list of {math.prod(slot.shape)} numbers (shape {list(slot.shape)})")
    return np.asarray(v).astype(slot.np_dtype).reshape(slot.shape)


def _write(dev: Device, addr: int, value: np.ndarray) -> None:
    """``value``'s bytes into device memory at ``addr``, one memset per run of equal bytes (a probe's trace
    holds device-side events only: no host staging copy)."""
    raw = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
    starts = np.flatnonzero(np.diff(raw, prepend=np.int16(-1)) != 0) if raw.size else np.zeros(0, np.int64)
    for begin, end in zip(starts.tolist(), starts[1:].tolist() + [raw.size]):
        dev.memset(addr + begin, end - begin, int(raw[begin]))


_RECURRENT = ("LSTM", "GRU", "RNN")


def _onnxruntime(op: str, feeds: list, n_outputs: int, onnx_attrs: dict, opset: int) -> list:
    """onnxruntime's outputs for the node. Its CPU kernels refuse a batch-first recurrent node (layout 1), so
    that one runs as ONNX defines layout 1: X and the initial states time-major (layout 0), Y and the final
    states transposed back."""
    if op not in _RECURRENT or not onnx_attrs.get("layout", 0):
        return onnxruntime_node(op, feeds, n_outputs, onnx_attrs, opset)
    moved = [None if a is None else a.transpose(1, 0, 2) if k in (0, 5, 6) else a for k, a in enumerate(feeds)]
    got = onnxruntime_node(op, moved, n_outputs, {**onnx_attrs, "layout": 0}, opset)
    return [g.transpose(2, 0, 1, 3) if k == 0 else g.transpose(1, 0, 2) for k, g in enumerate(got)]


def _run_oracle(dev: Device, i: int, step: dict) -> OracleRun | None:
    """Run oracle step ``i``: its kernel on fresh, filled inputs, and onnxruntime on the same bytes (see the
    module doc); None when the device refused the host's own setup or read-back, or onnxruntime is missing."""
    op, attrs_ = step.get("kernel"), step.get("attrs", {})
    if not isinstance(op, str) or not isinstance(attrs_, dict):
        raise _bad(i, "an oracle step needs kernel (an op type) and attrs (a dict)")
    slots, positions, values = _oracle_slots(step, i)
    n_only = sum(1 for x in step["inputs"] if x.get("onnx_only"))
    n_in = len(positions) - n_only   # the kernel's inputs; the onnx_only ones are onnxruntime's alone
    only = [(s, v) for s, v in zip(slots[n_in:len(positions)], values[n_in:])]
    slots = slots[:n_in] + slots[len(positions):]
    onnx_given = step.get("onnx_attrs", attrs_)
    if not isinstance(onnx_given, dict):
        raise _bad(i, "onnx_attrs must be a dict (onnxruntime's attributes)")
    kernel_attrs = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attrs_.items()))
    onnx_attrs = tuple(sorted((k, v) for k, v in onnx_given.items() if not k.startswith("_")))
    task = KernelTask(f"probe {i} {op}", op, 0, tuple(slots), kernel_attrs)
    try:
        addrs = [dev.malloc(max(s.nbytes, 1), tag=f"probe {i} slot {j}") for j, s in enumerate(slots)]
        task = attrs.evolve(task, args=dev.malloc(SLOT_BYTES * len(slots), tag=f"probe {i} args"))
        for k, (a, s, v) in enumerate(zip(addrs[:n_in], slots[:n_in], values)):
            if v is not None:
                _write(dev, a, v)
            else:
                (_fill if s.np_dtype.kind == "f" else _fill_small)(dev, a, s, 3 * k)
        for a, s in zip(addrs[n_in:], slots[n_in:]):   # an accumulating kernel's: cleaned, as the runtime does
            dev.memset(a, s.nbytes, 0 if op in ACCUMULATES else _OUT_FILL)
        inputs = [_bytes(dev, a, s) for a, s in zip(addrs[:n_in], slots[:n_in])]
        before = tuple(_bytes(dev, a, s) for a, s in zip(addrs[n_in:], slots[n_in:]))
    except DeviceFault:
        return None
    feeds = [None] * (max(positions, default=-1) + 1)
    for p, text, s in zip(positions, inputs, slots):
        feeds[p] = np.frombuffer(bytes.fromhex(text), s.np_dtype).reshape(s.shape)
    for p, (s, v) in zip(positions[n_in:], only):
        feeds[p] = v
    oracle, oracle_error = (), ""
    try:
        got = _onnxruntime(op, feeds, len(slots) - n_in, dict(onnx_attrs), int(step.get("opset", 13)))
        oracle = tuple(OracleTensor(tuple(g.shape), str(g.dtype), np.ascontiguousarray(g).tobytes().hex())
                       for g in got)
    except OracleUnavailable:
        return None
    except Exception as e:   # onnxruntime refusing the node or its inputs: its verdict, transcribed
        oracle_error = f"{type(e).__name__}: {e}"
    refused, message = None, ""
    try:
        dev.write_args(task, addrs)
        dev.launch(task)
        dev.synchronize()
    except DeviceError as e:
        refused, message = type(e).__name__, str(e)
    try:
        after = tuple(_bytes(dev, a, s) for a, s in zip(addrs[n_in:], slots[n_in:]))
        for a in addrs + [task.args]:   # given back: a program's many oracle steps leave the allocator steps room
            dev.free(a)
    except DeviceFault:
        return None
    return OracleRun(i, task.name, op, json.dumps(dict(kernel_attrs), sort_keys=True),
                     json.dumps(dict(onnx_attrs), sort_keys=True), int(step.get("opset", 13)),
                     tuple(OracleTensor(s.shape, s.dtype, t) for s, t in zip(slots, inputs)),
                     tuple(OracleTensor(s.shape, s.dtype) for s in slots[n_in:]), before, after, refused, message,
                     oracle, oracle_error)


@attrs.frozen
class ProbeRun:
    """A probe program run: the device after it, and the record of each compute and collective step in
    program order, and of each copy step the device refused."""

    device: Device
    kernel_runs: tuple[KernelRun, ...]
    collective_runs: tuple[CollectiveRun, ...] = ()
    oracle_runs: tuple[OracleRun, ...] = ()
    refused_copies: tuple[RefusedCopy, ...] = ()
    malloc_calls: tuple[MallocCall, ...] = ()
    active_requests: tuple[ActiveMemoryRequest, ...] = ()


def _malloc(dev: Device, i: int, step: dict, handle: int) -> MallocCall:
    """Malloc step ``i``: ``size`` bytes (any int: the device judges it) at the step's ``align`` (optional),
    recorded as made with what the device API returned or raised. Refused for want of memory, the fault is in
    the trace too (DEVICE-ALLOC-FIT); refused for its arguments (a usage error), only in this record
    (DEVICE-MALLOC-ARGS). Any other exception propagates, a crash of the probe."""
    size = _int(step, i, "size")
    align = step.get("align")
    if align is not None:
        align = _int(step, i, "align")
    try:
        address = dev.malloc(size, align, tag=f"probe {handle}", read_only=bool(step.get("read_only")))
    except (DeviceFault, DeviceUsageError) as e:
        return MallocCall(i, size, align, None, type(e).__name__, str(e))
    return MallocCall(i, size, align, address)


def _copy(dev: Device, i: int, step: dict, scratch: int, address: int) -> RefusedCopy | None:
    """Copy step ``i``: a synchronous D2D copy of ``nbytes`` from ``address`` into scratch (a read) or from
    scratch to ``address`` (a write). The Fault ``Device.memcpy`` records for a copy it refuses names only the
    range that faulted, so the refused copy is recorded here (its trace position, both ranges, the kind raised)
    for the observation to transcribe; any exception that is not a DeviceFault propagates, a crash of the probe."""
    n = _int(step, i, "nbytes", low=0)
    dst, src = (scratch, address) if step["op"] == "read" else (address, scratch)
    position = len(dev.trace)   # where the Fault of a refusal lands
    try:
        dev.memcpy(dst, src, n, "d2d")
    except DeviceFault as f:
        return RefusedCopy(position, dst, src, n, f.kind)
    return None


def run_probe(steps, soc: str = "ascend910b") -> ProbeRun:
    """``steps`` run on a fresh device (trace from position 0); ScenarioError names a bad step."""
    if not isinstance(steps, (list, tuple)):
        raise ScenarioError(f"device probe program must be a list of steps, got {type(steps).__name__}",
                            key="runtime.program")
    dev = Device(soc, capacity=PROBE_CAPACITY)
    largest = max([s.get("nbytes", 0) for s in steps if isinstance(s, dict) and isinstance(s.get("nbytes"), int)] + [1])
    args = dev.malloc(3 * SLOT_BYTES, tag="probe argument table")
    scratch = dev.malloc(largest, tag="probe scratch")
    handles: list[int | None] = []   # None: a malloc the device refused
    runs: list[KernelRun] = []
    collectives: list[CollectiveRun] = []
    oracles: list[OracleRun] = []
    copies: list[RefusedCopy] = []
    mallocs: list[MallocCall] = []
    asked: list[ActiveMemoryRequest] = []
    for i, step in enumerate(steps):
        op = step.get("op") if isinstance(step, dict) else None
        if op == "malloc":
            call = _malloc(dev, i, step, len(handles))
            mallocs.append(call)
            handles.append(call.address)
        elif op == "free":
            address = _address({"offset": 0, **step}, i, handles)
            if address is not None:
                with contextlib.suppress(DeviceFault):   # a refused free: in the trace (DEVICE-ALLOC-FIT)
                    dev.free(address)
        elif op in ("read", "write") and step.get("via") == "copy":
            address = _address(step, i, handles)
            if address is not None:
                refused = _copy(dev, i, step, scratch, address)
                if refused is not None:
                    copies.append(refused)
        elif op in ("read", "write"):
            address = _address(step, i, handles)
            if address is None:
                continue
            task, slots = _task(i, step, args, scratch, address)
            # A refusal is recorded in the trace (a refused argument table too), where the spec judges it.
            with contextlib.suppress(DeviceFault):
                dev.write_args(task, slots)
                dev.launch(task)
                dev.synchronize()
        elif op == "compute":
            run = _run_compute(dev, i, step, args)
            if run is not None:
                runs.append(run)
        elif op == "collective":
            run = _run_collective(dev, i, step)
            if run is not None:
                collectives.append(run)
        elif op == "allocator_threads":
            asked += run_allocator_threads(dev, step, f"device probe step {i}")
        elif op == "oracle":
            run = _run_oracle(dev, i, step)
            if run is not None:
                oracles.append(run)
        else:
            raise _bad(i, f"op={op!r} must be one of malloc, free, read, write, compute, collective, oracle, "
                          "allocator_threads")
    return ProbeRun(dev, tuple(runs), tuple(collectives), tuple(oracles), tuple(copies), tuple(mallocs), tuple(asked))


def run_program(steps, soc: str = "ascend910b") -> Device:
    """The device after ``run_probe(steps, soc)``, for callers that read only its trace."""
    return run_probe(steps, soc).device


def observe_probe(scenario) -> list:
    """The observation of a ``device`` scenario: its program run on a fresh device of its SoC."""
    program_ = scenario.runtime.get("program")
    run = run_probe(program_, scenario.compile.soc)
    dev = run.device
    return [observe_device(dev.trace, 0, name=f"device probe of {len(program_)} steps",
                           memory=(dev.mem.base, dev.mem.capacity), kernel_runs=run.kernel_runs,
                           collective_runs=run.collective_runs, soc=dev.soc.name, oracle_runs=run.oracle_runs,
                           counters=dev.counters.as_dict(), refused_copies=run.refused_copies,
                           malloc_calls=run.malloc_calls, active_requests=run.active_requests)]
