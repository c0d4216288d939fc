"""Calls that misuse a runtime's API, made and transcribed from the caller's side (API-MISUSE-REFUSED,
API-MISUSE-CHANGES-NOTHING).

``misuse_observations(model) -> [ApiCallObservation]`` loads ``model`` into runtime v1 and into runtime v2
on fresh devices and makes, on each, one bad call at a time with otherwise valid buffers: one output
buffer too few, one input buffer too many, a dynamic-batch label the model does not have (none at all
where it has branches; a label where it has none), then, after unloading the model, a call on valid
buffers; ``option_observations(runtime)`` builds that runtime's load options with each switch given a
value outside its domain (an int for a bool; reuseZeroCopyMemory 2). ``transcribe`` is the one
transcription of an execute call, which runtime v1's ``after_unload`` run (checks/execution/v1.py) uses
too. A valid call comes first on each runtime, so that a model that
cannot run at all is a failure of the run (RuntimeError naming it), not a refusal the claims could
mistake for the right one.

Each observation is the caller's transcription, never the runtime's record: what it passed, the model
file's I/O counts and labels, whether it had unloaded the model, the outcome as it came back (an exception's
class names, its ``code`` attribute and message), the device trace during the call (impl/device/trace_events,
every allocation owned by "user": which owner does not matter to these claims) and the buffers whose bytes
differ after the call (read by the caller before and after).
"""
from __future__ import annotations

from typing import Callable

import attrs
import numpy as np

from zcspec.impl.device import Device
from zcspec.impl.device.trace_events import TraceNames, spec_events
from zcspec.impl.platform import dtypes
from zcspec.impl.runtime.user_buffers import UserBuffer
from zcspec.impl.runtime.v1.config import LoadOptions
from zcspec.impl.runtime.v1.load import load as load_v1
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.tensors import Tensor
from zcspec.spec.observables.api_call import ApiCallObservation, CallOutcome, OptionArgument

_NAMES = TraceNames(tasks={})   # every allocation "user": the claims read which effects, not whose
BOOL_SWITCHES = {"v1": ("zero_copy", "feature_base_refreshable", "legacy_copy_only_addrs"),
                 "v2": tuple(f.name for f in attrs.fields(LoweringOptions))}
BAD_ENUMS = {"v1": (("reuse_zero_copy_memory", 2),), "v2": ()}


def outcome_of(error: Exception | None) -> CallOutcome:
    """A call's outcome as its caller sees it: returned (``error`` None) or the error it raised."""
    if error is None:
        return CallOutcome(True)
    names = tuple(c.__name__ for c in type(error).__mro__ if c not in (object, BaseException))
    return CallOutcome(False, names, str(getattr(error, "code", "") or ""), str(error))


def outcome(call: Callable[[], object]) -> CallOutcome:
    """What ``call`` came back with, as its caller sees it."""
    try:
        call()
    except Exception as e:  # noqa: BLE001 - whatever came back is the observation; the claims judge it
        return outcome_of(e)
    return CallOutcome(True)


def labels_of(model) -> tuple[str, ...]:
    """The model file's dynamic-batch labels, as its task list writes them."""
    return tuple(sorted({t.batch for t in model.tasks.tasks if t.batch}))


def read_buffers(dev, buffers) -> dict[str, bytes]:
    """Each buffer's bytes as its caller reads them: (name, address, size, placement) -> bytes."""
    read = {"device": dev.peek, "host": dev.host_read}
    return {name: read[placement](addr, (size,), np.uint8).tobytes() for name, addr, size, placement in buffers
            if addr and size}


def transcribe(dev, model, runtime: str, name: str, call: Callable[[], object], buffers, *, input_buffers: int,
               output_buffers: int, batch: str | None, unloaded: bool) -> ApiCallObservation:
    """Make execute ``call`` on ``model`` (on device ``dev``) and transcribe it from the caller's side:
    ``buffers`` are every buffer the caller holds, (name, address, size, placement); ``input_buffers``,
    ``output_buffers`` (how many) and ``batch`` what the call passes, ``unloaded`` whether the caller unloaded
    the model."""
    before, begin = read_buffers(dev, buffers), dev.trace.mark()
    got = outcome(call)
    end, after = dev.trace.mark(), read_buffers(dev, buffers)
    return ApiCallObservation(
        name=name, runtime=runtime, entry="execute", outcome=got, model=model.name,
        model_inputs=len(model.tasks.inputs), model_outputs=len(model.tasks.outputs), branch_labels=labels_of(model),
        unloaded=unloaded, input_buffers=input_buffers, output_buffers=output_buffers, batch=batch,
        events=tuple(spec_events(dev.trace, (begin, end), _NAMES)),
        buffers_changed=tuple(sorted(k for k in before if before[k] != after.get(k))))


