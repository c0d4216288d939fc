"""The runtime layer's root error, and the errors of the modules shared by both runtimes.

- :class:`RuntimeLayerError`: the root of every runtime error (under ``ZcspecError``,
  docs/errors.md). Runtime v1's ``RuntimeV1Error`` and runtime v2's ``RuntimeV2Error``
  are its two branches, each with GE's codes as fields; a class that is the caller's
  fault is also a ``BadInput`` (exit code 2 on the command line).
- :class:`UserBufferError`: bad arguments to the user-side helpers of
  ``zcspec.impl.runtime.user_buffers`` (a placement, a size, an array of the wrong
  shape or dtype); ``name`` is the model I/O the buffer binds.
"""
from __future__ import annotations

from zcspec.impl.platform.errors import BadInput, ZcspecError


class RuntimeLayerError(ZcspecError):
    """Root of the runtimes' errors (v1, v2, the ACL facade, the user-buffer helpers)."""


class UserBufferError(RuntimeLayerError, BadInput, ValueError):
    """Bad arguments to a user-buffer helper; names the I/O (``name``) and what is wrong."""

    def __init__(self, name: str, why: str):
        self.name = name
        super().__init__(f"buffer {name!r}: {why}" if name else why)
