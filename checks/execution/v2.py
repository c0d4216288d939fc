"""The checker's runtime v2 runs: drive a compiled model through runtime v2 as a scenario says, observe it.

``observe_scenario(model, runtime) -> [ExecutionObservation]`` where ``runtime`` is the
scenario's JSON dict (checks/scenario.py):

- ``runtime``: ``"v2"``;
- LoweringOptions switches by name: ``zero_copy``, ``always_zero_copy``, ``ge_compat``,
  ``trust_shape_on_out_tensor``, ``always_external_allocator``, ``enable_single_stream``;
- ``output_sizes``: output tensor name -> bytes of the caller's buffer (0 = null buffer;
  default: the output's raw size); ``output_placement``: ``device`` (default) or ``host``;
- ``input_sizes``: input tensor name -> bytes of the caller's buffer, holding the input's first bytes
  (0 = null buffer; default: the input's raw size): a null or short input the runtime must refuse
  (CALL-INVALID-REFUSED); ``input_placement``: ``device`` (default) or ``host``: the caller's inputs in
  host memory, which the runtime copies to the device itself (GE: MakeSureTensorAtDevice);
- ``api``: ``direct`` (default: a StreamExecutor loaded with the switches above) or ``single_op``: GE's
  single-op executor (op_executor.cpp ``OpExecutor::PrepareRt2Execute``; impl/runtime/v2/single_op.py), which
  loads the model on its first call with always_zero_copy and always_external_allocator forced on, and
  ``trust_shape_on_out_tensor`` unless ``refresh_output_ori_shape`` (ACL_OP_EXECUTE_REFRESH_OUTPUT_ORI_SHAPE,
  default false) asks otherwise, and passes its own external allocator on every call. Such a run takes no
  switch, ``batch``, ``threads`` nor ``external_alloc_fails_at``; its observations carry the options GE's
  single-op entry demands, as the caller asked them, not the ones the executor reports, so the
  always_zero_copy claims judge the executor by what the caller is promised;
- ``seed``: the inputs are standard normal draws from this seed (default 0);
- ``batch``: the dynamic-batch branch the call runs (a model with branches needs one);
- ``threads``: that many further calls made at once from as many threads on the loaded executor,
  each with fresh output buffers of the same sizes (the inputs are shared: nothing writes them); the
  observations then end with the device trace's allocator calls (a ``DeviceObservation`` of
  ``allocator_events`` alone: V2-ALLOCATOR-ONE-THREAD, the executor's caching allocator entered by one
  thread at a time);
- ``external_alloc_fails_at``: k >= 1. Every call passes the caller's external allocator (device
  memory, one block per request) and the run makes three calls, one after another, on the same
  buffers, as a caller that retries: one with a working allocator, one whose allocator returns 0
  (null, out of memory) on its k-th request, counting from 1, and works otherwise, then one with a
  working allocator again. The second call must fail with the runtime's error (a RuntimeV2Error):
  a success is reported as an AssertionError of the run, another exception propagates, and the
  device's fault is observed. The spec judges the rest from the trace and the buffers
  (EXEC-FAILED-CALL-NO-CHANGE: nothing written into a user buffer, no allocation left behind;
  EXEC-ORACLE on the third call: the loaded model still computes). ScenarioError when k is not an
  integer >= 1, comes with ``threads``, or exceeds the requests the first call made.

Each observation carries the caller's output tensors as given and as handed back (their shapes:
V2-TRUST-SHAPE). Given the ``graph`` the model was compiled from, a successful call's outputs are read where the
call put them (the caller's buffer, or the tensor handed over in its place) and held to the
oracle (checks/execution/judge.py); outputs no oracle judged are the result's notes, and so is a
call with a working allocator of an ``external_alloc_fails_at`` run that failed on valid buffers.

The call's failure (a RuntimeV2Error, or under ge_compat the device's fault) is part of the
observation, not an exception; the model is unloaded before observing, so leaks show
(the unload is the run's own call, not the executor's log of it: an unload that does nothing leaks).
"""
from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

