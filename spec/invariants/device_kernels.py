"""Device kernels: a kernel computes what ONNX and HCCL define, or is refused when its operands do not fit.

Applies to device probes. Every claim that a run computed its outputs trusts the device to refuse
a kernel whose operands do not fit, and to compute what the op defines when they do: a probe's
compute steps are judged from their shapes and recorded bytes alone (ONNX broadcasting,
onnxruntime on the same node), and its collectives from every rank's recorded input (HCCL's
definitions). The access and memory claims are spec/invariants/device_memory.py.
"""
from __future__ import annotations

import math

import numpy as np

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.observables.device import CollectiveRun, DeviceObservation, KernelRun, OracleRun


# -- DEVICE-KERNEL-REFUSAL ----------------------------------------------------------------------

# The elementwise binaries a probe launches, as ONNX defines them, and the dtypes the spec can read.
_BINARIES = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}
_DTYPES = {"float16": "<f2", "float32": "<f4", "float64": "<f8", "int8": "i1", "int16": "<i2",
           "int32": "<i4", "int64": "<i8", "uint8": "u1", "bool": "?"}


def broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """ONNX multidirectional broadcasting: shapes aligned at their last axis, each axis's lengths equal
    or 1, the result the longest of each; None when they do not broadcast (or a length is negative)."""
    if any(d < 0 for s in shapes for d in s):
        return None
    rank = max(map(len, shapes), default=0)
    out = []
    for dims in zip(*((1,) * (rank - len(s)) + tuple(s) for s in shapes)):
        lengths = {d for d in dims if d != 1}
        if len(lengths) > 1:
            return None
        out.append(lengths.pop() if lengths else 1)
    return tuple(out)


def _legal(r: KernelRun) -> bool | None:
    """Whether the spec's rule admits ``r``; None when it cannot judge (an op or dtype it does not know).
    Expand (one input) fits when its input broadcasts to the output shape, its target."""
    if r.op_type not in _BINARIES and r.op_type != "Expand" or r.dtype not in _DTYPES:
        return None
    if r.op_type == "Expand":
        return broadcast(r.a, r.out) == tuple(r.out)
    return broadcast(r.a, r.b) == r.out


def _tensor(text: str, shape: tuple[int, ...], dtype: str) -> np.ndarray | None:
    """The recorded bytes ``text`` as a tensor of ``shape``; None when they are not one."""
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        return None
    dt = np.dtype(_DTYPES[dtype])
    if len(raw) != math.prod(shape) * dt.itemsize:
        return None
    return np.frombuffer(raw, dt).reshape(shape)


def _wrong_elements(r: KernelRun):
    """Why the output of a step that ran is not op(a, b), or None when it is (compared byte for byte)."""
    a, got = _tensor(r.a_bytes, r.a, r.dtype), _tensor(r.out_after, r.out, r.dtype)
    b = a if r.op_type == "Expand" else _tensor(r.b_bytes, r.b, r.dtype)
    if a is None or b is None or got is None:
        return "its recorded bytes are not tensors of its shapes and dtype"
    with np.errstate(all="ignore"):
        want = (np.broadcast_to(a, got.shape) if r.op_type == "Expand"
                else np.asarray(_BINARIES[r.op_type](a, b))).astype(got.dtype)
    # Byte for byte, element by element: a NaN the kernel left is compared as the bits it is.
    bad = np.flatnonzero((got.reshape(-1, 1).view(np.uint8) != want.reshape(-1, 1).view(np.uint8)).any(axis=1))
    if len(bad) == 0:
        return None
    i = int(bad[0])
    return (f"its output differs from {r.op_type}(a, b) at {len(bad)} of {got.size} elements (first at flat "
            f"index {i}: got {got.reshape(-1)[i]!r}, want {want.reshape(-1)[i]!r})")


