"""Examples for the runtime v1 and v2 invariants, over one small model (input x, output y, task 0)."""
from __future__ import annotations

from zcspec.spec.examples.build import (
    FM, RAW, X_BUF, X_MODEL, Y_BUF, Y_FM_OFFSET, Y_MODEL, Example, buffers, events, execution, launch, load,
)
from zcspec.spec.observables.execution import OutputTensor

_Y_FM = FM + Y_FM_OFFSET
_Y_COPY_ONLY = dict(slots=((0, 0, X_BUF), (0, 1, _Y_FM)), io_addresses={"x": X_BUF, "y": _Y_FM})
_COPY_Y = dict(kind="copy", direction="d2d", src=_Y_FM, dst=Y_BUF, size=RAW, io="y")
_Y_HCCL = dict(slots=((0, 0, X_BUF), (0, 1, Y_MODEL)), io_addresses={"x": X_BUF, "y": Y_MODEL})
_COPY_Y_HCCL = dict(kind="copy", direction="d2d", src=Y_MODEL, dst=Y_BUF, size=RAW, io="y")
_FALLBACK = 0xA0000
_USER_ALLOCS = (dict(kind="alloc", address=X_BUF, size=RAW, owner="user", space="device"),
                dict(kind="alloc", address=Y_BUF, size=RAW, owner="user", space="device"))
_BEGIN = dict(kind="call_begin", call="execute")
_AZC = dict(always_zero_copy=True)

EXAMPLES = (
    Example("V1-SLOT-REFRESH",
            execution(),
            execution(slots=((0, 0, X_BUF), (0, 1, Y_MODEL))),
            culprit="task 0 slot 1", why="the output slot still holds the model's own address for y"),
    Example("V1-NO-MODEL-IO-SLOT",
            execution(slots=((0, 0, X_BUF), (0, 1, Y_BUF), (1, 0, 0x10100))),
            execution(slots=((0, 0, X_BUF), (0, 1, Y_BUF), (1, 0, X_MODEL))),
            culprit="task 1 slot 0", why="task 1 reads x from the model's I/O region instead of the user's buffer"),
    Example("V1-COPY-ONLY-ONCE",
            execution(load(y_region="feature_map"), evs=events(launch(writes=((_Y_FM, RAW),)), _COPY_Y), **_Y_COPY_ONLY),
            execution(load(y_region="feature_map"), evs=events(launch(writes=((_Y_FM, RAW),)), _COPY_Y, _COPY_Y),
                      **_Y_COPY_ONLY),
            culprit="'y'", why="output y lives in the feature map, so it must be copied once; it is copied twice"),
    Example("V1-ZERO-COPY-WHEN-ELIGIBLE",
            execution(),
            execution(evs=events(launch(writes=((Y_MODEL, RAW),)), _COPY_Y_HCCL), **_Y_HCCL),
            culprit="'y'", why="y could be bound to its buffer (a refreshable kernel writes it), yet it was "
                               "computed in the model's region and copied"),
    Example("V1-REUSE-ZC-MEMORY",
            load(reuse_zero_copy_memory=True, zc_backed=False),
            load(reuse_zero_copy_memory=True, zc_backed=True),
            culprit="region 'zero_copy'", why="the I/O region was allocated at load although reuseZeroCopyMemory is on"),
    Example("V1-HCCL-COPY",
            execution(load(hccl_flags=(True, False), legacy_copy_only_addrs=True),
                      evs=events(launch(writes=((Y_MODEL, RAW),)), _COPY_Y_HCCL), **_Y_HCCL),
            execution(load(hccl_flags=(True, False), legacy_copy_only_addrs=True)),
            culprit="'y'", why="on GE's legacy path, the HCCL task writes y through a buffer without zero-copy "
                               "support, yet y was bound to the user's buffer and never copied"),
    Example("V1-BUFFER-SIZE",
            execution(bufs=buffers(y_size=100), evs=events(dict(kind="error", io="y", code="E13025")), ok=False,
                      culprit="y", slots=()),
            execution(bufs=buffers(y_size=100)),
            culprit="'y'", why="y's 100-byte buffer (100 + 64 < 432) was accepted and written"),
    Example("V1-VALID-CALL-SUCCEEDS",
            execution(evs=events(*_USER_ALLOCS, _BEGIN, launch(), dict(kind="call_end", call="execute", ok=True))),
            execution(evs=events(*_USER_ALLOCS, _BEGIN, dict(kind="error", io="x", code="E13025"),
                                 dict(kind="call_end", call="execute", ok=False)), ok=False, culprit="x", slots=()),
            culprit="execute call", why="x and y are raw-sized buffers in the caller's live allocations, yet the "
                                        "call was refused"),
    Example("V2-AZC-NO-ALLOC",
            execution(load("v2", **_AZC)),
            execution(load("v2", **_AZC), evs=events(dict(kind="alloc", address=_FALLBACK, size=2 << 20, owner="pool"),
                                                     launch(writes=((_FALLBACK, RAW, "y"),)))),
            culprit="'y'", why="the kernel computed output y in the runtime's pool although always_zero_copy is on"),
    Example("V2-AZC-REJECT",
            execution(load("v2", **_AZC), bufs=buffers(y_size=300), evs=events(dict(kind="error", io="y",
                      message="output 'y' buffer is 300 bytes, needs 400")), ok=False, culprit="y"),
            execution(load("v2", **_AZC), bufs=buffers(y_size=300)),
            culprit="'y'", why="the 300-byte buffer for the 400-byte output y was accepted and written"),
    Example("V2-DEFAULT-FALLBACK",
            execution(load("v2"), bufs=buffers(y_address=0, y_size=0),
                      evs=events(dict(kind="alloc", address=_FALLBACK, size=512, owner="runtime"),
                                 launch(writes=((_FALLBACK, RAW, "y"),)))),
            execution(load("v2"), bufs=buffers(y_address=0, y_size=0), evs=events(dict(kind="error", io="y")),
                      ok=False, culprit="y"),
            culprit="'y'", why="no buffer was given for y and the default mode failed instead of allocating"),
    Example("V2-OUT-IS-USER",
            execution(load("v2")),
            execution(load("v2"),
                      evs=events(launch(writes=((_FALLBACK, RAW, "y"),)),
                                 dict(kind="copy", direction="d2d", src=_FALLBACK, dst=Y_BUF, size=RAW, io="y"))),
            culprit="'y'", why="y's buffer is large enough, yet y was produced elsewhere and copied"),
    Example("V2-TRUST-SHAPE",
            execution(load("v2", always_zero_copy=True, trust_shape_on_out_tensor=True),
                      out_tensors=(OutputTensor("y", given=(100,), after=(100,), computed=(10, 10)),)),
            execution(load("v2", always_zero_copy=True, trust_shape_on_out_tensor=True),
                      out_tensors=(OutputTensor("y", given=(100,), after=(10, 10), computed=(10, 10)),)),
            culprit="'y'", why="with trusted shapes, y's Ensure repeating SplitTensorForOutputData was kept"),
    Example("V2-NO-OVERRUN",
            execution(load("v2")),
            execution(load("v2", ge_compat=True), bufs=buffers(y_size=300), ok=False, culprit="y"),
            culprit="'y'", why="under ge_compat the kernel wrote 400 bytes into y's 300-byte buffer before the size error"),
)

