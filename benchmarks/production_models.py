"""Production models users bring: each through runtime v1 and v2 against onnxruntime, with the time of one run.

The models ship inside packages of the registry: PaddleOCR's PP-OCRv4 detector and recogniser and its
mobile direction classifier (``rapidocr-onnxruntime``) and Silero VAD (``silero-vad``). The script
downloads the two wheels with ``pip download`` into ``--cache`` (once), imports each model with the
shapes (and frozen inputs) a user would give, runs it once through onnxruntime, runtime v1 and
runtime v2 on the same seeded inputs, and prints the largest absolute difference to onnxruntime,
whether every output is within rtol 1e-4 / atol 1e-6 of it (``ok``), the bytes the execute call
copied (zero copy means none), and the seconds of one run each with the ratio to onnxruntime.

    python benchmarks/production_models.py [--cache ~/.cache/zcspec-models]
"""
from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import time
import zipfile

import numpy as np
import onnxruntime as ort

from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.frontend.onnx_import import load_onnx
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import alloc_outputs, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import load
from zcspec.impl.runtime.v2.runner import run_counted

PACKAGES = ("rapidocr-onnxruntime==1.4.4", "silero-vad==6.2.3")
# (name, file inside the wheels, --shape, --value)
MODELS = (
    ("PP-OCR cls", "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx", {"x": (1, 3, 48, 192)}, {}),
    ("PP-OCRv4 det", "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx", {"x": (1, 3, 320, 320)}, {}),
    ("PP-OCRv4 rec", "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx", {"x": (1, 3, 48, 320)}, {}),
    ("Silero VAD 16k", "silero_vad/data/silero_vad_16k_op15.onnx",
     {"input": (1, 512), "state": (2, 1, 128)}, {"sr": 16000}),
)


def fetch(cache: str) -> str:
    """The folder holding the extracted wheels, downloading them first if needed."""
    root = os.path.join(cache, "extracted")
    if not os.path.isdir(root):
        os.makedirs(cache, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", cache, *PACKAGES], check=True,
                       stdout=sys.stderr)  # the table alone goes to stdout (docs/frontend.md prints it)
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


def check(root: str, name: str, rel: str, shapes: dict, values: dict) -> str:
    path = os.path.join(root, rel)
    graph = load_onnx(path, shapes=shapes, values=values)
    model = build_model(graph)
    rng = np.random.default_rng(0)
    arrays = {io.tensor: rng.standard_normal(io.shape).astype(np.float32) for io in model.tasks.inputs}
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {**arrays, **{k: np.asarray(v, np.int64) for k, v in values.items()}}
    want, t_ort = timed(lambda: session.run(list(graph.outputs), feeds))
    want = dict(zip(graph.outputs, want))
    row = [f"{name:16}{len(graph.nodes):>6}"]
    for runtime in ("v1", "v2"):
        got, seconds, copied = run_zcspec(model, arrays, runtime)
        diff = max(float(np.max(np.abs(got[k].astype(np.float64) - np.asarray(w, np.float64)))) for k, w in want.items())
        ok = all(np.allclose(got[k], w, rtol=1e-4, atol=1e-6) for k, w in want.items())
        row.append(f"{diff:>10.1e}{'ok' if ok else 'FAR':>4}{copied:>8}{seconds:>8.2f}{seconds / t_ort:>8.0f}x")
    return "".join(row) + f"{t_ort:>9.4f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/zcspec-models"))
    args = parser.parse_args()
    root = fetch(args.cache)
    print(f"{'model':16}{'nodes':>6}" + "".join(f"{r + ' |diff|':>10}{'':>4}{'copied':>8}{'s':>8}{'/ort':>9}"
                                                for r in ("v1", "v2")) + f"{'ort s':>9}")
    for spec in MODELS:
        print(check(root, *spec), flush=True)


if __name__ == "__main__":
    main()
