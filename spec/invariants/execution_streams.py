"""Execution: the model's streams as the device ran them (one claim of the execution concern, listed by
execution.py)."""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.observables.execution import ExecutionObservation


# -- EXEC-STREAMS-APART -----------------------------------------------------------------------

def _stream_launches(obs: ExecutionObservation):
    """(launch, model stream) for every launch of a task the model file lists, in trace order."""
    model = {t.id: t.stream for t in obs.load.tasks}
    return [(e, model[e.task]) for e in obs.events
            if e.kind == "launch" and e.task in model and e.stream is not None]


def _streams_apart(obs: ExecutionObservation):
    if obs.load.options.single_stream:
        yield from _one_stream(obs)
        return
    on_device: dict[int, tuple[int, int]] = {}   # model stream -> (device stream, first task there)
    of_model: dict[int, tuple[int, int]] = {}    # device stream -> (model stream, first task there)
    for e, s in _stream_launches(obs):
        d, t = on_device.setdefault(s, (e.stream, e.task))
        if d != e.stream:
            yield violation(f"task {e.task}", f"runs on device stream {e.stream}, but task {t} of the same model "
                            f"stream {s} ran on device stream {d}", model_stream=s, device_streams=[d, e.stream])
        m, t = of_model.setdefault(e.stream, (s, e.task))
        if m != s:
            yield violation(f"task {e.task}", f"of model stream {s} runs on device stream {e.stream}, which also "
                            f"runs task {t} of model stream {m}: two streams of the model share one device stream",
                            device_stream=e.stream, model_streams=[m, s])


def _one_stream(obs: ExecutionObservation):
    first = None
    for e, s in _stream_launches(obs):
        first = first or e
        if e.stream != first.stream:
            yield violation(f"task {e.task}", f"runs on device stream {e.stream}, but the load asked for a single "
                            f"stream and task {first.task} ran on device stream {first.stream}",
                            device_streams=[first.stream, e.stream])


STREAMS_APART = Invariant(
    id="EXEC-STREAMS-APART",
    title="Each stream of the model runs on a device stream of its own",
    statement="In one execution, every launch of a task the model file places on stream s runs on the same device "
              "stream, and tasks of two different streams of the model never run on one device stream; when the "
              "load asks for a single stream (runtime v2's enable_single_stream), every task runs on one device "
              "stream.",
    rationale="GE creates one runtime stream per logical stream of the model at load and launches each task on "
              "the stream of its stream id. Two logical streams folded onto one device stream still give the "
              "right numbers when their order happens to agree, but the model's parallelism is gone, and an "
              "event wait placed between them can wait for a record queued behind it: the deadlock or "
              "serialisation only shows on other schedules. The single-stream option is the caller's request "
              "for the opposite, and is held to it.",
    ge_source="runtime/v1/graph/load/model_manager/davinci_model.cc (DavinciModel::InitRuntimeResource); "
              "runtime/v1/graph/load/model_manager/reusable_stream_allocator.cc "
              "(ReusableStreamAllocator::GetOrCreateRtStream); "
              "inc/graph_metadef/external/exe_graph/lowering/lowering_opt.h (LoweringOption)",
    applies_to="execution", concern="execution", predicate=_streams_apart,
    precondition=lambda obs: bool(_stream_launches(obs)),
)