def _kernel_refusal(obs: DeviceObservation):
    for r in obs.kernel_runs:
        legal = _legal(r)
        if legal is None:
            continue
        culprit = f"compute step {r.step} (task {r.task!r})"
        unary = r.op_type == "Expand"
        shapes = f"input {list(r.a)}" if unary else f"inputs {list(r.a)} and {list(r.b)}"
        if legal:
            if r.refused is not None:
                yield violation(culprit, f"was refused ({r.refused}: {r.message}) although its {shapes} broadcast "
                                f"to its output shape {list(r.out)}", refused=r.refused)
            elif (why := _wrong_elements(r)) is not None:
                yield violation(culprit, f"ran, but {why}")
            continue
        target = broadcast(r.a, r.out) if unary else broadcast(r.a, r.b)
        why = ("does not broadcast to its output shape" if unary else "do not broadcast" if target is None
               else f"broadcast to {list(target)}, not {list(r.out)}")
        if r.refused is None:
            yield violation(culprit, f"ran, although its {shapes} {why}: the device must refuse it")
        elif r.refused != "KernelError":
            yield violation(culprit, f"was refused with {r.refused}, not KernelError (its {shapes} {why})",
                            refused=r.refused)
        elif r.task not in r.message:
            yield violation(culprit, f"was refused, but the refusal does not name the task: {r.message!r}")
        if r.out_after != r.out_before:
            yield violation(culprit, f"was not allowed to run (its {shapes} {why}), yet its output bytes changed",
                            refused=r.refused)


def _legal_and_illegal_kernels(obs: DeviceObservation) -> bool:
    """Exercised when the probe launched a kernel the rule admits and one it does not."""
    return {_legal(r) for r in obs.kernel_runs} >= {True, False}


KERNEL_REFUSAL = Invariant(
    id="DEVICE-KERNEL-REFUSAL",
    title="The device refuses exactly the kernels whose operands do not fit",
    statement="A probe's elementwise binary kernel (Add, Sub, Mul) runs if and only if its two input shapes "
              "broadcast (ONNX multidirectional broadcasting) to exactly its output shape, and an Expand if and "
              "only if its input broadcasts to its output shape. One that runs raises nothing and leaves in its "
              "output op(a, b) of the input bytes it was given (an Expand: its input broadcast); one that does not fit "
              "is refused with a KernelError naming the task and leaves its output bytes as they were.",
    rationale="Every claim that a run computed its outputs relies on the device refusing a kernel whose operands "
              "a compiler bug mis-shaped: a device that swallows the error, or writes before refusing, turns a "
              "mis-shaped task into silently wrong outputs. Legality is recomputed here from the shapes alone, "
              "never asked of the device.",
    ge_source="runtime/v1/graph/load/model_manager/task_info/fe/kernel_task_info.cc KernelTaskInfo::Distribute "
              "and DistributeTask (the launch, KernelHandleUtils::LaunchKernel, under GE_ASSERT_SUCCESS: a "
              "launch the runtime rejects fails the task with an error status, never skipped); the broadcast "
              "rule is ONNX's (docs/Broadcasting.md), the refusal the emulated device's KernelError",
    applies_to="device", concern="device_kernels", predicate=_kernel_refusal, precondition=_legal_and_illegal_kernels,
)


# -- DEVICE-COLLECTIVE --------------------------------------------------------------------------

# What each rank holds after a collective, as HCCL defines them (HcclAllReduce, HcclAllGather,
# HcclBroadcast): the reduction of every rank's input, the inputs concatenated in rank order along
# axis 0, or the root rank's input.
_REDUCTIONS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def _collective_want(r: CollectiveRun) -> tuple[list, str | None]:
    """Every rank's expected output, or why the spec cannot say (a malformed record or an unknown op)."""
    ins = [_tensor(x, r.shape, r.dtype) for x in r.inputs] if r.dtype in _DTYPES else [None]
    if r.ranks < 1 or len(r.inputs) != r.ranks or len(r.outputs) != r.ranks or any(x is None for x in ins):
        return [], "its recorded bytes are not one tensor of its shape per rank"
    attrs_ = dict(r.attrs)
    if r.op_type == "HcomAllReduce":
        op = _REDUCTIONS.get(str(attrs_.get("reduction", "sum")).lower())
        if op is None:
            return [], None
        with np.errstate(all="ignore"):
            total = op.reduce(np.stack(ins), axis=0)
        return [total] * r.ranks, None
    if r.op_type == "HcomAllGather":
        if not r.shape or tuple(r.out) != (r.ranks * r.shape[0],) + tuple(r.shape[1:]):
            return [], f"its output shape {list(r.out)} is not the ranks' inputs {list(r.shape)} stacked on axis 0"
        return [np.concatenate(ins, axis=0)] * r.ranks, None
    if r.op_type == "HcomBroadcast":
        root = attrs_.get("root", 0)
        return ([ins[root]] * r.ranks, None) if isinstance(root, int) and 0 <= root < r.ranks else ([], None)
    return [], None


