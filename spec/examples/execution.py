"""Examples for the execution invariants."""
from __future__ import annotations

from zcspec.spec.examples.build import RAW, Y_BUF, Example, events, execution, launch, load, output

_SCRATCH = 0xB0000
_ALLOC = dict(kind="alloc", address=_SCRATCH, size=1024, owner="runtime", purpose="staging")

EXAMPLES = (
    Example("EXEC-ORACLE",
            execution(outputs=(output(diff=0.0),)),
            execution(outputs=(output(diff=0.5),)),
            culprit="'y'", why="y differs from onnxruntime by 0.5"),
    Example("EXEC-V1-EQ-V2",
            execution(outputs=(output(digest="sha1:5e1f", peer="sha1:5e1f"),)),
            execution(outputs=(output(digest="sha1:5e1f", peer="sha1:77a0"),)),
            culprit="'y'", why="v1 and v2 disagree on y"),
    Example("EXEC-NO-FAULT",
            execution(),
            execution(evs=events(launch(), dict(kind="fault", task=0, address=Y_BUF + RAW,
                                                message="write past allocation"))),
            culprit="task 0", why="task 0 wrote past the end of an allocation"),
    Example("EXEC-NO-LEAK",
            execution(evs=events(_ALLOC, launch(), dict(kind="free", address=_SCRATCH), dict(kind="unload"))),
            execution(evs=events(_ALLOC, launch(), dict(kind="unload"))),
            culprit="0xb0000", why="the 1024-byte staging buffer is still allocated after unload"),
    Example("EXEC-FAILED-CALL-NO-CHANGE",
            execution(load("v2"), evs=events(dict(kind="call_begin", call="execute"), dict(kind="error", io="y"),
                                              dict(kind="call_end", call="execute", ok=False)), ok=False),
            execution(load("v2"), evs=events(dict(kind="call_begin", call="execute"), launch(),
                                              dict(kind="error", io="y"), dict(kind="call_end", call="execute", ok=False)),
                      ok=False),
            culprit="'y'", why="the execute call failed after its kernel had already written y's buffer"),
)
