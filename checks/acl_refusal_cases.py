"""Bad calls to the ACL entry points (``impl/runtime/acl.py``): each must be refused with the code the C API
returns, and the refused call must change nothing.

Every execution verify makes through the facade (checks/execution/entries.py) passes good parameters, so a
facade that accepted a null pointer, a zero size, an unknown model id or a bad config value, a runtime that
loaded a model compiled for another SoC or a bad combination of load options, or either of them refusing
such a call only after it had allocated, copied or unloaded something, passed verify. Each case
here makes one bad call on a fixture with one loaded model, a valid input and output dataset and a live
aclrtMalloc buffer, and is judged by the checker's own facts:

- the call raises the runtime's error with the code of ``REFUSED`` (the table below, which names where
  the expectation comes from), not another exception and not success;
- the device trace records nothing during the call (no allocation, free, copy, argument write or
  launch): the refusal comes before any effect;
- the caller's buffers hold the same bytes after it, and the loaded model still runs on the same
  datasets and computes the same outputs; unloading it then frees everything it had allocated.

The bad call is also transcribed from the caller's side (checks/execution/acl_calls.py) into an API-call
observation, which verify hands to the spec's API-misuse claims: API-MISUSE-REFUSED and
API-MISUSE-CHANGES-NOTHING decide from ACL's argument table (spec/invariants/acl_arguments.py), not from the
expectations here, which calls misuse the API and which code ACL returns for them.

``acl_refusal_cases()`` lists the cases; ``run_acl_refusal(case)`` makes one and returns an ``AclRun`` (its
problems, empty when it passed, and the bad call's observation); ``check_acl_refusal(case)`` its problems
alone. verify runs them with the execution kind (``VerifyResult.acl_refusals``).
"""
from __future__ import annotations

from typing import Callable

import attrs
import numpy as np

from zcspec.checks.execution.acl_calls import Transcribing
from zcspec.checks.zoo import load as load_graph
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device import Device
from zcspec.impl.device import trace as tr
from zcspec.impl.platform import dtypes
from zcspec.impl.platform.soc import PROFILES
from zcspec.impl.runtime import acl as acl_api
from zcspec.impl.runtime.v1.errors import RuntimeV1Error
from zcspec.spec.observables.api_call import ApiCallObservation

ACL_ERROR_INVALID_PARAM = 100000      # aclError.md (ACL's own parameter checks)
ACL_ERROR_GE_PARAM_INVALID = 145000   # inc/external/ge/ge_error_codes.h
ACL_ERROR_GE_MEMORY_ALLOCATION = 245000   # inc/external/ge/ge_error_codes.h
ACL_SOURCE = "ACL's aclError.md (ACL_ERROR_INVALID_PARAM); acl model.cpp (aclmdlLoadFromMem, aclmdlExecute, aclmdlUnload)"
CONFIG_SOURCE = "acl model_config_om2.cpp (aclmdlSetConfigOpt: ACL_MDL_WORKSPACE_MEM_OPTIMIZE takes 0 or 1)"
GE_SOURCE = ("runtime/v1/graph/load/model_manager/davinci_model.cc (NnExecute, UpdateAllNodeArgs: E13025), "
             "model_manager.cc (GetModel: an unknown model id)")
FIXTURE_MODEL = "builtin:atomic_clean"
# Loads runtime v1 refuses (impl/runtime/v1/load.py, config.py). Where GE's code differs or GE has no such check,
# the case expects runtime v1's code and its source says so.
SOC_SOURCE = ("runtime v1's code (load.py: ParamInvalid). GE checks the model's SoC when it loads the file "
              "(aclrtCheckArchCompatibility); which code that refusal reaches the caller with is not checked here "
              "(ACL's ACL_GET_ERRCODE_GE mapping of GE's internal PARAM_INVALID may give ACL_ERROR_GE_FAILURE 500002)")
MEMORY_SOURCE = ("davinci_model.cc InitFeatureMapAndP2PMem (MallocFeatureMapMem fails: "
                 "ACL_ERROR_GE_MEMORY_ALLOCATION)")
REUSE_SOURCE = ("acl model_config_om2.cpp CheckMdlLoadReuseZeroCopy (ACL_MDL_WORKSPACE_MEM_OPTIMIZE takes 0 or 1, "
                "ACL_ERROR_INVALID_PARAM): a C handle cannot hold 2; runtime v1's LoadOptions refuses it at the load "
                "with the same code (GE's load would read it as 0, model_utils.cc IsReuseZeroCopyMemory)")
