"""The checker's runtime v1 runs: drive a compiled model through runtime v1 as a scenario says.

``observe_scenario(model, runtime, graph=None) -> Observations``, one ExecutionObservation per
execute call, where ``runtime`` is the scenario's JSON dict (checks/scenario.py):

- ``runtime``: ``"v1"``;
- load options by name: ``zero_copy`` (default True), ``reuse_zero_copy_memory`` (0/1),
  ``feature_base_refreshable`` (default False: ge.featureBaseRefreshable, the work memory may move);
  ``legacy_copy_only_addrs`` (default False: copies decided as GE's legacy paths do);
- ``calls``: how many executions (default 1); ``rebind``: fresh user buffers for every
  call (default True; False reuses the first call's buffers), or a list of booleans, one per
  call after the first (a re-binding sequence: fresh, same, fresh, ...);
- ``threads``: that many further calls made at once from as many threads on the loaded model,
  each on fresh buffers of its own (default 0);
- ``input_sizes`` / ``output_sizes``: I/O tensor name -> bytes of the caller's buffer
  (0 = null; default: the raw size); ``placement``: ``device`` (default) or ``host``;
- ``misalign``: I/O names whose buffer address is shifted by one byte;
- ``overhang``: I/O names whose buffer says it is 64 bytes longer than the allocation holding it (its end
  lies outside every live allocation of the caller); ``dangling``: I/O names whose buffer's allocation the
  caller frees before the call (a use after free); ``missing``: I/O names in whose place the caller passes
  no buffer at all (None: the call's buffers do not match the model's I/O one to one; direct entry only, an
  ACL dataset holds data buffers). All are invalid bindings the runtime must refuse (CALL-INVALID-REFUSED);
- ``retry``: the caller retries after a refusal: only the first call gets the bad binding the keys
  above describe (sizes, ``misalign``, ``overhang``, ``dangling``, ``missing``, ``share``), every later call valid
  buffers: the first call's own, their sizes fixed, when ``overhang`` was the only mistake (the retry
  binds the very addresses the refused call was given), fresh ones otherwise (needs ``calls`` >= 2).
  A refused call must leave the loaded model as it was, so the retry's slots, copies and outputs are
  judged as any first call's;
- ``share``: pairs ``[a, b]`` of I/O tensor names: ``b`` is bound to ``a``'s buffer (overlapping
  buffers: two inputs may share one, an output may not);
- ``seed``: inputs are standard normal draws from this seed (default 0); ``inputs``: ``"normal"``
  (default) or ``"ones"`` (every input all ones: what ONNX's light zoo models ship a reference for;
  on standard normal inputs light squeezenet's logits reach 6.8e9, where one float32 ulp is 512, so
  summation order alone changes its softmax by 0.001 and no oracle can judge it); ``onnx``: the
  ONNX file the model came from, whose onnxruntime outputs are the oracle (checks/execution/judge.py);
- ``batch``: the dynamic-batch branch every call runs (a model with branches needs one);
- ``work_memory`` / ``weight_memory``: the caller supplies the model's feature-map (work) memory /
  its weight memory at load, exactly the sizes aclmdlQuerySize reports (work: memory_size, the
  zero-copy region included), as GE's LoadModelFromData with memory parameters takes them (default False: the runtime allocates them); freed after the unload;
- ``move_work``: before every call after the first, the caller moves the work memory to a fresh
  allocation (``LoadedModel.update_work_memory``) and frees the old one (needs ``work_memory`` and
  ``feature_base_refreshable``; direct entry only, ACL has no such call): a feature-map slot left
  pointing at the old memory then reads or writes freed memory;
- ``buffer_in_work_memory``: ``"input"`` or ``"output"`` (needs ``work_memory``): the caller passes, for the
  model's first I/O of that role, a buffer of the I/O's raw size at the start of the work memory it gave the
  model (the current one, after a ``move_work``), memory the model's tasks use: an invalid binding the
  runtime must refuse (CALL-INVALID-REFUSED), which ``retry`` fixes with fresh buffers;
- ``static_memory_policy``: the model is loaded into a fresh session (impl/runtime/v1/session.py) whose
  ge.exec.staticMemoryPolicy is this string ("0" to "3"): under "1" and "2" its feature map (and, zero copy
  off, its I/O region) comes from the session's ActiveMemoryAllocator and goes back to it at unload (GE's
  ``MallocFeatureMapMem`` / ``FreeFeatureMapMem``); under "0" and "3" the model keeps memory of its own
  (default: no session). Direct entry only (the ACL facade loads into no session), and not with
  ``feature_base_refreshable`` (a session's feature map cannot move);
- ``session_peer``: an integer ``k`` from 0 to ``calls`` (needs ``static_memory_policy``): before the run's
  load, another load of the same model into the run's session, zero copy the opposite of the run's (under
  "1" and "2" the session's blocks are first cut for its pieces, and the run's load takes them, a new block
  added when it needs more: GE's st test of two models sharing one ``mem_base_``). The peer makes one call
  on fresh valid buffers and is unloaded before the run's call ``k``, or, with ``k`` = ``calls``, after the
  run's unload: the peer's call is then observed after the run gave back its hold, and must find its memory
  intact. The peer's call (with its unload) is one more observation, after the run's;
- ``after_unload``: after the unload the caller calls the model once more, on its last buffers (direct entry
  only: the ACL facade forgets the model id at aclmdlUnload). The caller transcribes that call itself
  (checks/execution/api_misuse.py: what it passed, what came back, the device trace during it, its buffers
  before and after), one more observation after the unload's: the runtime must refuse it with GE's code
  and touch nothing (API-MISUSE-REFUSED, API-MISUSE-CHANGES-NOTHING), whether or not it keeps a record;
- ``api``: the entry points the run goes through (checks/execution/entries.py): ``direct`` (default),
  ``acl`` (the model file's bytes through aclmdlLoadFromMem / aclmdlLoadFromMemWithMem, aclrtMalloc and
  aclrtMemcpy for the caller's buffers, datasets for execute) or ``acl_config`` (aclmdlLoadWithConfig).

Given the ``graph`` the model was compiled from, every successful call's outputs are read back
from the caller's buffers and held to the oracle (checks/execution/judge.py); outputs no oracle
judged, and a concurrent call that failed on valid buffers, are the result's notes.

Each observation's load options are the ones the run asked for (``_as_asked``), not the loaded model's
own report of them. Errors are part of the observation; the model is unloaded before the last call is
observed, so leaks show (EXEC-NO-LEAK): the unload's frees are read from the device trace around the
caller's unload call, so an unload the entry point drops leaves the model's memory live, a leak.
"""
from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor

