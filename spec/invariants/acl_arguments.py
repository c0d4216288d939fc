"""Which ACL calls misuse the C API, and the code ACL returns for each misuse: the spec's table of ACL's
argument domains, read by API-MISUSE-REFUSED and API-MISUSE-CHANGES-NOTHING (spec/invariants/api_calls.py).

Decided from the call's observation alone (spec/observables/api_call.py): its arguments, its datasets' data
buffers, the device trace's allocations up to the call (which memory is live, and in which address space)
and the model ids the caller holds. Each rule names where ACL or GE states it:

- ``aclrtMalloc``: ``size`` positive; ``aclrtFree``: ``devPtr`` the start of a live device allocation;
  ``aclrtMemcpy``: neither pointer null, ``count`` at most ``destMax``, a known ``kind`` whose direction
  matches the address spaces the pointers lie in, and ``count`` bytes from each pointer inside one live
  allocation (ACL_ERROR_INVALID_PARAM, aclError.md; runtime's rtMemcpy checks).
- ``aclmdlLoadFromMem``/``aclmdlQuerySizeFromMem``: ``modelSize`` positive; ``aclmdlLoadFromMemWithMem``:
  work and weight sizes not negative; ``aclmdlSetConfigOpt``: a known attribute with a value in its domain;
  ``aclmdlLoadWithConfig``: a handle holding the model's bytes, every attribute in its domain, and
  reuseZeroCopyMemory only with zero copy on (ACL_ERROR_INVALID_PARAM).
- ``aclmdlExecute``, ``aclmdlSetDynamicBatchSize``, ``aclmdlUnload``: a model id the caller holds (GE's
  model manager, ACL_ERROR_GE_PARAM_INVALID); an execute's datasets hold as many buffers as the model file
  has inputs and outputs, none null unless it is 0 bytes (ACL_ERROR_INVALID_PARAM) and every other inside
  one live allocation (ACL_ERROR_GE_PARAM_INVALID); a dynamic-batch choice names a label of the model file.

Not judged here (their cases still hold them, checks/acl_refusal_cases.py): bytes that are no model file or
a model compiled for another SoC (whether bytes are a model is the model file claims' to say), work memory
smaller than the model needs, and a load that runs out of device memory (not a misuse: a resource failure).
"""
from __future__ import annotations

import attrs

from zcspec.spec.invariants._trace import live_allocations
from zcspec.spec.observables.api_call import ApiCallObservation

ACL_ERROR_INVALID_PARAM = "100000"       # acl/acl_base.h, aclError.md
ACL_ERROR_GE_PARAM_INVALID = "145000"    # inc/external/ge/ge_error_codes.h
ACL_SOURCE = ("aclError.md (ACL_ERROR_INVALID_PARAM); api/acl/acl_model/model/acl_model.cpp (aclmdlLoadFromMem, "
              "aclmdlExecute, aclmdlSetDynamicBatchSize, aclmdlUnload), model.cpp (aclmdlLoadFromMemImpl, "
              "aclmdlExecuteImpl, aclmdlUnloadImpl)")
# Each known memcpy kind: (the source's address space, the destination's).
MEMCPY_KINDS = {"ACL_MEMCPY_HOST_TO_DEVICE": ("host", "device"), "ACL_MEMCPY_DEVICE_TO_HOST": ("device", "host"),
                "ACL_MEMCPY_DEVICE_TO_DEVICE": ("device", "device"), "ACL_MEMCPY_HOST_TO_HOST": ("host", "host")}
MODEL_BYTES = "ACL_MDL_MEM_ADDR_PTR"
REUSE = "ACL_MDL_WORKSPACE_MEM_OPTIMIZE"
ZERO_COPY = "ZCSPEC_ZERO_COPY"   # zcspec's switch (zero copy off); GE has none


@attrs.frozen
class ConfigDomain:
    """A config attribute's values: ``type`` (``any``: not judged) and, for an int, the values it may take."""

    type: str
    values: tuple[int, ...] = ()

    def why_not(self, arg) -> str | None:
        if self.type == "any":
            return None
        if arg.type != self.type:
            return f"a {arg.type} ({arg.value}), where ACL takes a {self.type}"
        if self.values and arg.value not in {repr(v) for v in self.values}:
            return f"{arg.value}, where ACL takes {' or '.join(map(str, self.values))}"
        return None


