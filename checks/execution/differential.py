"""The differential run: the same inputs through runtime v1 and runtime v2, each output judged against the other.

``observe_differential(graph, model, runtime) -> [v1 observation, v2 observation]`` where
``runtime`` is ``{"runtime": "differential", "zero_copy": bool, "inputs": "normal" | "ones", "seed": n}``,
plus ``"batch": label`` for a dynamic-batch model (the branch both runtimes and the oracle take).
Each output carries the other runtime's digest and its distance to the oracle (onnx.reference
on the graph, or a light model's shipped reference when the inputs are ones), so EXEC-V1-EQ-V2
and EXEC-ORACLE can judge. A refused or failed call is observed through its record, not raised.
"""
from __future__ import annotations

import contextlib
import hashlib

import numpy as np

from zcspec.checks.errors import OracleUnavailable, ScenarioError
from zcspec.checks.onnxruntime_oracle import onnxruntime_outputs
from zcspec.checks.oracle import light_reference, oracle_outputs
from zcspec.checks.zoo import LIGHT
from zcspec.impl.device import Device, DeviceFault
from zcspec.impl.platform import dtypes
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
from zcspec.spec.observables import OutputResult


# ``onnx``/``values``: the model file the graph was imported from and the inputs frozen at import; when
# given, onnxruntime on that file is the oracle (checks/onnxruntime_oracle.py).
KEYS = frozenset({"runtime", "zero_copy", "inputs", "seed", "batch", "onnx", "values"})


def check_keys(runtime: dict) -> None:
    """ScenarioError naming any key of ``runtime`` a differential run does not read."""
    unknown = sorted(set(runtime) - KEYS)
    if unknown:
        raise ScenarioError(f"differential scenario: unknown keys {unknown}; known: {sorted(KEYS)}",
                            key=", ".join(unknown))


def _digest(array) -> str:
    return "sha1:" + hashlib.sha1(np.ascontiguousarray(array).tobytes()).hexdigest()


def _inputs(model, runtime: dict) -> dict:
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
    got = {}
    with contextlib.suppress(RuntimeV1Error):   # a refused call is observed through its record
        lm.execute(ins, outs, batch=batch)
        got = read_outputs(dev, model, outs)
    record = lm.last_call
    lm.unload()
    free_buffers(dev, ins + outs)
    names = [z.name for z in lm.io if z.role == "output"]
    return got, names, lambda results: observe_v1(lm, record, outputs=results)


def _run_v2(model, arrays: dict, zero_copy: bool, batch: str | None):
    dev = Device(model.soc)
    ins = [Tensor(dev.upload(arrays[io.tensor], tag=f"user input {io.tensor}"), io.nbytes, name=io.tensor)
           for io in model.tasks.inputs]
    outs = [Tensor(dev.malloc(max(io.nbytes, 1), tag=f"user output {io.tensor}"), io.nbytes, name=io.tensor)
            for io in model.tasks.outputs]
    exe = StreamExecutor(model, dev, LoweringOptions(zero_copy=zero_copy))
    got = {}
    with contextlib.suppress(RuntimeV2Error, DeviceFault):   # a failed call is observed through its record
        result = exe.execute(ins, outs, batch=batch)
        for io, t, given in zip(model.tasks.outputs, result, outs):
            read = dev.peek if t.placement == "device" else dev.host_read
            got[io.tensor] = read(t.addr, io.shape, dtypes.numpy_dtype(io.dtype))
            if t.addr != given.addr:   # a fallback allocation handed to the caller: give it back
                t.release()
    exe.unload()
    record = exe.records[-1]
    names = [io_names(model)[("output", io.index)] for io in model.tasks.outputs]
    return got, names, lambda results: observe_v2(exe, record, outputs=results)


def _oracle(graph, arrays: dict, runtime: dict) -> dict | None:
    if runtime.get("inputs") == "ones" and graph.name in LIGHT:
        return light_reference(graph.name)
    if runtime.get("onnx"):
        # onnxruntime not installed, or refusing the file: the imported graph's reference below judges.
        with contextlib.suppress(OracleUnavailable):
            return onnxruntime_outputs(runtime["onnx"], arrays, runtime.get("values", {}))
    try:
        return oracle_outputs(graph, arrays, batch=runtime.get("batch"))
    except OracleUnavailable:
        return None


def _results(model, names, got: dict, peer: dict, oracle: dict | None, graph) -> tuple:
    out = []
    for io, name, gname in zip(model.tasks.outputs, names, graph.outputs):
        if io.tensor not in got:
            continue
        mine, other = got[io.tensor], peer.get(io.tensor)
        diff = None
        if oracle is not None and gname in oracle:
            want = np.asarray(oracle[gname], np.float64).reshape(mine.shape)
            scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
            diff = float(np.max(np.abs(mine.astype(np.float64) - want), initial=0.0)) / scale
        out.append(OutputResult(name, _digest(mine), None if other is None else _digest(other), diff))
    return tuple(out)


def observe_differential(graph, model, runtime: dict) -> list:
    """Run ``model`` (compiled from ``graph``) through v1 then v2 on the same inputs; one observation each."""
    arrays = _inputs(model, runtime)
    zc, batch = bool(runtime.get("zero_copy", True)), runtime.get("batch")
    got1, names1, obs1 = _run_v1(model, arrays, zc, batch)
    got2, names2, obs2 = _run_v2(model, arrays, zc, batch)
    oracle = _oracle(graph, arrays, runtime)
    return [obs1(_results(model, names1, got1, got2, oracle, graph)),
            obs2(_results(model, names2, got2, got1, oracle, graph))]