import attrs
import numpy as np

from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import judge
from zcspec.checks.execution.api_misuse import transcribe
from zcspec.checks.execution.entries import entry
from zcspec.checks.execution.judge import Note, Observations
from zcspec.checks.execution.passed import passed_buffers
from zcspec.checks.execution.v1_options import CALLER_MEMORY, options_of
from zcspec.impl.device import Device
from zcspec.impl.platform import dtypes
from zcspec.impl.runtime.io_names import io_names
from zcspec.impl.runtime.user_buffers import UserBuffer
from zcspec.impl.runtime.v1.config import LoadOptions
from zcspec.impl.runtime.v1.errors import RuntimeV1Error
from zcspec.impl.runtime.v1.observe import observe_execution
from zcspec.spec.observables.load import LoadOptionsObservation, RegionBinding

def _fill(dev, api, addr: int, placement: str, data: np.ndarray) -> None:
    """The user writing its input buffer (device: through host staging, as aclrtMemcpy would)."""
    raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
    if placement == "host":
        dev.host_write(addr, raw)
        return
    staging = dev.host_malloc(max(raw.size, 1), tag="staging")
    dev.host_write(staging, raw)
    api.upload(addr, staging, raw.size)
    dev.host_free(staging)


@attrs.define
class _Held:
    """One call's buffers: what the runtime is given, the raw allocations to free, the input arrays."""

    ins: list
    outs: list
    raw: list
    arrays: dict