def _collective(obs: DeviceObservation):
    for r in obs.collective_runs:
        culprit = f"collective step {r.step} ({r.op_type} over {r.ranks} ranks)"
        want, why = _collective_want(r)
        if why is not None:
            yield violation(culprit, why)
            continue
        if not want:
            continue
        if r.refused is not None:
            yield violation(culprit, f"was refused ({r.refused}: {r.message}), although every rank launched it "
                            f"with fitting buffers", refused=r.refused)
            continue
        for rank, (text, w) in enumerate(zip(r.outputs, want)):
            got = _tensor(text, r.out, r.dtype)
            if got is None or got.shape != w.shape:
                yield violation(culprit, f"rank {rank}'s output bytes are not a tensor of shape {list(r.out)}")
            elif not np.allclose(got, w, rtol=1e-6, atol=0, equal_nan=True):
                bad = int(np.flatnonzero(~np.isclose(got, w, rtol=1e-6, atol=0, equal_nan=True).reshape(-1))[0])
                yield violation(culprit, f"rank {rank} holds {got.reshape(-1)[bad].item()!r} at flat index {bad}, but "
                                f"{r.op_type} of the ranks' inputs gives {w.reshape(-1)[bad].item()!r}", rank=rank)


def _several_ranks(obs: DeviceObservation) -> bool:
    return any(r.ranks >= 2 for r in obs.collective_runs)


COLLECTIVE = Invariant(
    id="DEVICE-COLLECTIVE",
    title="A collective gives every rank what HCCL defines",
    statement="When every rank of a communicator launches one collective with fitting buffers, it runs, and "
              "afterwards each rank's output holds: for HcomAllReduce, the reduction (sum, prod, max or min) of "
              "all ranks' inputs; for HcomAllGather, the inputs concatenated in rank order along axis 0; for "
              "HcomBroadcast, the root rank's input.",
    rationale="HCCL tasks are where zero copy and multi-device execution meet: a collective that runs before "
              "its peers arrive, or runs alone, leaves a rank with its own input where the reduction should "
              "be, and the models above it compute silently wrong results. What each rank must hold is "
              "recomputed here from the inputs the probe recorded, never asked of the device.",
    ge_source="runtime/v1/graph/load/model_manager/task_info/hccl/hccl_task_info.cc (HcclTaskInfo::Distribute: "
              "the collective launched on every rank's stream); HCCL's HcclAllReduce, HcclAllGather, "
              "HcclBroadcast",
    applies_to="device", concern="device_kernels", predicate=_collective, precondition=_several_ranks,
)


# -- DEVICE-KERNEL-ORACLE -----------------------------------------------------------------------

_RTOL, _ATOL = 1e-4, 1e-5   # floats: onnxruntime computes in float32, the device may in float64


def _oracle_fits(r: OracleRun) -> bool:
    """Whether onnxruntime ran the node and gave outputs of exactly the output slots' shapes and dtypes."""
    return not r.oracle_error and len(r.oracle) == len(r.outs) and all(
        tuple(o.shape) == tuple(s.shape) and o.dtype == s.dtype for o, s in zip(r.oracle, r.outs))


def _oracle_differs(r: OracleRun):
    """Why the device's outputs are not onnxruntime's, or None when they agree (floats within _RTOL/_ATOL)."""
    for k, (slot, text, want_) in enumerate(zip(r.outs, r.after, r.oracle)):
        shape, dtype = tuple(slot.shape), slot.dtype
        got, want = (_tensor(t, shape, dtype) if dtype in _DTYPES else None for t in (text, want_.data))
        if got is None or want is None:
            return f"output {k}'s recorded bytes are not a tensor of shape {list(shape)} and dtype {dtype}"
        if np.dtype(_DTYPES[dtype]).kind == "f":
            close = np.isclose(got, want, rtol=_RTOL, atol=_ATOL, equal_nan=True)
        else:
            close = got == want
        if not close.all():
            i = int(np.flatnonzero(~close.reshape(-1))[0])
            return (f"output {k} differs from onnxruntime's at {int((~close).sum())} of {got.size} elements (first "
                    f"at flat index {i}: got {got.reshape(-1)[i].item()!r}, want {want.reshape(-1)[i].item()!r})")
    return None