import attrs
import numpy as np

from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import judge
from zcspec.checks.execution.judge import Note, Observations
from zcspec.checks.execution.passed import passed_buffers
from zcspec.impl.device import Device, DeviceFault
from zcspec.impl.platform import dtypes
from zcspec.impl.device.observe_allocators import allocator_events
from zcspec.impl.runtime.io_names import io_names
from zcspec.impl.runtime.v2.allocators import ExternalAllocator
from zcspec.impl.runtime.v2.errors import RuntimeV2Error
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.observe import observe_execution
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.single_op import SingleOpExecutor
from zcspec.impl.runtime.v2.tensors import Tensor
from zcspec.spec.observables.device import DeviceObservation
from zcspec.spec.observables.execution import OutputTensor
from zcspec.spec.observables.load import LoadOptionsObservation

FAILS_AT = "external_alloc_fails_at"
REFRESH_SHAPE = "refresh_output_ori_shape"
APIS = ("direct", "single_op")
_SWITCHES = tuple(f.name for f in attrs.fields(LoweringOptions))
_KEYS = set(_SWITCHES) | {"runtime", "api", "input_sizes", "input_placement", "output_sizes", "output_placement",
                          "seed", "batch", "threads", FAILS_AT, REFRESH_SHAPE}
PLACEMENTS = ("device", "host")
# what a single-op run may not set: the executor fixes the switches, and it runs one call on no branch
_NOT_SINGLE_OP = set(_SWITCHES) | {"batch", "threads", FAILS_AT}


def api_of(runtime: dict) -> str:
    """The run's entry point (``api``); ScenarioError naming the key when it is unknown or a single-op run sets
    what the single-op executor fixes."""
    api = runtime.get("api", "direct")
    if api not in APIS:
        raise ScenarioError(f"runtime v2 scenario: api is one of {list(APIS)}, got {api!r}", key="api")
    if api == "single_op":
        fixed = sorted(_NOT_SINGLE_OP & set(runtime))
        if fixed:
            raise ScenarioError(f"runtime v2 scenario: api 'single_op' runs GE's single-op executor, which sets its "
                                f"options itself and makes one call; drop {fixed}", key=", ".join(fixed))
        if not isinstance(runtime.get(REFRESH_SHAPE, False), bool):
            raise ScenarioError(f"runtime v2 scenario: {REFRESH_SHAPE}={runtime[REFRESH_SHAPE]!r} must be a bool",
                                key=REFRESH_SHAPE)
    elif REFRESH_SHAPE in runtime:
        raise ScenarioError(f"runtime v2 scenario: {REFRESH_SHAPE} is the single-op executor's flag; it needs "
                            "api 'single_op' (other runs set trust_shape_on_out_tensor)", key=REFRESH_SHAPE)
    return api


def options_of(runtime: dict) -> LoweringOptions:
    unknown = sorted(set(runtime) - _KEYS)
    if unknown:
        raise ScenarioError(f"runtime v2 scenario: unknown keys {unknown}; known: {sorted(_KEYS)}", key=", ".join(unknown))
    for key in ("input_placement", "output_placement"):
        if runtime.get(key, "device") not in PLACEMENTS:
            raise ScenarioError(f"runtime v2 scenario: {key}={runtime[key]!r} is one of {list(PLACEMENTS)}", key=key)
    fails_at_of(runtime)
    api_of(runtime)
    return LoweringOptions(**{k: runtime[k] for k in _SWITCHES if k in runtime})


def single_op_options(runtime: dict) -> LoadOptionsObservation:
    """The options GE's single-op entry promises the caller (op_executor.cpp ``PrepareRt2Execute``): always zero
    copy, outputs' shapes trusted unless the caller asks for them refreshed."""
    return LoadOptionsObservation("v2", zero_copy=True, always_zero_copy=True,
                                  trust_shape_on_out_tensor=not runtime.get(REFRESH_SHAPE, False))


