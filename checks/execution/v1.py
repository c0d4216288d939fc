"""The checker's runtime v1 runs: drive a compiled model through runtime v1 as a scenario says.

``observe_scenario(model, runtime) -> [ExecutionObservation, ...]``, one per execute
call, where ``runtime`` is the scenario's JSON dict (checks/scenario.py):

- ``runtime``: ``"v1"``;
- load options by name: ``zero_copy`` (default True), ``reuse_zero_copy_memory`` (0/1);
- ``calls``: how many executions (default 1); ``rebind``: fresh user buffers for every
  call (default True; False reuses the first call's buffers);
- ``input_sizes`` / ``output_sizes``: I/O tensor name -> bytes of the caller's buffer
  (0 = null; default: the raw size); ``placement``: ``device`` (default) or ``host``;
- ``misalign``: I/O names whose buffer address is shifted by one byte;
- ``seed``: inputs are standard normal draws from this seed (default 0);
- ``batch``: the dynamic-batch branch every call runs (a model with branches needs one).

Errors are part of the observation; the model is unloaded before the last call is
observed, so leaks show (EXEC-NO-LEAK).
"""
from __future__ import annotations

import contextlib

import numpy as np

from zcspec.checks.errors import ScenarioError
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import UserBuffer
from zcspec.impl.runtime.v1.config import LoadOptions
from zcspec.impl.runtime.v1.errors import RuntimeV1Error
from zcspec.impl.runtime.v1.load import load
from zcspec.impl.runtime.v1.observe import observe_execution

_LOAD_KEYS = ("zero_copy", "reuse_zero_copy_memory")
_KEYS = set(_LOAD_KEYS) | {"runtime", "calls", "rebind", "input_sizes", "output_sizes", "placement", "misalign",
                           "seed", "batch"}


def options_of(runtime: dict) -> LoadOptions:
    unknown = sorted(set(runtime) - _KEYS)
    if unknown:
        raise ScenarioError(f"runtime v1 scenario: unknown keys {unknown}; known: {sorted(_KEYS)}", key=", ".join(unknown))
    return LoadOptions(**{k: runtime[k] for k in _LOAD_KEYS if k in runtime})


def _buffer(dev, io, size: int, placement: str, shift: int, fill=None) -> UserBuffer:
    if not size:
        return UserBuffer(io.tensor, 0, 0, placement)
    tag = f"user {io.role} {io.tensor}"
    addr = dev.malloc(size + shift, tag=tag) if placement == "device" else dev.host_malloc(size + shift, tag=tag)
    if fill is not None:
        data = np.ascontiguousarray(fill).view(np.uint8).reshape(-1)[:size]
        if placement == "device":
            staging = dev.host_malloc(max(data.size, 1), tag="staging")
            dev.host_write(staging, data)
            dev.memcpy(addr + shift, staging, data.size)
            dev.host_free(staging)
        else:
            dev.host_write(addr + shift, data)
    return UserBuffer(io.tensor, addr + shift, size, placement)


def _buffers(dev, model, runtime: dict, rng) -> tuple[list, list, list]:
    placement, misalign = runtime.get("placement", "device"), set(runtime.get("misalign", ()))
    isz, osz = runtime.get("input_sizes", {}), runtime.get("output_sizes", {})
    ins, outs, raw = [], [], []
    for io in model.tasks.inputs:
        data = rng.standard_normal(io.shape).astype(np.float32) if io.dtype == "float32" else np.zeros(io.shape)
        b = _buffer(dev, io, isz.get(io.tensor, io.nbytes), placement, int(io.tensor in misalign), data)
        ins.append(b)
        raw.append(b.addr - int(io.tensor in misalign))
    for io in model.tasks.outputs:
        b = _buffer(dev, io, osz.get(io.tensor, io.nbytes), placement, int(io.tensor in misalign))
        outs.append(b)
        raw.append(b.addr - int(io.tensor in misalign))
    return ins, outs, raw


def _free(dev, buffers, raw) -> None:
    for b, addr in zip(buffers, raw):
        if b.addr:
            (dev.free if b.placement == "device" else dev.host_free)(addr)


def observe_scenario(model, runtime: dict) -> list:
    options = options_of(runtime)
    dev = Device(model.soc)
    rng = np.random.default_rng(runtime.get("seed", 0))
    lm = load(dev, model, options)
    records, held = [], None
    for _ in range(max(1, int(runtime.get("calls", 1)))):
        if held is None or runtime.get("rebind", True):
            if held is not None:
                _free(dev, held[0] + held[1], held[2])
            held = _buffers(dev, model, runtime, rng)
        with contextlib.suppress(RuntimeV1Error):   # a refused call is observed through its record
            lm.execute(held[0], held[1], batch=runtime.get("batch"))
        records.append(lm.last_call)
    observations = [observe_execution(lm, r) for r in records[:-1]]
    lm.unload()
    observations.append(observe_execution(lm, records[-1]))
    _free(dev, held[0] + held[1], held[2])
    return observations