OVERHANG = 64   # bytes an ``overhang`` buffer claims past the end of its allocation


def _buffers(dev, api, model, runtime: dict, rng, work: tuple[int, int] | None = None) -> _Held:
    """The call's buffers as ``runtime`` describes them; ``work``: the caller's work memory (ptr, size) as it
    has given it to the model, where a ``buffer_in_work_memory`` buffer goes."""
    placement, misalign = runtime.get("placement", "device"), set(runtime.get("misalign", ()))
    overhang, dangling = set(runtime.get("overhang", ())), set(runtime.get("dangling", ()))
    isz, osz = runtime.get("input_sizes", {}), runtime.get("output_sizes", {})
    shared = {b: a for a, b in runtime.get("share", ())}
    held = _Held([], [], [], {})
    by_name: dict = {}
    ios = [(io, isz) for io in model.tasks.inputs] + [(io, osz) for io in model.tasks.outputs]
    in_work = _in_work(model, runtime, work)
    for io, sizes in ios:
        if io is in_work:   # the caller's own work memory, which the model uses
            b = UserBuffer(io.tensor, work[0], io.nbytes, "device")
            if io.role == "input":
                data = _input_data(io, runtime, rng)
                held.arrays[io.tensor] = data
                _fill(dev, api, b.addr, "device", data.view(np.uint8).reshape(-1))
        elif io.tensor in shared and shared[io.tensor] in by_name:   # bound to another I/O's buffer
            other = by_name[shared[io.tensor]]
            b = UserBuffer(io.tensor, other.addr, other.size, other.placement)
            if io.role == "input":
                held.arrays[io.tensor] = _view(held.arrays.get(other.name), io)
        else:
            size, shift = sizes.get(io.tensor, io.nbytes), int(io.tensor in misalign)
            b = UserBuffer(io.tensor, 0, 0, placement)
            if size:
                tag = f"user {io.role} {io.tensor}"
                alloc = api.malloc if placement == "device" else dev.host_malloc
                raw = alloc(size + shift, tag=tag)
                held.raw.append((raw, placement))
                b = UserBuffer(io.tensor, raw + shift, size + OVERHANG * (io.tensor in overhang), placement)
            if io.role == "input":
                data = _input_data(io, runtime, rng)
                held.arrays[io.tensor] = data
                if size:
                    _fill(dev, api, b.addr, placement, data.view(np.uint8).reshape(-1)[:size])
        by_name[io.tensor] = b
        (held.ins if io.role == "input" else held.outs).append(b)
    _free_dangling(dev, api, held, {by_name[n].addr - int(n in misalign) for n in dangling if n in by_name})
    missing = set(runtime.get("missing", ()))
    held.ins[:] = [None if b.name in missing else b for b in held.ins]
    held.outs[:] = [None if b.name in missing else b for b in held.outs]
    return held


def _input_data(io, runtime: dict, rng) -> np.ndarray:
    dt = dtypes.numpy_dtype(io.dtype)
    return np.ones(io.shape, dt) if runtime.get("inputs") == "ones" else rng.standard_normal(io.shape).astype(dt)


def _in_work(model, runtime: dict, work: tuple[int, int] | None):
    """The model I/O whose buffer ``buffer_in_work_memory`` puts in the caller's work memory (None: no such key)."""
    role = runtime.get("buffer_in_work_memory")
    if role is None:
        return None
    ios = model.tasks.inputs if role == "input" else model.tasks.outputs
    if work is None or not ios:
        raise ScenarioError(f"runtime v1 scenario: buffer_in_work_memory {role!r}: "
                            f"{'no work memory given' if work is None else f'the model has no {role}'}",
                            key="buffer_in_work_memory")
    return ios[0]