def fails_at_of(runtime: dict) -> int | None:
    """The run's ``external_alloc_fails_at`` (None: not set); ScenarioError naming the key when malformed."""
    k = runtime.get(FAILS_AT)
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ScenarioError(f"runtime v2 scenario: {FAILS_AT}={k!r} must be an integer >= 1: the request of the "
                            "caller's allocator that returns null, counting from 1", key=FAILS_AT)
    if runtime.get("threads"):
        raise ScenarioError(f"runtime v2 scenario: {FAILS_AT} makes its calls one after another, so it cannot "
                            f"come with threads={runtime['threads']!r}; drop one of the two", key=FAILS_AT)
    return k


class _CallerMemory:
    """The caller's hooks of an ExternalAllocator: one device block per request, except that request
    ``fails_at`` (from 1; None: none) returns 0, as an allocator out of memory does. ``requests`` counts them."""

    def __init__(self, dev: Device, fails_at: int | None = None):
        self.dev, self.fails_at, self.requests = dev, fails_at, 0

    def alloc(self, size: int) -> int:
        self.requests += 1
        return 0 if self.requests == self.fails_at else self.dev.malloc(size, tag="external block")

    def free(self, addr: int) -> None:
        if addr:   # free(NULL) does nothing, as C's: a runtime that used a null block shows as its accesses
            self.dev.free(addr)

    def allocators(self) -> dict:
        return {"device": ExternalAllocator(self.alloc, self.free)}


def _output(dev, io, size: int, placement: str) -> Tensor:
    if not size:
        return Tensor(0, 0, placement, name=io.tensor)
    tag = f"user output {io.tensor}"
    addr = dev.malloc(size, tag=tag) if placement == "device" else dev.host_malloc(size, tag=tag)
    return Tensor(addr, size, placement, name=io.tensor)


def _input(dev, io, array, size: int, placement: str) -> Tensor:
    """The caller's input buffer of ``size`` bytes in ``placement`` memory holding the input's first bytes (0: a
    null tensor)."""
    if not size:
        return Tensor(0, 0, placement, name=io.tensor)
    raw = np.ascontiguousarray(array).view(np.uint8).reshape(-1)[:size]
    if size > raw.size:   # a buffer larger than the input: the input's bytes, then the rest of the caller's buffer
        raw = np.concatenate([raw, np.zeros(size - raw.size, np.uint8)])
    if placement == "host":
        addr = dev.host_malloc(size, tag=f"user input {io.tensor}")
        dev.host_write(addr, raw)
        return Tensor(addr, size, "host", name=io.tensor)
    return Tensor(dev.upload(raw, tag=f"user input {io.tensor}"), size, name=io.tensor)


def _shape(shape) -> tuple[int, ...] | None:
    return None if shape is None else tuple(int(d) for d in shape)


def _read(dev, model, result) -> dict:
    got = {}
    for io, t in zip(model.tasks.outputs, result):
        if t is not None and t.addr and t.size >= io.nbytes:
            read = dev.peek if t.placement == "device" else dev.host_read
            got[io.tensor] = read(t.addr, io.shape, dtypes.numpy_dtype(io.dtype))
    return got


