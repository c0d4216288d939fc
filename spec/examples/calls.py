"""Examples for the claims on refused calls, over the small model of build.py (input x, output y, task 0)."""
from __future__ import annotations

from zcspec.spec.examples.build import RAW, X_BUF, Y_BUF, Example, buffers, events, execution, launch

# The caller's allocations: x's exactly, y's 64 bytes shorter than the buffer the caller passes for y.
_ALLOCS = (dict(kind="alloc", address=X_BUF, size=RAW, owner="user", space="device"),
           dict(kind="alloc", address=Y_BUF, size=RAW, owner="user", space="device"))
_BEGIN = dict(kind="call_begin", call="execute")
_OVERHANG = buffers(y_size=RAW + 64)

EXAMPLES = (
    Example("CALL-INVALID-REFUSED",
            execution(bufs=_OVERHANG, slots=(), ok=False, culprit="y",
                      evs=events(*_ALLOCS, _BEGIN, dict(kind="error", io="y", code="145000"),
                                 dict(kind="call_end", call="execute", ok=False))),
            execution(bufs=_OVERHANG, evs=events(*_ALLOCS, _BEGIN, launch(), dict(kind="call_end", call="execute",
                                                                                   ok=True))),
            culprit="execute call", why="y's buffer reaches 64 bytes past the caller's allocation holding it, yet "
                                        "the call ran"),
)
