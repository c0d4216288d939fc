"""An ACL-style facade over runtime v1 (GE: acl_model.cpp ``aclmdlLoadFromMemWithMem``,
``aclmdlLoadWithConfig``): model ids, datasets, config handles, rt memory.

    acl = Acl(device)
    work, weight = acl.mdl_query_size_from_mem(data)               # aclmdlQuerySizeFromMem
    mid = acl.mdl_load_from_mem(data)                              # aclmdlLoadFromMem
    mid = acl.mdl_load_from_mem_with_mem(data, wp, ws, gp, gs)     # aclmdlLoadFromMemWithMem
    cfg = acl.mdl_create_config_handle()                           # aclmdlCreateConfigHandle
    acl.mdl_set_config_opt(cfg, ACL_MDL_WORKSPACE_MEM_OPTIMIZE, 1) # -> ge.exec.reuseZeroCopyMemory
    mid = acl.mdl_load_with_config(cfg)
    ds = acl.create_dataset(); acl.add_dataset_buffer(ds, acl.create_data_buffer(ptr, size))
    acl.mdl_set_dynamic_batch(mid, inputs_ds, "b1")                # aclmdlSetDynamicBatchSize (branch models)
    acl.mdl_execute(mid, inputs_ds, outputs_ds); acl.mdl_unload(mid)
    ptr = acl.rt_malloc(n); acl.rt_memcpy(dst, dst_max, src, n, kind); acl.rt_free(ptr)

Errors are raised, not returned: every one is a ``RuntimeV1Error`` whose ``code`` is
the value the C API would return (ACL_ERROR_INVALID_PARAM for a null model or
modelSize 0, an unknown model id, a bad config value; GE codes otherwise).
A data buffer's placement (host or device) is found from its address, as GE asks
the driver (``rtPointerGetAttributes``). All calls are thread safe (the device lock).
"""
from __future__ import annotations

import itertools

import attrs

from zcspec.impl.compiler.errors import GraphError
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.device import DeviceError
from zcspec.impl.runtime import branches
from zcspec.impl.runtime.user_buffers import UserBuffer
from zcspec.impl.runtime.v1 import LoadOptions, load, query_size
from zcspec.impl.runtime.v1.allocator import V1Allocator
from zcspec.impl.runtime.v1.errors import InvalidParam, ModelUnloadedError, ParamInvalid

ACL_MDL_MEM_ADDR_PTR = "ACL_MDL_MEM_ADDR_PTR"           # the model bytes
ACL_MDL_WORK_ADDR_PTR = "ACL_MDL_WORK_ADDR_PTR"
ACL_MDL_WORK_SIZET = "ACL_MDL_WORK_SIZET"
ACL_MDL_WEIGHT_ADDR_PTR = "ACL_MDL_WEIGHT_ADDR_PTR"
ACL_MDL_WEIGHT_SIZET = "ACL_MDL_WEIGHT_SIZET"
ACL_MDL_WORKSPACE_MEM_OPTIMIZE = "ACL_MDL_WORKSPACE_MEM_OPTIMIZE"  # 0 default, 1 inputoutput (SetMdlLoadReuseZeroCopy)
ZCSPEC_ZERO_COPY = "ZCSPEC_ZERO_COPY"                   # ours: zero copy on (True) or off
CONFIG_ATTRS = (ACL_MDL_MEM_ADDR_PTR, ACL_MDL_WORK_ADDR_PTR, ACL_MDL_WORK_SIZET, ACL_MDL_WEIGHT_ADDR_PTR,
                ACL_MDL_WEIGHT_SIZET, ACL_MDL_WORKSPACE_MEM_OPTIMIZE, ZCSPEC_ZERO_COPY)
MEMCPY_KINDS = {"ACL_MEMCPY_HOST_TO_DEVICE": "h2d", "ACL_MEMCPY_DEVICE_TO_HOST": "d2h",
                "ACL_MEMCPY_DEVICE_TO_DEVICE": "d2d", "ACL_MEMCPY_HOST_TO_HOST": "h2h"}