# aclmdlConfigAttr (acl/acl_mdl.h) as the facade names them; model_config_om2.cpp CheckMdlLoadReuseZeroCopy.
CONFIG_DOMAINS = {
    MODEL_BYTES: ConfigDomain("any"), "ACL_MDL_WORK_ADDR_PTR": ConfigDomain("any"),
    "ACL_MDL_WORK_SIZET": ConfigDomain("any"), "ACL_MDL_WEIGHT_ADDR_PTR": ConfigDomain("any"),
    "ACL_MDL_WEIGHT_SIZET": ConfigDomain("any"), REUSE: ConfigDomain("int", (0, 1)), ZERO_COPY: ConfigDomain("bool"),
}


@attrs.frozen
class Misuse:
    """Why the call misuses the API, texts a refusal may name it by, and the codes ACL returns for it."""

    why: str
    names: tuple[str, ...]
    codes: tuple[str, ...]


def _int(obs: ApiCallObservation, name: str) -> int | None:
    a = obs.argument(name)
    if a is None or a.type not in ("int", "bool", "bytes"):   # bytes: by their length
        return None
    try:
        return int(a.value)
    except ValueError:
        return None


OWNERS = ("model", "runtime", "pool", "session", "user")   # whoever allocated it, memory a pointer may lie in


def _live(obs: ApiCallObservation) -> dict:
    """Every allocation live when the call began, by address, from the trace's alloc and free events."""
    return live_allocations(obs.allocations, OWNERS)


def _holding(live: dict, address: int, size: int) -> str | None:
    """The address space of the one live allocation holding ``size`` bytes from ``address`` (None: none)."""
    for e in live.values():
        if e.size and e.address <= address and address + max(size, 1) <= e.address + e.size:
            return e.space or "device"
    return None


def _invalid(why: str, *names: str) -> Misuse:
    return Misuse(why, names, (ACL_ERROR_INVALID_PARAM,))


def _param_invalid(why: str, *names: str) -> Misuse:
    return Misuse(why, names, (ACL_ERROR_GE_PARAM_INVALID,))


def _malloc(obs, out: dict) -> None:
    arg = obs.argument("size")
    size = _int(obs, "size")
    if size is None or size <= 0:
        out["size"] = _invalid(f"aclrtMalloc of size {arg.value if arg else '(none)'}: the size must be positive",
                               "size")


def _free(obs, out: dict) -> None:
    ptr = _int(obs, "devPtr") or 0
    live = _live(obs)
    if not ptr:
        out["devPtr"] = _invalid("aclrtFree of a null pointer", "null")
    elif ptr not in live or (live[ptr].space or "device") != "device":
        out["devPtr"] = _invalid(f"aclrtFree of {ptr:#x}, which is not the start of a live device allocation",
                                 hex(ptr))


def _memcpy(obs, out: dict) -> None:
    dst, src = _int(obs, "dst") or 0, _int(obs, "src") or 0
    dest_max, count = _int(obs, "destMax") or 0, _int(obs, "count") or 0
    kind = obs.argument("kind").value.strip("'\"") if obs.argument("kind") else ""
    if not dst or not src:
        out["pointer"] = _invalid(f"aclrtMemcpy with a null {'destination' if not dst else 'source'}", "null")
        return
    if count > dest_max:
        out["count"] = _invalid(f"aclrtMemcpy of count {count} into destMax {dest_max}", "count")
    if kind not in MEMCPY_KINDS:
        out["kind"] = _invalid(f"aclrtMemcpy of unknown kind {kind!r}", "kind")
        return
    live = _live(obs)
    for role, address, space in (("source", src, MEMCPY_KINDS[kind][0]), ("destination", dst, MEMCPY_KINDS[kind][1])):
        held = _holding(live, address, count)
        if held is None:
            out[role] = _invalid(f"aclrtMemcpy's {role}: {count} bytes from {address:#x} are not inside one live "
                                 "allocation", hex(address))
        elif held != space:
            out[role] = _invalid(f"aclrtMemcpy's {role} {address:#x} is {held} memory, but {kind} takes {space} "
                                 "memory there", hex(address))


def _model_size(obs, out: dict) -> None:
    size = _int(obs, "modelSize")
    if size is not None and size <= 0:
        out["modelSize"] = _invalid(f"{obs.entry} of modelSize {size}: a model has bytes", "modelSize")
    zc = obs.argument("zero_copy")
    if zc is not None and zc.type != "bool":
        out["zero_copy"] = _invalid(f"zero_copy is a {zc.type} ({zc.value}), where the load takes a bool", "zero_copy")


