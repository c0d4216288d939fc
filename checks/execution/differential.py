"""The differential run: the same inputs through runtime v1 and runtime v2, each output judged against the other.

``observe_differential(graph, model, runtime) -> [v1 observation, v2 observation]`` (an
``Observations`` list whose ``notes`` say what was not judged) where ``runtime`` is
``{"runtime": "differential", "zero_copy": bool, "inputs": "normal" | "ones", "seed": n}``,
plus ``"batch": label`` for a dynamic-batch model (the branch both runtimes and the oracle take).
Each output carries the other runtime's digest and its distance to the oracle that ``judge.choose``
picks from what the run has (checks/execution/judge.py), so EXEC-V1-EQ-V2 and EXEC-ORACLE can
judge. A refused or failed call is observed through its record, not raised, and noted: the
buffers are exact, so a refusal is a finding; an output with no oracle is noted with the reason.
"""
from __future__ import annotations

import numpy as np

from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import judge
from zcspec.checks.execution.judge import Note, Observations
from zcspec.checks.execution.passed import passed_buffers, with_buffers
from zcspec.impl.device import Device, DeviceFault
from zcspec.impl.platform import dtypes, storage
from zcspec.impl.runtime.io_names import io_names
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1.config import LoadOptions
from zcspec.impl.runtime.v1.errors import RuntimeV1Error
from zcspec.impl.runtime.v1.load import load
from zcspec.impl.runtime.v1.observe import observe_execution as observe_v1
from zcspec.impl.runtime.v2.errors import RuntimeV2Error
from zcspec.impl.runtime.v2.executor import StreamExecutor
from zcspec.impl.runtime.v2.observe import observe_execution as observe_v2
from zcspec.impl.runtime.v2.options import LoweringOptions
from zcspec.impl.runtime.v2.tensors import Tensor


# ``onnx``/``values``: the model file the graph was imported from and the inputs frozen at import; when
# given, onnxruntime on that file is the oracle (checks/onnxruntime_oracle.py). ``node_test``: the ONNX
# backend node test the graph was imported from: its inputs are fed and its expected outputs judge (judge.py).
KEYS = frozenset({"runtime", "zero_copy", "inputs", "seed", "batch", "onnx", "values", "node_test"})


def check_keys(runtime: dict) -> None:
    """ScenarioError naming any key of ``runtime`` a differential run does not read."""
    unknown = sorted(set(runtime) - KEYS)
    if unknown:
        raise ScenarioError(f"differential scenario: unknown keys {unknown}; known: {sorted(KEYS)}",
                            key=", ".join(unknown))


def _inputs(model, runtime: dict) -> dict:
    if "node_test" in runtime:
        return judge.node_test_inputs(runtime["node_test"], model)
    rng = np.random.default_rng(runtime.get("seed", 0))
    out = {}
    for io in model.tasks.inputs:
        dt = dtypes.numpy_dtype(io.dtype)
        out[io.tensor] = (np.ones(io.shape, dt) if runtime.get("inputs") == "ones"
                          else rng.standard_normal(io.shape).astype(dt))
    return out


def _run_v1(model, arrays: dict, zero_copy: bool, batch: str | None):
    dev = Device(model.soc)
    lm = load(dev, model, LoadOptions(zero_copy=zero_copy))
    ins, outs = stage_inputs(dev, model, arrays), alloc_outputs(dev, model)
    got, error = {}, None
    try:
        lm.execute(ins, outs, batch=batch)
        got = read_outputs(dev, model, outs)
    except RuntimeV1Error as e:   # a refused call is observed through its record
        error = e
    record = lm.last_call
    lm.unload()
    free_buffers(dev, ins + outs)
    names = [z.name for z in lm.io if z.role == "output"]
    passed = passed_buffers(model, ins, outs)
    return got, names, error, lambda results: with_buffers(observe_v1(lm, record, outputs=results), passed)


def _run_v2(model, arrays: dict, zero_copy: bool, batch: str | None):
    dev = Device(model.soc)
    # the user's buffers hold sub-byte tensors packed, as the user_buffers helpers of v1's run do
    ins = [Tensor(dev.upload(storage.to_storage(arrays[io.tensor], io.dtype), tag=f"user input {io.tensor}"),
                  io.nbytes, name=io.tensor) for io in model.tasks.inputs]
    outs = [Tensor(dev.malloc(max(io.nbytes, 1), tag=f"user output {io.tensor}"), io.nbytes, name=io.tensor)
            for io in model.tasks.outputs]
    exe = StreamExecutor(model, dev, LoweringOptions(zero_copy=zero_copy))
    passed = passed_buffers(model, ins, outs, nulls=True)
    got, error = {}, None
    try:
        result = exe.execute(ins, outs, batch=batch)
        for io, t, given in zip(model.tasks.outputs, result, outs):
            read = dev.peek if t.placement == "device" else dev.host_read
            got[io.tensor] = storage.from_storage(read(t.addr, (io.nbytes,), np.uint8), io.shape, io.dtype)
            if t.addr != given.addr:   # a fallback allocation handed to the caller: give it back
                t.release()
    except (RuntimeV2Error, DeviceFault) as e:   # a failed call is observed through its record
        error = e
    exe.unload()
    record = exe.records[-1]
    names = [io_names(model)[("output", io.index)] for io in model.tasks.outputs]
    return got, names, error, lambda results: with_buffers(observe_v2(exe, record, outputs=results), passed)


def observe_differential(graph, model, runtime: dict) -> Observations:
    """Run ``model`` (compiled from ``graph``) through v1 then v2 on the same inputs; one observation
    each, with a note for every output the oracle did not judge and for a call that failed (the
    buffers are the model's exact sizes on the device: a refusal is wrong)."""
    arrays = _inputs(model, runtime)
    zc, batch = bool(runtime.get("zero_copy", True)), runtime.get("batch")
    run = f"differential zero_copy={zc}" + (f" batch={batch}" if batch else "")
    notes: list = []
    got1, names1, error1, obs1 = _run_v1(model, arrays, zc, batch)
    got2, names2, error2, obs2 = _run_v2(model, arrays, zc, batch)
    for who, error in (("v1", error1), ("v2", error2)):
        if error is not None:
            notes.append(Note(f"{run} {who}", f"the call failed on valid buffers: {type(error).__name__}: {error}",
                              failed=True))
    want = judge.reference(judge.choose(graph, runtime), arrays, run, notes) if got1 or got2 else None
    keys = list(graph.outputs)
    return Observations([obs1(judge.results(model.tasks.outputs, names1, keys, got1, want, f"{run} v1", notes, got2)),
                         obs2(judge.results(model.tasks.outputs, names2, keys, got2, want, f"{run} v2", [], got1))],
                        notes)