@attrs.define
class _Run:
    """One run's loaded executor, its caller's inputs and output buffers, and how a call is judged."""

    model: object
    runtime: dict
    graph: object
    dev: Device
    exe: StreamExecutor
    arrays: dict
    inputs: list
    name: str
    notes: list = attrs.Factory(list)
    unloaded: bool = False   # the run called unload (what the caller did, not the executor's record of it)
    single: SingleOpExecutor | None = None   # api single_op: the calls and the unload go through it

    def unload(self) -> None:
        self.unloaded = True
        if self.single is not None:
            self.single.close()
        else:
            self.exe.unload()

    def fresh(self) -> list[Tensor]:
        """New output buffers of the run's sizes and placement."""
        sizes, placement = self.runtime.get("output_sizes", {}), self.runtime.get("output_placement", "device")
        return [_output(self.dev, io, sizes.get(io.tensor, io.nbytes), placement) for io in self.model.tasks.outputs]

    def execute(self, outputs: list, allocators: dict | None) -> dict:
        """The outputs one call read back (empty when it failed: its record keeps the error)."""
        with contextlib.suppress(RuntimeV2Error, DeviceFault):
            if self.single is not None:
                result = self.single.execute(self.model, self.inputs, outputs)
            else:
                result = self.exe.execute(self.inputs, outputs, allocators=allocators, batch=self.runtime.get("batch"))
            return _read(self.dev, self.model, result)
        return {}

    def tensors(self, given: list, outputs: list) -> tuple[OutputTensor, ...]:
        """The caller's output tensors: shapes as given and as the call left them (before ``release``)."""
        names = [io_names(self.model)[("output", io.index)] for io in self.model.tasks.outputs]
        return tuple(OutputTensor(n, _shape(g), _shape(t.shape), tuple(io.shape))
                     for n, g, t, io in zip(names, given, outputs, self.model.tasks.outputs))

    def passed(self, outputs: list) -> tuple:
        """The buffers a call on ``outputs`` passes, as the caller knows them (before the call hands any of its
        own memory over in a null tensor's place)."""
        return passed_buffers(self.model, self.inputs, outputs, nulls=True)

    def observe(self, record, values: dict, tensors: tuple, name: str, passed: tuple):
        """The observation of ``record``, its outputs ``values`` held to the oracle (none read: not judged),
        with the buffers the caller ``passed`` (not the executor's record of them)."""
        results = ()
        if self.graph is not None and values:
            want = judge.reference(judge.choose(self.graph, self.runtime), self.arrays, name, self.notes)
            names = [io_names(self.model)[("output", io.index)] for io in self.model.tasks.outputs]
            results = judge.results(self.model.tasks.outputs, names, list(self.graph.outputs), values, want, name,
                                    self.notes)
        obs = attrs.evolve(observe_execution(self.exe, record, outputs=results, caller_unloaded=self.unloaded),
                           out_tensors=tensors, buffers=passed)
        if self.single is not None:   # what the caller of GE's single-op entry is promised, not what it reports
            obs = attrs.evolve(obs, load=attrs.evolve(obs.load, options=single_op_options(self.runtime)))
        return obs


def observe_scenario(model, runtime: dict, graph=None) -> Observations:
    options, fails_at = options_of(runtime), fails_at_of(runtime)
    dev = Device(model.soc)
    rng = np.random.default_rng(runtime.get("seed", 0))
    arrays = {io.tensor: rng.standard_normal(io.shape).astype(dtypes.numpy_dtype(io.dtype)) for io in model.tasks.inputs}
    inputs = [_input(dev, io, arrays[io.tensor], runtime.get("input_sizes", {}).get(io.tensor, io.nbytes),
                     runtime.get("input_placement", "device")) for io in model.tasks.inputs]
    if api_of(runtime) == "single_op":
        single = SingleOpExecutor(dev, refresh_output_ori_shape=runtime.get(REFRESH_SHAPE, False))
        run = _Run(model, runtime, graph, dev, single.executor(model), arrays, inputs, "v2 single-op executor",
                   single=single)
    else:
        run = _Run(model, runtime, graph, dev, StreamExecutor(model, dev, options), arrays, inputs,
                   "v2" + (" always_zero_copy" if options.always_zero_copy else ""))
    if fails_at is not None:
        return _failing_allocator(run, fails_at)
    external = {"device": ExternalAllocator.on_device(dev)} if options.always_external_allocator else None
    call = lambda outputs: run.execute(outputs, external)  # noqa: E731
    calls = [run.fresh()]
    given = [[t.shape for t in outputs] for outputs in calls]
    passed = [run.passed(outputs) for outputs in calls]
    # the buffers as given, before a call hands its own memory over in a null tensor's place
    keys = [tuple(t.addr for t in outputs) for outputs in calls]
    got = [call(calls[0])]
    if threads := int(runtime.get("threads", 0)):
        more = [run.fresh() for _ in range(threads)]
        given += [[t.shape for t in outputs] for outputs in more]
        passed += [run.passed(outputs) for outputs in more]
        keys += [tuple(t.addr for t in outputs) for outputs in more]
        # Each call on its own thread (a barrier: a pool may otherwise run two calls on one thread, or not),
        # so the allocator calls' threads, numbered by first call, are the same on every run.
        start = threading.Barrier(threads)

        def together(outputs):
            start.wait(timeout=30)
            return call(outputs)

        with ThreadPoolExecutor(threads) as pool:
            got += list(pool.map(together, more))
        calls += more
    # The threads' calls ran in some order: pair each record with its call by the output buffers given.
    by_buffers = {key: (k, values) for k, (key, values) in enumerate(zip(keys, got))}
    tensors = [run.tensors(gs, outputs) for gs, outputs in zip(given, calls)]   # before release() clears them
    for outputs in calls:
        for t in outputs:
            t.release()
    run.unload()
    observations = []
    for record in list(run.exe.records)[-len(calls):]:
        k, values = by_buffers.get(tuple(g.address for g in record.buffers if g.role == "output"), (0, {}))
        name = run.name if k == 0 else f"{run.name} thread {k - 1}"
        observations.append(run.observe(record, values, tensors[k], name, passed[k]))
    if threads:   # the calls into the executor's caching allocator, with their threads (V2-ALLOCATOR-ONE-THREAD)
        observations.append(DeviceObservation(f"{run.name} allocator calls", (), allocator_events=allocator_events(dev.trace)))
    return Observations(observations, run.notes)


