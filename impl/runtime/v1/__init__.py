"""Runtime v1: DavinciModel-style loading, zero-copy slot registration, per-execution address refresh.

Public API::

    from zcspec.impl.runtime.v1 import LoadOptions, load, query_size
    loaded = load(device, model, LoadOptions(zero_copy=True))
    loaded.execute(inputs, outputs)      # lists of impl.runtime.user_buffers.UserBuffer, model order
    loaded.unload()
    # models of one session sharing its feature-map memory (GE's extend-size static memory policy):
    session = Session(static_memory_policy="2")
    a, b = load(device, m1, LoadOptions(session=session)), load(device, m2, LoadOptions(session=session))

See docs/runtime-v1.md for the rules and where they differ from GE.
"""
from zcspec.impl.runtime.v1.config import LoadOptions
from zcspec.impl.runtime.v1.errors import (
    ACL_ERROR_GE_INTERNAL_ERROR, ACL_ERROR_GE_MEMORY_ALLOCATION, ACL_ERROR_GE_PARAM_INVALID, ACL_ERROR_INVALID_PARAM,
    InternalError, InvalidParam, MemoryAllocationError, ModelUnloadedError, ParamInvalid, RuntimeV1Error,
)
from zcspec.impl.runtime.v1.load import LoadedModel, load, query_size
from zcspec.impl.runtime.v1.session import Session

__all__ = [
    "ACL_ERROR_GE_INTERNAL_ERROR", "ACL_ERROR_GE_MEMORY_ALLOCATION", "ACL_ERROR_GE_PARAM_INVALID",
    "ACL_ERROR_INVALID_PARAM", "InternalError", "InvalidParam", "LoadOptions", "LoadedModel", "MemoryAllocationError",
    "ModelUnloadedError", "ParamInvalid", "RuntimeV1Error", "Session", "load", "query_size",
]
