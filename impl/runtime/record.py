"""What one execute call did, recorded the same way by runtime v1 and runtime v2.

Each runtime keeps an :class:`ExecutionRecord` per call (v1: the value ``execute`` returns,
also ``LoadedModel.last_call``; v2: ``StreamExecutor.records``) and its ``observe.py`` maps
it, with the loaded model, onto the spec's ``ExecutionObservation``:
``observe_execution(loaded, record=None, outputs=())`` (None: the last call). I/O are identified by ``(role, index)``
in model order; their display names are ``impl.runtime.io_names``'s.
"""
from __future__ import annotations

from typing import Mapping

import attrs

from zcspec.impl.device import Counters


@attrs.frozen
class GivenBuffer:
    """The buffer the caller passed for input or output ``index``: ``address`` 0 is none (null)."""

    role: str
    index: int
    address: int
    size: int
    placement: str = "device"

    @property
    def key(self) -> tuple[str, int]:
        return (self.role, self.index)


@attrs.frozen
class ExecutionRecord:
    """One execute call, for observation. Fields both runtimes fill:

    - ``trace``: the ``[begin, end)`` positions of the device trace the call spans;
    - ``buffers``: the caller's buffers as passed, in model order (also when the call was refused);
    - ``counters``: the device counters of the call alone;
    - ``io_addresses``: ``(role, index)`` -> the device address the tasks used for that I/O;
    - ``error``: what the call raised, None when it succeeded.

    Fields one runtime fills (the other leaves the default):

    - ``refresh`` (v1): the call's argument refresh (``refresh.Refresh``: policy, changed
      allocations, slot updates); None when the call stopped before it;
    - ``log`` (v2): the ``[begin, end)`` positions of the call in the executor's runtime log
      (block allocations, frees, errors);
    - ``handed`` (v2): block address -> ``(role, index)`` of the caller's output tensor the
      block was handed over to.
    """

    trace: tuple[int, int]
    buffers: tuple[GivenBuffer, ...]
    counters: Counters
    io_addresses: Mapping[tuple[str, int], int]
    error: BaseException | None = None
    refresh: object = None
    log: tuple[int, int] = (0, 0)
    handed: Mapping[int, tuple[str, int]] = attrs.field(factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None