def _failing_allocator(run: _Run, fails_at: int) -> Observations:
    """The ``external_alloc_fails_at`` run (see the module doc): working, failing, working allocator, on
    the caller's one set of buffers; each call gets tensors of its own over them (a call may hand a
    block over in a tensor's place)."""
    label = f"{run.name} external allocator fails at {fails_at}"
    buffers, steps = run.fresh(), []
    for k, memory in enumerate((_CallerMemory(run.dev), _CallerMemory(run.dev, fails_at), _CallerMemory(run.dev))):
        outputs = [Tensor(t.addr, t.size, t.placement, name=t.name) for t in buffers]
        given, passed = [t.shape for t in outputs], run.passed(outputs)
        values = run.execute(outputs, memory.allocators())
        _expect(run, label, k, fails_at, memory, run.exe.records[-1].error)
        steps.append((run.exe.records[-1], values, run.tensors(given, outputs), passed))
        for t in outputs:
            t.release()   # what a call handed over in a tensor's place goes back to the caller's allocator
    run.unload()
    observations = [run.observe(record, values, tensors, f"{label}: call {k}", passed)
                    for k, (record, values, tensors, passed) in enumerate(steps)]
    return Observations(observations, run.notes)


def _valid_buffers(runtime: dict) -> bool:
    return (not runtime.get("output_sizes") and not runtime.get("input_sizes")
            and runtime.get("output_placement", "device") == "device")   # host inputs are valid: staged


def _expect(run: _Run, label: str, k: int, fails_at: int, memory: _CallerMemory, error) -> None:
    """Call ``k`` of the failing-allocator run held to what the run expects of it (see the module doc)."""
    if error is None and memory.requests < fails_at:   # no request returned null (k 0: none would)
        raise ScenarioError(f"runtime v2 scenario: {FAILS_AT}={fails_at!r}, but call {k} of {run.model.name!r} "
                            f"made only {memory.requests} allocator request(s); choose 1..{memory.requests}",
                            key=FAILS_AT)
    if k == 1 and error is None:
        raise AssertionError(f"{label}: the caller's allocator returned null on request {fails_at}, yet the call "
                             "succeeded; it must fail with the runtime's error")
    if k != 1 and error is not None and _valid_buffers(run.runtime):
        run.notes.append(Note(f"{label}: call {k}", "the call failed on valid buffers with a working allocator: "
                                                    f"{type(error).__name__}: {error}", failed=True))