def _free_dangling(dev, api, held: _Held, addresses: set) -> None:
    """The caller frees the allocations of its ``dangling`` buffers (after every buffer was allocated, so
    no later buffer takes their place) and keeps passing the buffers."""
    for raw, placement in [r for r in held.raw if r[0] in addresses]:
        (api.free if placement == "device" else dev.host_free)(raw)
        held.raw.remove((raw, placement))


def _view(data, io):
    """Another input's array as ``io``'s (the same bytes); None when the sizes differ (no oracle)."""
    if data is None or data.nbytes != io.nbytes:
        return None
    return np.ascontiguousarray(data).view(np.uint8).view(dtypes.numpy_dtype(io.dtype)).reshape(io.shape)


def _free(dev, api, held: _Held) -> None:
    for addr, placement in held.raw:
        (api.free if placement == "device" else dev.host_free)(addr)


def _read(dev, model, held: _Held) -> dict:
    """The outputs as the caller reads them back from its buffers (not counted, not a model copy)."""
    got = {}
    for io, b in zip(model.tasks.outputs, held.outs):
        if b is not None and b.addr and b.size >= io.nbytes:
            read = dev.peek if b.placement == "device" else dev.host_read
            got[io.tensor] = read(b.addr, io.shape, dtypes.numpy_dtype(io.dtype))
    return got


class _Judge:
    """Holds each successful call's outputs to the oracle (one evaluation per distinct input set)."""

    def __init__(self, graph, model, runtime: dict, notes: list):
        self.graph, self.model, self.notes = graph, model, notes
        self.oracle = None if graph is None else judge.choose(graph, runtime)
        self.names = [io_names(model)[("output", io.index)] for io in model.tasks.outputs]
        self._cache: dict = {}

    def __call__(self, dev, held: _Held, call: str) -> tuple:
        if self.oracle is None:
            return ()
        got = _read(dev, self.model, held)
        if not got:
            return ()
        if any(v is None for v in held.arrays.values()):
            self.notes.append(Note(call, "no oracle: two inputs of different sizes share one buffer"))
            want = None
        else:
            key = tuple(sorted((k, judge.digest(v)) for k, v in held.arrays.items()))
            if key not in self._cache:
                self._cache[key] = judge.reference(self.oracle, dict(held.arrays), call, self.notes)
            want = self._cache[key]
        return judge.results(self.model.tasks.outputs, self.names, list(self.graph.outputs), got, want, call,
                             self.notes)


BAD_BINDING = ("input_sizes", "output_sizes", "misalign", "overhang", "dangling", "missing", "share",
               "buffer_in_work_memory")


def _binding_of(runtime: dict, k: int) -> dict:
    """The keys call ``k``'s buffers are made from: with ``retry``, a later call's leave the bad binding out."""
    if k and runtime.get("retry"):
        return {key: v for key, v in runtime.items() if key not in BAD_BINDING}
    return runtime


def _fixed(held: _Held, runtime: dict) -> _Held | None:
    """The caller's fix when its only mistake was an ``overhang``: the same buffers, each stating the size of
    its allocation, so the retry binds the very addresses the refused call was given (None: another mistake,
    which the retry fixes with fresh buffers)."""
    if {k for k in BAD_BINDING if runtime.get(k)} != {"overhang"}:
        return None
    over = set(runtime["overhang"])

    def fix(b: UserBuffer) -> UserBuffer:
        return attrs.evolve(b, size=b.size - OVERHANG) if b.name in over and b.addr else b
    return _Held([fix(b) for b in held.ins], [fix(b) for b in held.outs], held.raw, held.arrays)


def _rebind(runtime: dict, k: int) -> bool:
    """Whether call ``k`` (from 0) gets fresh buffers (a retry's second call always does)."""
    if k == 1 and runtime.get("retry"):
        return True
    rebind = runtime.get("rebind", True)
    if isinstance(rebind, list):
        return k == 0 or (rebind[k - 1] if k - 1 < len(rebind) else True)
    return k == 0 or bool(rebind)