def _with_mem(obs, out: dict) -> None:
    _model_size(obs, out)
    for name in ("workSize", "weightSize"):
        size = _int(obs, name)
        if size is not None and size < 0:
            out[name] = _invalid(f"aclmdlLoadFromMemWithMem {name} {size}: a size is not negative", name,
                                 name.removesuffix("Size"))


def _config_values(obs, out: dict, args) -> None:
    for arg in args:
        domain = CONFIG_DOMAINS.get(arg.name)
        if domain is None:
            out[arg.name] = _invalid(f"unknown config attribute {arg.name}", arg.name)
        elif why := domain.why_not(arg):
            out[arg.name] = _invalid(f"config attribute {arg.name} is {why}", arg.name)


def _set_config(obs, out: dict) -> None:
    attr = obs.argument("attr")
    value = obs.argument("value")
    if attr is not None and value is not None:
        _config_values(obs, out, [attrs.evolve(value, name=attr.value.strip("'\""))])


def _load_with_config(obs, out: dict) -> None:
    names = {a.name: a for a in obs.options}
    if MODEL_BYTES not in names or names[MODEL_BYTES].value in ("None", "b''", "0"):
        out[MODEL_BYTES] = _invalid(f"aclmdlLoadWithConfig with a handle holding no {MODEL_BYTES} (the model's "
                                    "bytes)", MODEL_BYTES)
    _config_values(obs, out, obs.options)
    reuse, zero_copy = names.get(REUSE), names.get(ZERO_COPY)
    if reuse is not None and reuse.value == "1" and zero_copy is not None and zero_copy.value == "False":
        out["reuse"] = _invalid(f"{REUSE}=1 (reuseZeroCopyMemory) with zero copy off: the I/O region it leaves "
                                "unbacked is where a copying load puts the I/O", "reuse_zero_copy_memory")


def _model_id(obs, out: dict) -> bool:
    mid = _int(obs, "modelId")
    if mid is None or mid not in obs.loaded:
        out["modelId"] = _param_invalid(f"{obs.entry} of model id {mid}, which the caller does not hold (never "
                                        "loaded, or unloaded)", str(mid))
        return False
    return True


def _execute(obs, out: dict) -> None:
    if not _model_id(obs, out):
        return
    counts = (sum(b.dataset == "inputs" for b in obs.datasets), sum(b.dataset == "outputs" for b in obs.datasets))
    if obs.model and counts != (obs.model_inputs, obs.model_outputs):
        out["buffers"] = _param_invalid(f"{counts[0]} input and {counts[1]} output data buffers for a model file "
                                        f"with {obs.model_inputs} inputs and {obs.model_outputs} outputs",
                                        str(counts[0]), str(counts[1]))
    live, index = _live(obs), {"inputs": 0, "outputs": 0}
    for b in obs.datasets:
        name = f"{b.dataset}[{index.setdefault(b.dataset, 0)}]"
        index[b.dataset] += 1
        if not b.address and b.size:
            out[name] = _invalid(f"{name}: a null address for {b.size} bytes", "null")
        elif b.address and _holding(live, b.address, b.size) is None:
            out[name] = _param_invalid(f"{name}: {b.size} bytes from {b.address:#x} are inside no live allocation",
                                       "live", "allocat")


def _dynamic_batch(obs, out: dict) -> None:
    if not _model_id(obs, out):
        return
    batch = obs.batch
    if obs.model and batch not in obs.branch_labels:
        have = f"branches {list(obs.branch_labels)}" if obs.branch_labels else "no dynamic-batch branches"
        out["batch"] = _param_invalid(f"batch {batch!r} for a model file with {have}", "batch", str(batch))


RULES = {
    "aclrtMalloc": _malloc, "aclrtFree": _free, "aclrtMemcpy": _memcpy,
    "aclmdlLoadFromMem": _model_size, "aclmdlQuerySizeFromMem": _model_size, "aclmdlLoadFromMemWithMem": _with_mem,
    "aclmdlSetConfigOpt": _set_config, "aclmdlLoadWithConfig": _load_with_config, "aclmdlExecute": _execute,
    "aclmdlSetDynamicBatchSize": _dynamic_batch, "aclmdlUnload": _model_id,
}


def acl_misuses(obs: ApiCallObservation) -> dict[str, Misuse]:
    """What misuses ACL's C API in this call: culprit -> Misuse (empty for an entry the table does not judge)."""
    out: dict[str, Misuse] = {}
    rule = RULES.get(obs.entry)
    if rule is not None:
        rule(obs, out)
    return out
