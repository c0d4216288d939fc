"""The checker's runtime v2 runs: drive a compiled model through runtime v2 as a scenario says, observe it.

``observe_scenario(model, runtime) -> [ExecutionObservation]`` where ``runtime`` is the
scenario's JSON dict (checks/scenario.py):

- ``runtime``: ``"v2"``;
- LoweringOptions switches by name: ``zero_copy``, ``always_zero_copy``, ``ge_compat``,
  ``trust_shape_on_out_tensor``, ``always_external_allocator``, ``enable_single_stream``;
- ``output_sizes``: output tensor name -> bytes of the caller's buffer (0 = null buffer;
  default: the output's raw size); ``output_placement``: ``device`` (default) or ``host``;
- ``seed``: the inputs are standard normal draws from this seed (default 0);
- ``batch``: the dynamic-batch branch the call runs (a model with branches needs one).

The call's failure (a RuntimeV2Error, or under ge_compat the device's fault) is part of the
observation, not an exception; the model is unloaded before observing, so leaks show.
"""
from __future__ import annotations

import contextlib

import attrs
import numpy as np

from zcspec.checks.errors import ScenarioError
from zcspec.impl.device import Device, DeviceFault
from zcspec.impl.runtime.v2.allocators import ExternalAllocator
from zcspec.impl.runtime.v2.errors import RuntimeV2Error
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.observe import observe_execution
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.tensors import Tensor

_SWITCHES = tuple(f.name for f in attrs.fields(LoweringOptions))
_KEYS = set(_SWITCHES) | {"runtime", "output_sizes", "output_placement", "seed", "batch"}


def options_of(runtime: dict) -> LoweringOptions:
    unknown = sorted(set(runtime) - _KEYS)
    if unknown:
        raise ScenarioError(f"runtime v2 scenario: unknown keys {unknown}; known: {sorted(_KEYS)}", key=", ".join(unknown))
    return LoweringOptions(**{k: runtime[k] for k in _SWITCHES if k in runtime})


def _output(dev, io, size: int, placement: str) -> Tensor:
    if not size:
        return Tensor(0, 0, placement, name=io.tensor)
    tag = f"user output {io.tensor}"
    addr = dev.malloc(size, tag=tag) if placement == "device" else dev.host_malloc(size, tag=tag)
    return Tensor(addr, size, placement, name=io.tensor)


def observe_scenario(model, runtime: dict) -> list:
    options = options_of(runtime)
    dev = Device(model.soc)
    rng = np.random.default_rng(runtime.get("seed", 0))
    inputs = [Tensor(dev.upload(rng.standard_normal(io.shape).astype(np.float32), tag=f"user input {io.tensor}"),
                     io.nbytes, name=io.tensor) for io in model.tasks.inputs]
    sizes, placement = runtime.get("output_sizes", {}), runtime.get("output_placement", "device")
    outputs = [_output(dev, io, sizes.get(io.tensor, io.nbytes), placement) for io in model.tasks.outputs]
    external = {"device": ExternalAllocator.on_device(dev)} if options.always_external_allocator else None
    exe = StreamExecutor(model, dev, options)
    with contextlib.suppress(RuntimeV2Error, DeviceFault):   # observed: the record keeps the error
        exe.execute(inputs, outputs, allocators=external, batch=runtime.get("batch"))
    for t in outputs:
        t.release()
    exe.unload()
    return [observe_execution(exe)]