def _concurrent(lm, dev, api, model, runtime: dict, rng, judged: _Judge, notes: list, work=None) -> list:
    """``threads`` calls at once on one loaded model, each on fresh buffers; (record, outputs, the buffers the
    caller passed) each."""
    helds = [_buffers(dev, api, model, runtime, rng, work) for _ in range(int(runtime.get("threads", 0)))]
    if not helds:
        return []
    batch = runtime.get("batch")
    with ThreadPoolExecutor(len(helds)) as pool:
        futures = [pool.submit(api.execute, lm, h.ins, h.outs, batch) for h in helds]
    done = []
    for k, (h, f) in enumerate(zip(helds, futures)):
        try:
            done.append((f.result(), judged(dev, h, f"v1 thread {k}"), passed_buffers(model, h.ins, h.outs)))
        except RuntimeV1Error as e:   # refused: only the model's last call keeps its record
            if not any(runtime.get(key) for key in BAD_BINDING + ("placement",)):
                notes.append(Note(f"v1 thread {k}", f"the call failed on valid buffers: {type(e).__name__}: {e}",
                                  failed=True))
        finally:
            _free(dev, api, h)
    return done


def observe_scenario(model, runtime: dict, graph=None) -> Observations:
    options = options_of(runtime)
    dev = Device(model.soc)
    api = entry(dev, runtime)
    rng = np.random.default_rng(runtime.get("seed", 0))
    caller = {key: _caller_memory(api, model, key) for key in CALLER_MEMORY if runtime.get(key)}
    peer = _Peer(dev, api, model, options, runtime, rng) if "session_peer" in runtime else None
    lm = api.load(model, options, caller.get("work_memory"), caller.get("weight_memory"))
    notes: list = []
    judged = _Judge(graph, model, runtime, notes)
    calls, held = [], None
    for k in range(max(1, int(runtime.get("calls", 1)))):
        if peer is not None and k == runtime["session_peer"]:
            peer.call_and_unload(judged)
        if k and runtime.get("move_work"):
            caller["work_memory"] = _move_work(api, lm, model, caller["work_memory"])
        if k == 1 and runtime.get("retry") and (fixed := _fixed(held, runtime)) is not None:
            held = fixed
        elif _rebind(runtime, k):
            if held is not None:
                _free(dev, api, held)
            held = _buffers(dev, api, model, _binding_of(runtime, k), rng, caller.get("work_memory"))
        outputs = ()
        with contextlib.suppress(RuntimeV1Error):   # a refused call is observed through its record
            api.execute(lm, held.ins, held.outs, runtime.get("batch"))
            outputs = judged(dev, held, f"v1 call {k}")
        # Observed at once: a later move of the work memory changes where the model keeps its I/O.
        calls.append((lm.last_call, outputs, _given(caller), observe_execution(lm, outputs=outputs),
                      passed_buffers(model, held.ins, held.outs)))
    calls += [(r, o, _given(caller), observe_execution(lm, r, outputs=o), passed)
              for r, o, passed in _concurrent(lm, dev, api, model, runtime, rng, judged, notes,
                                              caller.get("work_memory"))]
    # The call started last is observed after the unload (it shows the unload's frees, after those of the
    # racing calls that finished later): whichever of the threads' calls finished last, the same call
    # carries the unload on every run.
    observations = [_as_asked(obs, options, g, passed) for _r, _o, g, obs, passed in calls[:-1]]
    begin = dev.trace.mark()
    api.unload(lm)   # the trace around the caller's unload call, not the model's record of it
    record, outputs, given, _, passed = calls[-1]
    observations.append(_as_asked(observe_execution(lm, record, outputs=outputs, unload_span=(begin, dev.trace.mark())),
                                  options, given, passed))
    if runtime.get("after_unload"):   # transcribed by the caller: a refused call leaves the runtime no record
        batch = runtime.get("batch")
        observations.append(transcribe(
            dev, model, "v1", "v1 call after unload", lambda: api.execute(lm, held.ins, held.outs, batch),
            [(b.name, b.addr, b.size, b.placement) for b in held.ins + held.outs if b is not None],
            input_buffers=len(held.ins), output_buffers=len(held.outs), batch=batch,
            unloaded=True))
    _free(dev, api, held)
    for addr, _size in caller.values():
        api.free(addr)
    if peer is not None:
        if peer.observed is None:   # session_peer == calls: the peer outlived the run
            peer.call_and_unload(judged)
        observations.append(peer.observed)
    return Observations(observations, notes)


