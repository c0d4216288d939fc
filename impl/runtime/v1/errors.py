"""Errors of runtime v1: GE/ACL error codes, message ids and the buffer or task they name.

Codes are GE's public values (``inc/external/ge/ge_error_codes.h``):

- :class:`ParamInvalid`: ``ACL_ERROR_GE_PARAM_INVALID`` (145000), message id E13025
  (user I/O count or size, host I/O while the I/O region is unbacked, weight buffer
  too small) or E19999 (work buffer too small).
- :class:`InvalidParam`: ``ACL_ERROR_INVALID_PARAM`` (100000): a null pointer or a
  bad option value at the ACL layer.
- :class:`MemoryAllocationError`: ``ACL_ERROR_GE_MEMORY_ALLOCATION`` (245000).
- :class:`InternalError`: ``ACL_ERROR_GE_INTERNAL_ERROR`` (545000): the model file
  and the runtime disagree, or the device failed during a run.
- :class:`ModelUnloadedError`: execute after unload (a ``ParamInvalid``: the model id
  is no longer valid).

``ParamInvalid`` and ``InvalidParam`` (and so ``ModelUnloadedError``) are the caller's
fault: they are also ``BadInput``, which the command line maps to exit code 2.
``RuntimeV1Error`` is runtime v1's branch of the runtime layer's root
(``zcspec.impl.runtime.errors.RuntimeLayerError``).
"""
from __future__ import annotations

from zcspec.impl.platform.errors import BadInput
from zcspec.impl.runtime.errors import RuntimeLayerError

ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_GE_PARAM_INVALID = 145000
ACL_ERROR_GE_MEMORY_ALLOCATION = 245000
ACL_ERROR_GE_INTERNAL_ERROR = 545000


class RuntimeV1Error(RuntimeLayerError):
    """Base: ``code`` (ACL/GE value), ``message_id`` (E13025, ...), ``buffer`` (the I/O or
    memory named, or ""), ``task`` (or "") and the rule broken in words (``why``)."""

    code = ACL_ERROR_GE_INTERNAL_ERROR

    def __init__(self, why: str, *, buffer: str = "", task: str = "", message_id: str = ""):
        self.buffer, self.task, self.message_id, self.why = buffer, task, message_id, why
        who = f"buffer {buffer!r}: " if buffer else (f"task {task!r}: " if task else "")
        mid = f"{message_id} " if message_id else ""
        super().__init__(f"{who}{why} [{mid}code {self.code}]")


class ParamInvalid(RuntimeV1Error, BadInput):
    code = ACL_ERROR_GE_PARAM_INVALID

    def __init__(self, why: str, *, buffer: str = "", task: str = "", message_id: str = "E13025"):
        super().__init__(why, buffer=buffer, task=task, message_id=message_id)


class InvalidParam(RuntimeV1Error, BadInput):
    code = ACL_ERROR_INVALID_PARAM


class MemoryAllocationError(RuntimeV1Error):
    code = ACL_ERROR_GE_MEMORY_ALLOCATION


class InternalError(RuntimeV1Error):
    code = ACL_ERROR_GE_INTERNAL_ERROR


class ModelUnloadedError(ParamInvalid):
    def __init__(self, model: str):
        super().__init__(f"model {model!r} was unloaded; load it again before executing", message_id="")