@attrs.define
class _Caller:
    """One runtime's caller: its device, its valid buffers, one more (``extra``), the calls it makes."""

    runtime: str
    model: object
    dev: Device
    execute: Callable            # (inputs, outputs, batch) -> object
    unload: Callable[[], None]
    ins: list
    outs: list
    extra: object                # a valid buffer of the right kind, one more than the model takes
    unloaded: bool = False

    def call(self, name: str, ins: list, outs: list, batch: str | None) -> ApiCallObservation:
        held = [(b.name, b.addr, b.size, b.placement) for b in self.ins + self.outs + [self.extra]]
        return transcribe(self.dev, self.model, self.runtime, f"{self.runtime} {name}",
                          lambda: self.execute(ins, outs, batch), held, input_buffers=len(ins),
                          output_buffers=len(outs), batch=batch, unloaded=self.unloaded)


def _raw(io, rng) -> np.ndarray:
    dt = np.dtype(dtypes.numpy_dtype(io.dtype))
    return np.ascontiguousarray(rng.standard_normal(io.shape).astype(dt)).view(np.uint8).reshape(-1)


def _v1(model) -> _Caller:
    dev, rng = Device(model.soc), np.random.default_rng(0)
    lm = load_v1(dev, model)
    ins = [UserBuffer(io.tensor, dev.upload(_raw(io, rng), tag=f"user input {io.tensor}"), io.nbytes)
           for io in model.tasks.inputs]
    outs = [UserBuffer(io.tensor, dev.malloc(io.nbytes, tag=f"user output {io.tensor}"), io.nbytes)
            for io in model.tasks.outputs]
    extra = UserBuffer("extra", dev.malloc(64, tag="user extra"), 64)
    return _Caller("v1", model, dev, lambda i, o, b: lm.execute(i, o, batch=b), lm.unload, ins, outs, extra)


def _v2(model) -> _Caller:
    dev, rng = Device(model.soc), np.random.default_rng(0)
    exe = StreamExecutor(model, dev, LoweringOptions())
    ins = [Tensor(dev.upload(_raw(io, rng), tag=f"user input {io.tensor}"), io.nbytes, name=io.tensor)
           for io in model.tasks.inputs]
    outs = [Tensor(dev.malloc(io.nbytes, tag=f"user output {io.tensor}"), io.nbytes, name=io.tensor)
            for io in model.tasks.outputs]
    extra = Tensor(dev.malloc(64, tag="user extra"), 64, name="extra")
    return _Caller("v2", model, dev, lambda i, o, b: exe.execute(i, o, batch=b), exe.unload, ins, outs, extra)


def _execute_misuses(caller: _Caller) -> list[ApiCallObservation]:
    labels = labels_of(caller.model)
    good = labels[0] if labels else None
    first = outcome(lambda: caller.execute(caller.ins, caller.outs, good))
    if not first.ok:
        raise RuntimeError(f"model {caller.model.name!r}: a valid {caller.runtime} call was refused "
                           f"({first.message}); its misuses cannot be judged")
    out = []
    if caller.outs:
        out.append(caller.call("one output buffer too few", caller.ins, caller.outs[:-1], good))
    out.append(caller.call("one input buffer too many", caller.ins + [caller.extra], caller.outs, good))
    if labels:
        out.append(caller.call("no batch for a model with branches", caller.ins, caller.outs, None))
        out.append(caller.call("a batch the model does not have", caller.ins, caller.outs, "zcspec-no-such-batch"))
    else:
        out.append(caller.call("a batch for a model without branches", caller.ins, caller.outs, "b1"))
    caller.unload()
    caller.unloaded = True
    out.append(caller.call("after unload", caller.ins, caller.outs, good))
    return out


def option_observations(runtime: str) -> list[ApiCallObservation]:
    """Building ``runtime``'s load options with each switch given a value outside its domain, one at a time."""
    build = LoadOptions if runtime == "v1" else LoweringOptions
    bad = [(name, 1) for name in BOOL_SWITCHES[runtime]] + list(BAD_ENUMS[runtime])
    return [ApiCallObservation(f"{runtime} options {name}={value!r}", runtime, "options",
                               outcome(lambda n=name, v=value: build(**{n: v})),
                               options=(OptionArgument(name, type(value).__name__, repr(value)),))
            for name, value in bad]


def misuse_observations(model) -> list[ApiCallObservation]:
    """Every misuse call on ``model`` through runtime v1, then through runtime v2."""
    return [obs for make in (_v1, _v2) for obs in _execute_misuses(make(model))]
