"""The checker's runtime v2 runs: drive a compiled model through runtime v2 as a scenario says, observe it.

``observe_scenario(model, runtime) -> [ExecutionObservation]`` where ``runtime`` is the
scenario's JSON dict (checks/scenario.py):

- ``runtime``: ``"v2"``;
- LoweringOptions switches by name: ``zero_copy``, ``always_zero_copy``, ``ge_compat``,
  ``trust_shape_on_out_tensor``, ``always_external_allocator``, ``enable_single_stream``;
- ``output_sizes``: output tensor name -> bytes of the caller's buffer (0 = null buffer;
  default: the output's raw size); ``output_placement``: ``device`` (default) or ``host``;
- ``seed``: the inputs are standard normal draws from this seed (default 0);
- ``batch``: the dynamic-batch branch the call runs (a model with branches needs one);
- ``threads``: that many further calls made at once from as many threads on the loaded executor,
  each with fresh output buffers of the same sizes (the inputs are shared: nothing writes them).

Each observation carries the caller's output tensors as given and as handed back (their shapes:
V2-TRUST-SHAPE). Given the ``graph`` the model was compiled from, a successful call's outputs are read where the
call put them (the caller's buffer, or the tensor handed over in its place) and held to the
oracle (checks/execution/judge.py); outputs no oracle judged are the result's notes.

The call's failure (a RuntimeV2Error, or under ge_compat the device's fault) is part of the
observation, not an exception; the model is unloaded before observing, so leaks show.
"""
from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor

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
from zcspec.spec.observables.execution import OutputTensor

_SWITCHES = tuple(f.name for f in attrs.fields(LoweringOptions))
_KEYS = set(_SWITCHES) | {"runtime", "output_sizes", "output_placement", "seed", "batch", "threads"}


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


def _shape(shape) -> tuple[int, ...] | None:
    return None if shape is None else tuple(int(d) for d in shape)


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
    fresh = lambda: [_output(dev, io, sizes.get(io.tensor, io.nbytes), placement) for io in model.tasks.outputs]
    external = {"device": ExternalAllocator.on_device(dev)} if options.always_external_allocator else None
    exe = StreamExecutor(model, dev, options)
    notes: list = []

    def call(outputs) -> dict:
        with contextlib.suppress(RuntimeV2Error, DeviceFault):   # observed: the record keeps the error
            return _read(dev, model, exe.execute(inputs, outputs, allocators=external, batch=runtime.get("batch")))
        return {}

    calls = [fresh()]
    given = [[t.shape for t in outputs] for outputs in calls]
    got = [call(calls[0])]
    if threads := int(runtime.get("threads", 0)):
        more = [fresh() for _ in range(threads)]
        given += [[t.shape for t in outputs] for outputs in more]
        with ThreadPoolExecutor(threads) as pool:
            got += list(pool.map(call, more))
        calls += more
    # The threads' calls ran in some order: pair each record with its call by the output buffers given.
    by_buffers = {tuple(t.addr for t in outputs): (k, values) for k, (outputs, values) in enumerate(zip(calls, got))}
    names = [io_names(model)[("output", io.index)] for io in model.tasks.outputs]
    tensors = [tuple(OutputTensor(n, _shape(g), _shape(t.shape), tuple(io.shape))
                     for n, g, t, io in zip(names, gs, outputs, model.tasks.outputs))
               for gs, outputs in zip(given, calls)]   # read before release() clears what the call handed over
    for outputs in calls:
        for t in outputs:
            t.release()
    exe.unload()
    run = "v2" + (" always_zero_copy" if options.always_zero_copy else "")
    observations = []
    for record in list(exe.records)[-len(calls):]:
        k, values = by_buffers.get(tuple(g.address for g in record.buffers if g.role == "output"), (0, {}))
        results = ()
        if graph is not None and values:
            name = run if k == 0 else f"{run} thread {k - 1}"
            want = judge.reference(judge.choose(graph, runtime), arrays, name, notes)
            names = [io_names(model)[("output", io.index)] for io in model.tasks.outputs]
            results = judge.results(model.tasks.outputs, names, list(graph.outputs), values, want, name, notes)
        observations.append(attrs.evolve(observe_execution(exe, record, outputs=results), out_tensors=tensors[k]))
    return Observations(observations, notes)