ZERO_COPY_SOURCE = ("runtime v1's code (config.py LoadOptions: InvalidParam): zero copy off is zcspec's option "
                    "(ZCSPEC_ZERO_COPY, zero_copy=), GE has no such option to refuse")


@attrs.frozen
class AclRefusal:
    """One bad call: ``call(fixture)`` makes it; the facade must raise a RuntimeV1Error whose ``code`` is
    ``code``, as ``source`` says the C API returns."""

    label: str
    call: Callable[["Fixture"], object]
    code: int
    source: str


@attrs.define
class Fixture:
    """A device with the ACL facade, one loaded model, its datasets, a live aclrtMalloc buffer and a host one."""

    device: Device
    acl: acl_api.Acl
    model: object            # the compiled model the fixture loaded
    data: bytes
    model_id: int
    inputs: acl_api.Dataset
    outputs: acl_api.Dataset
    buffers: list            # (addr, size) of every caller device buffer, inputs then outputs
    output_specs: list       # (addr, shape, numpy dtype) of each output buffer
    scratch: int             # a live aclrtMalloc buffer of SCRATCH bytes
    host: int                # a live host buffer of SCRATCH bytes

    def outputs_now(self) -> list[np.ndarray]:
        return [self.device.peek(a, shape, dt).copy() for a, shape, dt in self.output_specs]


SCRATCH = 256


def _fixture() -> Fixture:
    model = build_model(load_graph(FIXTURE_MODEL))
    dev = Device(model.soc)
    a = acl_api.Acl(dev)
    data = encode(model)
    mid = a.mdl_load_from_mem(data)
    rng = np.random.default_rng(0)
    inputs, outputs, buffers, specs = a.create_dataset(), a.create_dataset(), [], []
    for io in model.tasks.inputs:
        dt = np.dtype(dtypes.numpy_dtype(io.dtype))
        raw = np.ascontiguousarray(rng.standard_normal(io.shape).astype(dt)).view(np.uint8).reshape(-1)
        addr = a.rt_malloc(raw.size)
        staging = dev.host_malloc(raw.size)
        dev.host_write(staging, raw)
        a.rt_memcpy(addr, raw.size, staging, raw.size, "ACL_MEMCPY_HOST_TO_DEVICE")
        dev.host_free(staging)
        a.add_dataset_buffer(inputs, a.create_data_buffer(addr, raw.size))
        buffers.append((addr, raw.size))
    for io in model.tasks.outputs:
        addr = a.rt_malloc(io.nbytes)
        a.add_dataset_buffer(outputs, a.create_data_buffer(addr, io.nbytes))
        buffers.append((addr, io.nbytes))
        specs.append((addr, io.shape, np.dtype(dtypes.numpy_dtype(io.dtype))))
    a.mdl_execute(mid, inputs, outputs)
    return Fixture(dev, a, model, data, mid, inputs, outputs, buffers, specs, a.rt_malloc(SCRATCH), dev.host_malloc(SCRATCH))


def _dataset(f: Fixture, pairs) -> acl_api.Dataset:
    ds = f.acl.create_dataset()
    for addr, size in pairs:
        f.acl.add_dataset_buffer(ds, f.acl.create_data_buffer(addr, size))
    return ds


def _config(f: Fixture, **opts) -> acl_api.ConfigHandle:
    cfg = f.acl.mdl_create_config_handle()
    for attr, value in opts.items():
        cfg.opts[attr] = value   # set directly: the option under test is the load's, not aclmdlSetConfigOpt's
    return cfg


def _freed(f: Fixture) -> int:
    """A device address that was allocated and freed: not live any more."""
    addr = f.acl.rt_malloc(64)
    f.acl.rt_free(addr)
    return addr


def _other_soc_model(f: Fixture) -> bytes:
    """The fixture's graph compiled for a SoC other than the device's."""
    soc = next(name for name in PROFILES if name != f.device.soc.name)
    return encode(build_model(load_graph(FIXTURE_MODEL), CompileOptions(soc=soc)))


