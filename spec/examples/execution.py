"""Examples for the execution invariants."""
from __future__ import annotations

import attrs

from zcspec.spec.examples.build import FM, RAW, X_BUF, Y_BUF, ZC, Example, events, execution, launch, load, output

_SCRATCH = 0xB0000
_ALLOC = dict(kind="alloc", address=_SCRATCH, size=1024, owner="runtime", purpose="staging")
_T = ((_SCRATCH, RAW, "t"),)
_PRODUCE_T = launch(writes=_T)                      # task 0: x -> t (in runtime memory)
_READ_T = launch(task=1, reads=_T)                  # task 1: t -> y
_RECORD, _WAIT = dict(kind="record", event_id=0, stream=0), dict(kind="wait", event_id=0, stream=1)
_UNLOAD = (dict(kind="free", address=FM), dict(kind="free", address=ZC), dict(kind="unload"))   # the load's regions
_INTO_T = dict(kind="copy", direction="d2d", src=X_BUF, dst=_SCRATCH, size=RAW)

def _renumbered(obs, k: int, seq: int):
    """``obs`` with its call's event ``k`` numbered ``seq``."""
    evs = list(obs.events)
    evs[k] = attrs.evolve(evs[k], seq=seq)
    return attrs.evolve(obs, events=tuple(evs))


def _three_streams():
    """The small model loaded with tasks 0, 1 and 2 on streams 0, 1 and 2 of the model file."""
    ld = load()
    t = ld.tasks[0]
    return attrs.evolve(ld, tasks=tuple(attrs.evolve(t, id=i, stream=i) for i in range(3)))


def _on_devices(*device_streams: int):
    """An execution of ``_three_streams`` whose task i runs on ``device_streams[i]``, each after an event
    recorded behind the task before it."""
    evs = []
    for i, d in enumerate(device_streams):
        if i:
            evs += [dict(kind="record", event_id=i, stream=device_streams[i - 1]), dict(kind="wait", event_id=i, stream=d)]
        evs.append(launch(task=i, stream=d))
    return execution(_three_streams(), evs=events(*evs))


EXAMPLES = (
    Example("TRACE-FORM", execution(evs=events(launch(), launch(task=1))),
            _renumbered(execution(evs=events(launch(), launch(task=1))), 1, 0),
            culprit="events[1]", why="the call's second launch carries the first one's number, 0"),
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
            execution(evs=events(_ALLOC, launch(), dict(kind="free", address=_SCRATCH), *_UNLOAD)),
            execution(evs=events(_ALLOC, launch(), *_UNLOAD)),
            culprit="0xb0000", why="the 1024-byte staging buffer is still allocated after unload"),
    Example("EXEC-FAILED-CALL-NO-CHANGE",
            execution(load("v2"), evs=events(dict(kind="call_begin", call="execute"), dict(kind="error", io="y"),
                                              dict(kind="call_end", call="execute", ok=False)), ok=False),
            execution(load("v2"), evs=events(dict(kind="call_begin", call="execute"), launch(),
                                              dict(kind="error", io="y"), dict(kind="call_end", call="execute", ok=False)),
                      ok=False),
            culprit="'y'", why="the execute call failed after its kernel had already written y's buffer"),
    Example("EXEC-NO-OVERRUN",
            execution(),
            execution(evs=events(launch(writes=((Y_BUF, RAW + 64, "y"),)))),
            culprit="launch #0", why="the kernel wrote 64 bytes past y's buffer, into memory nothing allocated"),
    Example("EXEC-READ-WRITTEN",
            execution(evs=events(_ALLOC, _PRODUCE_T, _READ_T)),
            execution(evs=events(_ALLOC, _READ_T)),
            culprit="launch #1", why="task 1 read t from fresh memory that no kernel had written"),
    Example("EXEC-NO-RACE",
            execution(evs=events(_ALLOC, _PRODUCE_T, _RECORD, _WAIT, dict(_READ_T, stream=1))),
            execution(evs=events(_ALLOC, _PRODUCE_T, dict(_READ_T, stream=1))),
            culprit="launch #2", why="task 1 on stream 1 read t, written on stream 0, with no event between them"),
    Example("EXEC-TENSOR-INTACT",
            execution(evs=events(_ALLOC, _PRODUCE_T, _READ_T)),
            execution(evs=events(_ALLOC, _PRODUCE_T, _INTO_T, _READ_T)),
            culprit="tensor 't'", why="a copy overwrote t between its producer and its reader"),
    Example("EXEC-INPLACE-SAME-BYTES",
            execution(evs=events(_ALLOC, _PRODUCE_T, launch(task=1, reads=_T, writes=((_SCRATCH, RAW, "u"),)),
                                 launch(task=2, reads=((_SCRATCH, RAW, "u"),)))),
            execution(evs=events(_ALLOC, _PRODUCE_T, launch(task=1, reads=_T, writes=((_SCRATCH + 32, RAW, "u"),)),
                                 launch(task=2, reads=((_SCRATCH + 32, RAW, "u"),)))),
            culprit="task 1", why="task 1 writes u in place over t but shifted by 32 bytes from the t it reads"),
    Example("EXEC-COUNTERS-TRUE",
            execution(counters={"d2d_calls": 0, "d2d_bytes": 0, "kernel_launches": 1}),
            execution(counters={"d2d_calls": 1, "d2d_bytes": RAW, "kernel_launches": 1}),
            culprit="d2d copies", why="the counters report a device-to-device copy the trace does not show"),
    Example("EXEC-STREAMS-APART", _on_devices(0, 1, 2), _on_devices(0, 1, 1),
            culprit="task 2", why="the load created one device stream for both of the model's streams 1 and 2"),
)
