"""torchvision architectures with random weights: each through runtime v1 and v2 against onnxruntime, timed.

The models (ResNet-18/50, MobileNetV3-Small, EfficientNet-B0, ViT-B/16; 1x3x224x224 input ``x``) are
ONNX files in ``--dir``. Those missing are exported first by ``benchmarks/torchvision_export.py``
(seeded random weights, see there) run by ``--torch-python``: an interpreter with torch and
torchvision (``pip install 'zcspec[torchvision]'``, or a separate environment so the main one stays
lean). Each model is imported, compiled, and run on the same seeded input by onnxruntime (after one
warm-up run) and by runtime v1 and runtime v2 (zero copy on, each on a fresh device); every timing is
the best of ``--repeat`` runs. Printed per model: the seconds of one run of each runtime and their
ratio to onnxruntime's, the bytes the execute call copied (zero copy means none), the largest absolute
difference to onnxruntime and the largest relative one (to the output's largest magnitude, as
``zcspec verify`` judges: ``ok`` when at most 1e-4), and whether v1's and v2's outputs are bitwise equal.

    python benchmarks/torchvision_models.py [--dir DIR] [--torch-python PYTHON] [--repeat N] [MODEL ...]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort

from production_models import run_zcspec, timed
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.frontend.onnx_import import load_onnx

MODELS = ("resnet18", "resnet50", "mobilenet_v3_small", "efficientnet_b0", "vit_b_16")
EXPORTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torchvision_export.py")
RTOL = 1e-4


def ensure_exported(folder: str, names, python: str) -> None:
    """Export the models of ``names`` missing from ``folder`` with ``python`` (which must have torch)."""
    missing = [n for n in names if not os.path.exists(os.path.join(folder, n + ".onnx"))]
    if missing:
        print(f"exporting {', '.join(missing)} with {python}", flush=True)
        done = subprocess.run([python, EXPORTER, folder, *missing])
        if done.returncode:
            sys.exit(f"export failed: give --torch-python an interpreter with torch and torchvision, or put "
                     f"{', '.join(n + '.onnx' for n in missing)} in {folder}")


def _best(fn, repeat: int):
    runs = [timed(fn) for _ in range(repeat)]
    return runs[-1][0], min(s for _, s in runs)


def check(path: str, repeat: int) -> dict:
    """One model's figures (see the module docstring)."""
    graph = load_onnx(path)
    model = build_model(graph)
    arrays = {io.tensor: np.random.default_rng(0).standard_normal(io.shape).astype(np.float32)
              for io in model.tasks.inputs}
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    session.run(list(graph.outputs), arrays)
    want, t_ort = _best(lambda: session.run(list(graph.outputs), arrays), repeat)
    want = {k: np.asarray(w, np.float64) for k, w in zip(graph.outputs, want)}
    row = {"nodes": len(graph.nodes), "ort": t_ort, "abs": 0.0, "rel": 0.0}
    got = {}
    for runtime in ("v1", "v2"):
        runs = [run_zcspec(model, arrays, runtime) for _ in range(repeat)]
        got[runtime], row[runtime] = runs[-1][0], min(s for _, s, _ in runs)
        row[runtime + " copied"] = max(c for _, _, c in runs)
        for k, w in want.items():
            diff = float(np.max(np.abs(got[runtime][k].astype(np.float64) - w)))
            row["abs"] = max(row["abs"], diff)
            row["rel"] = max(row["rel"], diff / max(float(np.max(np.abs(w))), np.finfo(np.float32).tiny))
    row["v1 = v2"] = all(np.array_equal(got["v1"][k], got["v2"][k]) for k in want)
    return row


HEADER = ("| model | nodes | v1 s (x onnxruntime) | v2 s (x onnxruntime) | onnxruntime s | bytes copied v1 / v2 "
          "| max abs diff | max rel diff | v1 = v2 |\n|---|---|---|---|---|---|---|---|---|")


def line(name: str, r: dict) -> str:
    ok = "ok" if r["rel"] <= RTOL else "FAR"
    return (f"| {name} | {r['nodes']} | {r['v1']:.2f} ({r['v1'] / r['ort']:.0f}x) | {r['v2']:.2f} "
            f"({r['v2'] / r['ort']:.0f}x) | {r['ort']:.4f} | {r['v1 copied']} / {r['v2 copied']} | {r['abs']:.1e} "
            f"| {r['rel']:.1e} {ok} | {'yes' if r['v1 = v2'] else 'NO'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(MODELS), help=f"default: {' '.join(MODELS)}")
    parser.add_argument("--dir", default=os.path.expanduser("~/.cache/zcspec-models/torchvision"),
                        help="folder of the exported .onnx files (missing ones are exported into it)")
    parser.add_argument("--torch-python", default=sys.executable,
                        help="the interpreter with torch and torchvision that exports missing models (default: this one)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each runtime; the best is reported (default 3)")
    args = parser.parse_args()
    ensure_exported(args.dir, args.models, args.torch_python)
    print(HEADER, flush=True)
    for name in args.models:
        print(line(name, check(os.path.join(args.dir, name + ".onnx"), args.repeat)), flush=True)


if __name__ == "__main__":
    main()