def _kernel_oracle(obs: DeviceObservation):
    for r in obs.oracle_runs:
        culprit = f"oracle step {r.step} (task {r.task!r}, {r.op_type})"
        if len(r.before) != len(r.outs) or len(r.after) != len(r.outs):
            yield violation(culprit, "its record does not hold each output's bytes before and after")
            continue
        if _oracle_fits(r):
            if r.refused is not None:
                yield violation(culprit, f"was refused ({r.refused}: {r.message}), but onnxruntime runs the node "
                                f"into outputs of exactly its slots' shapes", refused=r.refused)
            elif (why := _oracle_differs(r)) is not None:
                yield violation(culprit, f"ran, but {why}")
            continue
        why = (f"onnxruntime refuses the node ({r.oracle_error.splitlines()[0][:200]})" if r.oracle_error else
               f"onnxruntime gives outputs of shapes {[list(o.shape) for o in r.oracle]}, its slots are "
               f"{[list(s.shape) for s in r.outs]}")
        if r.refused is None:
            yield violation(culprit, f"ran, although {why}: the device must refuse it")
        elif r.refused != "KernelError":
            yield violation(culprit, f"was refused with {r.refused}, not KernelError ({why})", refused=r.refused)
        elif r.task not in r.message:
            yield violation(culprit, f"was refused, but the refusal does not name the task: {r.message!r}")
        if tuple(r.after) != tuple(r.before):
            yield violation(culprit, f"was not allowed to run ({why}), yet its output bytes changed")


def _oracle_both_ways(obs: DeviceObservation) -> bool:
    """Exercised when the probe holds an oracle step onnxruntime runs into fitting outputs and one it does not."""
    return {_oracle_fits(r) for r in obs.oracle_runs} == {True, False}


KERNEL_ORACLE = Invariant(
    id="DEVICE-KERNEL-ORACLE",
    title="A kernel computes what onnxruntime computes for its node, and is refused where onnxruntime's shapes differ",
    statement="For a probe's oracle step (a kernel of any op with attributes, over filled inputs): when onnxruntime, "
              "running a one-node ONNX model of the same op and attributes on the same input bytes, gives outputs "
              "of exactly the output slots' shapes and dtypes, the kernel runs and its outputs equal onnxruntime's "
              "(floats within a relative 1e-4 and an absolute 1e-5, integers exactly); when onnxruntime refuses "
              "the node or its outputs have other shapes, the device refuses the kernel with a KernelError naming "
              "the task and leaves its outputs' bytes as they were.",
    rationale="EXEC-ORACLE judges whole models, and verify's models reach few of the branches of the reductions, "
              "the transposed convolutions and the recurrent kernels (integer reductions, negative axes, grouped "
              "and padded ConvTranspose, reverse and bidirectional LSTM and GRU, batch-first layout): a kernel "
              "that computed a wrong value there, or ran a mis-shaped task, passed verify. What each must hold is "
              "onnxruntime's, an independent implementation of ONNX, run by the checker on the recorded bytes, "
              "never asked of the device.",
    ge_source="runtime/v1/graph/load/model_manager/task_info/fe/kernel_task_info.cc KernelTaskInfo::Distribute "
              "(the launch under GE_ASSERT_SUCCESS: a kernel the runtime rejects fails its task); the values are "
              "ONNX's operator definitions (onnx/docs/Operators.md), onnxruntime's CPU kernels their reference",
    applies_to="device", concern="device_kernels", predicate=_kernel_oracle, precondition=_oracle_both_ways,
)


INVARIANTS = (KERNEL_REFUSAL, COLLECTIVE, KERNEL_ORACLE)