class _Peer:
    """``session_peer``: the same model loaded into the run's session before the run's load, zero copy the
    opposite of the run's; one call on fresh valid buffers, then its unload, observed together."""

    def __init__(self, dev, api, model, options: LoadOptions, runtime: dict, rng):
        self.dev, self.api, self.model, self.rng = dev, api, model, rng
        self.runtime = {k: runtime[k] for k in ("inputs", "batch") if k in runtime}
        self.options = LoadOptions(zero_copy=not options.zero_copy,
                                   legacy_copy_only_addrs=options.legacy_copy_only_addrs, session=options.session)
        self.lm = api.load(model, self.options, None, None)
        self.observed = None

    def call_and_unload(self, judged: _Judge) -> None:
        held = _buffers(self.dev, self.api, self.model, self.runtime, self.rng)
        outputs = ()
        with contextlib.suppress(RuntimeV1Error):   # a refused valid call: V1-VALID-CALL-SUCCEEDS judges it
            self.api.execute(self.lm, held.ins, held.outs, self.runtime.get("batch"))
            outputs = judged(self.dev, held, "v1 session peer call")
        record = self.lm.last_call
        begin = self.dev.trace.mark()
        self.api.unload(self.lm)
        self.observed = _as_asked(observe_execution(self.lm, record, outputs=outputs,
                                                    unload_span=(begin, self.dev.trace.mark())), self.options, (),
                                  passed_buffers(self.model, held.ins, held.outs))
        _free(self.dev, self.api, held)


def _as_asked(obs, options: LoadOptions, given: tuple, passed: tuple):
    """``obs`` with the load options the run asked for, not the ones the loaded model reports: the claims
    then judge what the caller asked (a load call that dropped reuseZeroCopyMemory or zero copy on the
    way, through a config handle for one, runs a model that breaks them); with the memory the caller
    had given the model at that call (``given``), not the bases the model reports now; and with the
    buffers the caller passed (``passed``, checks/execution/passed.py), not the runtime's record of them."""
    asked = LoadOptionsObservation("v1", zero_copy=options.zero_copy,
                                   reuse_zero_copy_memory=bool(options.reuse_zero_copy_memory),
                                   legacy_copy_only_addrs=options.legacy_copy_only_addrs)
    return attrs.evolve(obs, load=attrs.evolve(obs.load, options=asked, caller_memory=given or None),
                        caller_memory=given, buffers=passed)


def _given(caller: dict) -> tuple:
    """The caller's work and weight memory as it has given them to the model so far (load, moves)."""
    return tuple(RegionBinding(key.split("_")[0], ptr, size) for key, (ptr, size) in sorted(caller.items()))


def _move_work(api, lm, model, old: tuple[int, int]) -> tuple[int, int]:
    """The caller moving the work memory: a fresh allocation of the same size, handed to the model, and
    the old one freed (GE's caller may free it once the move returned)."""
    new = _caller_memory(api, model, "work_memory")
    api.update_work_memory(lm, *new)
    api.free(old[0])
    return new


def _caller_memory(api, model, key: str) -> tuple[int, int]:
    """The caller's (ptr, size) for ``key``: exactly what aclmdlQuerySize reports (``query_size``: work =
    memory_size, the zero-copy region included; weight = the weight region), at least one byte."""
    size = api.caller_size(model, key)
    return api.malloc(max(size, 1), f"user {key.replace('_', ' ')}"), size