def _feature_map_past_device(f: Fixture) -> bytes:
    """A model whose feature map (one float32 tensor between two Relus) is larger than the device's memory."""
    b = GraphBuilder("feature_map_past_device")
    x = b.input("x", (f.device.mem.capacity // 4 + 1,))
    b.output(b.op("Relu", [b.op("Relu", [x])]))
    return encode(build_model(b.build(), CompileOptions(soc=f.device.soc.name)))


def _reuse_without_zero_copy(f: Fixture) -> acl_api.ConfigHandle:
    """A config handle, set through aclmdlSetConfigOpt, asking for reuseZeroCopyMemory=1 with zero copy off."""
    cfg = f.acl.mdl_create_config_handle()
    f.acl.mdl_set_config_opt(cfg, acl_api.ACL_MDL_MEM_ADDR_PTR, f.data)
    f.acl.mdl_set_config_opt(cfg, acl_api.ZCSPEC_ZERO_COPY, False)
    f.acl.mdl_set_config_opt(cfg, acl_api.ACL_MDL_WORKSPACE_MEM_OPTIMIZE, 1)
    return cfg


def _output_buffers(f: Fixture) -> list:
    """(addr, size) of the fixture's output buffers."""
    return f.buffers[len(f.inputs.buffers):]


def acl_refusal_cases() -> list[AclRefusal]:
    inv, ge = ACL_ERROR_INVALID_PARAM, ACL_ERROR_GE_PARAM_INVALID
    return [
        AclRefusal("aclrtMalloc size 0", lambda f: f.acl.rt_malloc(0), inv, ACL_SOURCE),
        AclRefusal("aclrtMalloc size -1", lambda f: f.acl.rt_malloc(-1), inv, ACL_SOURCE),
        AclRefusal("aclrtFree null", lambda f: f.acl.rt_free(0), inv, ACL_SOURCE),
        AclRefusal("aclrtFree of freed memory", lambda f: f.acl.rt_free(_freed(f)), inv, ACL_SOURCE),
        AclRefusal("aclrtFree of a host pointer", lambda f: f.acl.rt_free(f.host), inv, ACL_SOURCE),
        AclRefusal("aclrtMemcpy null destination",
                   lambda f: f.acl.rt_memcpy(0, SCRATCH, f.host, 16, "ACL_MEMCPY_HOST_TO_DEVICE"), inv, ACL_SOURCE),
        AclRefusal("aclrtMemcpy null source",
                   lambda f: f.acl.rt_memcpy(f.scratch, SCRATCH, 0, 16, "ACL_MEMCPY_HOST_TO_DEVICE"), inv, ACL_SOURCE),
        AclRefusal("aclrtMemcpy count above destMax",
                   lambda f: f.acl.rt_memcpy(f.scratch, 16, f.host, 32, "ACL_MEMCPY_HOST_TO_DEVICE"), inv, ACL_SOURCE),
        AclRefusal("aclrtMemcpy unknown kind",
                   lambda f: f.acl.rt_memcpy(f.scratch, SCRATCH, f.host, 16, "ACL_MEMCPY_SIDEWAYS"), inv, ACL_SOURCE),
        AclRefusal("aclrtMemcpy kind against the pointers",
                   lambda f: f.acl.rt_memcpy(f.scratch, SCRATCH, f.host, 16, "ACL_MEMCPY_DEVICE_TO_HOST"), inv,
                   ACL_SOURCE),
        AclRefusal("aclrtMemcpy past the source's end",
                   lambda f: f.acl.rt_memcpy(f.host, SCRATCH * 2, f.scratch, SCRATCH * 2, "ACL_MEMCPY_DEVICE_TO_HOST"),
                   inv, ACL_SOURCE),
        AclRefusal("aclmdlLoadFromMem modelSize 0", lambda f: f.acl.mdl_load_from_mem(b""), inv, ACL_SOURCE),
        AclRefusal("aclmdlLoadFromMem bytes that are no model",
                   lambda f: f.acl.mdl_load_from_mem(b"\x00" * 64), ge, ACL_SOURCE),
        AclRefusal("aclmdlLoadFromMem a truncated model",
                   lambda f: f.acl.mdl_load_from_mem(f.data[:len(f.data) // 2]), ge, ACL_SOURCE),
        AclRefusal("aclmdlQuerySizeFromMem modelSize 0", lambda f: f.acl.mdl_query_size_from_mem(b""), inv, ACL_SOURCE),
        AclRefusal("aclmdlLoadFromMemWithMem work memory too small",
                   lambda f: f.acl.mdl_load_from_mem_with_mem(f.data, f.scratch, 1, 0, 0), ge, GE_SOURCE),
        AclRefusal("aclmdlLoadFromMemWithMem negative work size",
                   lambda f: f.acl.mdl_load_from_mem_with_mem(f.data, f.scratch, -1, 0, 0), inv, ACL_SOURCE),
        AclRefusal("aclmdlSetConfigOpt unknown attribute",
                   lambda f: f.acl.mdl_set_config_opt(f.acl.mdl_create_config_handle(), "ACL_MDL_NO_SUCH", 1), inv,
                   CONFIG_SOURCE),
        AclRefusal("aclmdlSetConfigOpt ACL_MDL_WORKSPACE_MEM_OPTIMIZE=2",
                   lambda f: f.acl.mdl_set_config_opt(f.acl.mdl_create_config_handle(),
                                                      acl_api.ACL_MDL_WORKSPACE_MEM_OPTIMIZE, 2), inv, CONFIG_SOURCE),
        AclRefusal("aclmdlLoadWithConfig without the model bytes",
                   lambda f: f.acl.mdl_load_with_config(_config(f)), inv, CONFIG_SOURCE),
        AclRefusal("aclmdlLoadFromMem a model compiled for another SoC",
                   lambda f: f.acl.mdl_load_from_mem(_other_soc_model(f)), ge, SOC_SOURCE),
        # The weights come from the caller (the model has none), so the feature map is the load's first
        # allocation, in GE as in runtime v1: its failure is refused before any effect.
        AclRefusal("aclmdlLoadFromMemWithMem a feature map larger than the device's memory",
                   lambda f: f.acl.mdl_load_from_mem_with_mem(_feature_map_past_device(f), 0, 0, f.scratch, SCRATCH),
                   ACL_ERROR_GE_MEMORY_ALLOCATION, MEMORY_SOURCE),
        AclRefusal("aclmdlLoadWithConfig a handle holding ACL_MDL_WORKSPACE_MEM_OPTIMIZE=2",
                   lambda f: f.acl.mdl_load_with_config(
                       _config(f, **{acl_api.ACL_MDL_MEM_ADDR_PTR: f.data, acl_api.ACL_MDL_WORKSPACE_MEM_OPTIMIZE: 2})),
                   inv, REUSE_SOURCE),
        AclRefusal("aclmdlLoadWithConfig reuseZeroCopyMemory=1 with zero copy off",
                   lambda f: f.acl.mdl_load_with_config(_reuse_without_zero_copy(f)), inv, ZERO_COPY_SOURCE),
        AclRefusal("aclmdlLoadFromMem zero_copy='no' (not a bool)",
                   lambda f: f.acl.mdl_load_from_mem(f.data, zero_copy="no"), inv, ZERO_COPY_SOURCE),
        AclRefusal("aclmdlSetConfigOpt ZCSPEC_ZERO_COPY='no' (not a bool)",
                   lambda f: f.acl.mdl_set_config_opt(f.acl.mdl_create_config_handle(), acl_api.ZCSPEC_ZERO_COPY, "no"),
                   inv, ZERO_COPY_SOURCE),
        AclRefusal("aclmdlExecute unknown model id",
                   lambda f: f.acl.mdl_execute(f.model_id + 100, f.inputs, f.outputs), ge, GE_SOURCE),
        AclRefusal("aclmdlExecute one input too few",
                   lambda f: f.acl.mdl_execute(f.model_id, _dataset(f, []), f.outputs), ge, GE_SOURCE),
        AclRefusal("aclmdlExecute one output too many",
                   lambda f: f.acl.mdl_execute(f.model_id, f.inputs,
                                               _dataset(f, _output_buffers(f) + [(f.scratch, SCRATCH)])), ge, GE_SOURCE),
        AclRefusal("aclmdlExecute a null output buffer",
                   lambda f: f.acl.mdl_execute(f.model_id, f.inputs,
                                               _dataset(f, [(0, s) for _, s in _output_buffers(f)])), inv, GE_SOURCE),
        AclRefusal("aclmdlExecute an output into freed memory",
                   lambda f: f.acl.mdl_execute(f.model_id, f.inputs,
                                               _dataset(f, [(_freed(f), s) for _, s in _output_buffers(f)])), ge, GE_SOURCE),
        AclRefusal("aclmdlSetDynamicBatchSize on a model without branches",
                   lambda f: f.acl.mdl_set_dynamic_batch(f.model_id, f.inputs, "b1"), ge, GE_SOURCE),
        AclRefusal("aclmdlUnload unknown model id", lambda f: f.acl.mdl_unload(f.model_id + 100), ge, GE_SOURCE),
    ]


_EFFECTS = (tr.Alloc, tr.Free, tr.Copy, tr.ArgWrite, tr.Launch, tr.FaultedLaunch, tr.Memset)
_SETUP = (tr.Alloc, tr.Free)   # what a case's own setup (a freed address) may record before its bad call


@attrs.frozen
class AclRun:
    """One case made: its problems (empty: it passed) and the bad call as its caller saw it (None: the case
    made no call through an entry point)."""

    problems: list[str]
    observation: ApiCallObservation | None


def check_acl_refusal(case: AclRefusal) -> list[str]:
    """The problems of one bad call (empty: refused with the right code, and nothing changed)."""
    return run_acl_refusal(case).problems


def _held(f: Fixture) -> list:
    """Every buffer the fixture's caller holds: (name, address, size, placement)."""
    return ([(f"buffer {addr:#x}", addr, size, "device") for addr, size in f.buffers]
            + [("scratch", f.scratch, SCRATCH, "device"), ("host", f.host, SCRATCH, "host")])


def run_acl_refusal(case: AclRefusal) -> AclRun:
    """Make one bad call on a fresh fixture; its problems and its transcription."""
    f = _fixture()
    before_bytes = [f.device.peek(a, (s,), np.uint8).copy() for a, s in f.buffers]
    before_out = f.outputs_now()
    facade = f.acl
    f.acl = calls = Transcribing(facade, f.device, _held(f), {f.model_id: f.model})
    mark = f.device.trace.mark()
    problems = []
    try:
        case.call(f)
        problems.append(f"accepted: the call returned instead of being refused with code {case.code}")
    except RuntimeV1Error as e:
        if e.code != case.code:
            problems.append(f"refused with code {e.code}, but the C API returns {case.code} ({case.source}): {e}")
    finally:
        f.acl = facade
    events = f.device.trace.since(mark)
    setup = 0
    while setup < len(events) and isinstance(events[setup], _SETUP) and case.label.endswith("freed memory"):
        setup += 1
    touched = [e for e in events[setup:] if isinstance(e, _EFFECTS)]
    if touched:
        problems.append(f"the refused call had effects on the device: {type(touched[0]).__name__} {touched[0]} "
                        f"({len(touched)} event(s))")
    for (addr, size), old in zip(f.buffers, before_bytes):
        if not np.array_equal(f.device.peek(addr, (size,), np.uint8), old):
            problems.append(f"the caller's buffer {addr:#x} ({size} bytes) changed")
    return AclRun(problems + _still_runs(f, before_out), calls.last)


def _still_runs(f: Fixture, before_out: list) -> list[str]:
    """The loaded model runs again on the same datasets with the same outputs (its output buffers cleared
    first), and its unload then frees every allocation its load made."""
    for addr, shape, dt in f.output_specs:
        _clear(f.device, addr, int(np.prod(shape)) * dt.itemsize)
    try:
        f.acl.mdl_execute(f.model_id, f.inputs, f.outputs)
    except RuntimeV1Error as e:
        return [f"after the refused call the loaded model no longer runs: {e}"]
    if any(not np.array_equal(a, b) for a, b in zip(f.outputs_now(), before_out)):
        return ["after the refused call the loaded model computes other outputs"]
    held = _model_allocations(f)
    mark = f.device.trace.mark()
    f.acl.mdl_unload(f.model_id)
    freed = {e.addr for e in f.device.trace.since(mark) if isinstance(e, tr.Free)}
    if held - freed:
        return [f"unloading the model after the refused call left {len(held - freed)} of its allocations live"]
    return []


def _clear(dev: Device, addr: int, n: int) -> None:
    staging = dev.host_malloc(n)
    dev.host_write(staging, np.zeros(n, np.uint8))
    dev.memcpy(addr, staging, n, "h2d")
    dev.host_free(staging)


def _model_allocations(f: Fixture) -> set[int]:
    """Device allocations live now that the caller did not make (its tags begin with "user"), from the trace."""
    live: dict[int, bool] = {}
    for e in f.device.trace.since(0):
        if isinstance(e, tr.Alloc) and e.space == "device":
            live[e.addr] = not e.tag.startswith("user")
        elif isinstance(e, tr.Free):
            live.pop(e.addr, None)
    return {a for a, model in live.items() if model}