@attrs.frozen
class DataBuffer:
    addr: int
    size: int


@attrs.define
class Dataset:
    """Data buffers; an input dataset of a dynamic-batch model also carries the branch
    ``batch`` chosen for it (``mdl_set_dynamic_batch``), None until one is chosen."""

    buffers: list = attrs.field(factory=list)
    batch: str | None = None


@attrs.define
class ConfigHandle:
    opts: dict = attrs.field(factory=dict)


class Acl:
    """The ACL entry points for one device."""

    def __init__(self, device):
        self.device = device
        self.alloc = V1Allocator(device)
        self._models: dict[int, object] = {}
        self._ids = itertools.count(1)

    # -- rt memory -------------------------------------------------------------------

    def rt_malloc(self, size: int) -> int:
        if size <= 0:
            raise InvalidParam(f"size={size} must be positive")
        return self.alloc.malloc(size, "aclrtMalloc", owner="user")

    def rt_free(self, ptr: int) -> None:
        if not ptr:
            raise InvalidParam("null pointer")
        try:
            self.alloc.free(ptr)
        except DeviceError as e:
            raise InvalidParam(f"{ptr:#x} is not a live device allocation: {e}") from e

    def rt_memcpy(self, dst: int, dst_max: int, src: int, count: int, kind: str) -> None:
        if not dst or not src:
            raise InvalidParam("null pointer")
        if count > dst_max:
            raise InvalidParam(f"count={count} exceeds the destination's {dst_max} bytes")
        if kind not in MEMCPY_KINDS:
            raise InvalidParam(f"kind={kind!r} must be one of {sorted(MEMCPY_KINDS)}")
        with self.alloc.lock:
            try:
                self.device.memcpy(dst, src, count, MEMCPY_KINDS[kind])
            except DeviceError as e:
                raise InvalidParam(f"memcpy {src:#x} -> {dst:#x} of {count} bytes: {e}") from e

    # -- datasets --------------------------------------------------------------------

    def create_data_buffer(self, addr: int, size: int) -> DataBuffer:
        return DataBuffer(int(addr), int(size))

    def create_dataset(self) -> Dataset:
        return Dataset()

    def add_dataset_buffer(self, ds: Dataset, buf: DataBuffer) -> None:
        ds.buffers.append(buf)

    # -- models ----------------------------------------------------------------------

    def mdl_query_size_from_mem(self, data: bytes) -> tuple[int, int]:
        return query_size(self._parse(data))

    def mdl_load_from_mem(self, data: bytes, *, zero_copy: bool = True) -> int:
        return self._load(data, LoadOptions(zero_copy=zero_copy), None, None)

    def mdl_load_from_mem_with_mem(self, data: bytes, work_ptr: int, work_size: int, weight_ptr: int,
                                   weight_size: int, *, zero_copy: bool = True) -> int:
        """Caller memory: a null pointer means "allocate it yourself" for that part (aclmdlLoadFromMemWithMem)."""
        work = (work_ptr, work_size) if work_ptr else None
        weight = (weight_ptr, weight_size) if weight_ptr else None
        return self._load(data, LoadOptions(zero_copy=zero_copy), work, weight)

    def mdl_create_config_handle(self) -> ConfigHandle:
        return ConfigHandle()

    def mdl_set_config_opt(self, handle: ConfigHandle, attr: str, value) -> None:
        if attr not in CONFIG_ATTRS:
            raise InvalidParam(f"unknown config attribute {attr!r}; known: {list(CONFIG_ATTRS)}")
        if attr == ACL_MDL_WORKSPACE_MEM_OPTIMIZE and (isinstance(value, bool) or value not in (0, 1)):
            raise InvalidParam(f"{attr}={value!r} must be 0 (ACL_WORKSPACE_MEM_OPTIMIZE_DEFAULT) or 1 "
                               "(ACL_WORKSPACE_MEM_OPTIMIZE_INPUTOUTPUT)")
        if attr == ZCSPEC_ZERO_COPY and not isinstance(value, bool):
            raise InvalidParam(f"{attr}={value!r} must be True (zero copy on) or False (off)")
        handle.opts[attr] = value

    def mdl_load_with_config(self, handle: ConfigHandle) -> int:
        o = handle.opts
        if ACL_MDL_MEM_ADDR_PTR not in o:
            raise InvalidParam(f"the config handle has no {ACL_MDL_MEM_ADDR_PTR} (the model bytes)")
        options = LoadOptions(zero_copy=bool(o.get(ZCSPEC_ZERO_COPY, True)),
                              reuse_zero_copy_memory=int(o.get(ACL_MDL_WORKSPACE_MEM_OPTIMIZE, 0)))
        work = (o[ACL_MDL_WORK_ADDR_PTR], o.get(ACL_MDL_WORK_SIZET, 0)) if o.get(ACL_MDL_WORK_ADDR_PTR) else None
        weight = (o[ACL_MDL_WEIGHT_ADDR_PTR], o.get(ACL_MDL_WEIGHT_SIZET, 0)) if o.get(ACL_MDL_WEIGHT_ADDR_PTR) else None
        return self._load(o[ACL_MDL_MEM_ADDR_PTR], options, work, weight)

    def mdl_execute(self, model_id: int, inputs: Dataset, outputs: Dataset):
        lm = self._model(model_id)
        ins = [self._user_buffer(z, b) for z, b in zip([z for z in lm.io if z.role == "input"], inputs.buffers)]
        outs = [self._user_buffer(z, b) for z, b in zip([z for z in lm.io if z.role == "output"], outputs.buffers)]
        # Extra buffers beyond the model's count still count, so the count check can name them.
        ins += [UserBuffer("<extra>", b.addr, b.size) for b in inputs.buffers[len(ins):]]
        outs += [UserBuffer("<extra>", b.addr, b.size) for b in outputs.buffers[len(outs):]]
        return lm.execute(ins, outs, batch=inputs.batch)

    def mdl_set_dynamic_batch(self, model_id: int, inputs: Dataset, batch: str) -> None:
        """aclmdlSetDynamicBatchSize: choose the dynamic-batch branch the next executions with ``inputs``
        run. GE checks the choice against the model's gears here (``GeExecutor::SetDynamicBatchSize``,
        ``IsDynamicBatchSizeMatchModel``) and writes it into the dataset's dynamic input; we name branches
        by their ``_batch_label`` and keep the choice on the dataset. A label the model lacks is refused."""
        lm = self._model(model_id)
        if why := branches.problem(lm.model.name, branches.labels(lm.model.tasks), batch):
            raise ParamInvalid(why, message_id="")
        inputs.batch = batch

    def mdl_unload(self, model_id: int) -> None:
        self._model(model_id).unload()
        del self._models[model_id]

    def loaded(self, model_id: int):
        """The runtime-v1 LoadedModel behind ``model_id`` (for observation and tests)."""
        return self._model(model_id)

    # -- helpers ---------------------------------------------------------------------

    def _parse(self, data: bytes):
        if not data:
            raise InvalidParam("null model or modelSize 0 (ACL_ERROR_INVALID_PARAM)")
        try:
            return load_model(bytes(data))
        except GraphError as e:
            raise ParamInvalid(f"the model bytes are not a valid model: {e}", buffer="model") from e

    def _load(self, data, options, work, weight) -> int:
        lm = load(self.device, self._parse(data), options, work=work, weight=weight)
        mid = next(self._ids)
        self._models[mid] = lm
        return mid

    def _model(self, model_id: int):
        lm = self._models.get(model_id)
        if lm is None:
            raise ModelUnloadedError(f"id {model_id}")
        return lm

    def _user_buffer(self, z, b: DataBuffer) -> UserBuffer:
        placement = "host" if b.addr and self.device.host.contains(b.addr) else "device"
        return UserBuffer(z.name, b.addr, b.size, placement)
