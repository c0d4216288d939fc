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

Given the ``graph`` the model was compiled from, a successful call's outputs are read where the
call put them (the caller's buffer, or the tensor handed over in its place) and held to the
oracle (checks/execution/judge.py); outputs no oracle judged are the result's notes.

The call's failure (a RuntimeV2Error, or under ge_compat the device's fault) is part of the
observation, not an exception; the model is unloaded before observing, so leaks show.
"""
from __future__ import annotations

import contextlib

import attrs
import numpy as np

from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import judge
from zcspec.checks.execution.judge import Observations
from zcspec.impl.device import Device, DeviceFault
from zcspec.impl.platform import dtypes
from zcspec.impl.runtime.io_names import io_names
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


def _read(dev, model, result) -> dict:
    got = {}
    for io, t in zip(model.tasks.outputs, result):
        if t is not None and t.addr and t.size >= io.nbytes:
            read = dev.peek if t.placement == "device" else dev.host_read
            got[io.tensor] = read(t.addr, io.shape, dtypes.numpy_dtype(io.dtype))
    return got


def observe_scenario(model, runtime: dict, graph=None) -> Observations:
    options = options_of(runtime)
    dev = Device(model.soc)
    rng = np.random.default_rng(runtime.get("seed", 0))
    arrays = {io.tensor: rng.standard_normal(io.shape).astype(dtypes.numpy_dtype(io.dtype)) for io in model.tasks.inputs}
    inputs = [Tensor(dev.upload(arrays[io.tensor], tag=f"user input {io.tensor}"), io.nbytes, name=io.tensor)
              for io in model.tasks.inputs]
    sizes, placement = runtime.get("output_sizes", {}), runtime.get("output_placement", "device")
    outputs = [_output(dev, io, sizes.get(io.tensor, io.nbytes), placement) for io in model.tasks.outputs]
    external = {"device": ExternalAllocator.on_device(dev)} if options.always_external_allocator else None
    exe = StreamExecutor(model, dev, options)
    notes: list = []
    got = {}
    with contextlib.suppress(RuntimeV2Error, DeviceFault):   # observed: the record keeps the error
        got = _read(dev, model, exe.execute(inputs, outputs, allocators=external, batch=runtime.get("batch")))
    for t in outputs:
        t.release()
    exe.unload()
    results = ()
    if graph is not None and got:
        run = "v2" + (" always_zero_copy" if options.always_zero_copy else "")
        want = judge.reference(judge.choose(graph, runtime), arrays, run, notes)
        names = [io_names(model)[("output", io.index)] for io in model.tasks.outputs]
        results = judge.results(model.tasks.outputs, names, list(graph.outputs), got, want, run, notes)
    return Observations([observe_execution(exe, outputs=results)], notes)
