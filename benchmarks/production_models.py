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
import os

from model_runs import compare, fetch, run_zcspec, timed  # noqa: F401  (torchvision_models.py imports the last two)

PACKAGES = ("rapidocr-onnxruntime==1.4.4", "silero-vad==6.2.3")
# (name, file inside the wheels, --shape, --value)
MODELS = (
    ("PP-OCR cls", "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx", {"x": (1, 3, 48, 192)}, {}),
    ("PP-OCRv4 det", "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx", {"x": (1, 3, 320, 320)}, {}),
    ("PP-OCRv4 rec", "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx", {"x": (1, 3, 48, 320)}, {}),
    ("Silero VAD 16k", "silero_vad/data/silero_vad_16k_op15.onnx",
     {"input": (1, 512), "state": (2, 1, 128)}, {"sr": 16000}),
)


def check(root: str, name: str, rel: str, shapes: dict, values: dict) -> str:
    c = compare(os.path.join(root, rel), shapes, values)
    row = [f"{name:16}{c.nodes:>6}"]
    for r in c.runs.values():
        row.append(f"{r.diff:>10.1e}{'ok' if r.ok else 'FAR':>4}{r.copied:>8}{r.seconds:>8.2f}"
                   f"{r.seconds / c.ort_seconds:>8.0f}x")
    return "".join(row) + f"{c.ort_seconds:>9.4f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/zcspec-models"))
    args = parser.parse_args()
    root = fetch(args.cache, PACKAGES)
    print(f"{'model':16}{'nodes':>6}" + "".join(f"{r + ' |diff|':>10}{'':>4}{'copied':>8}{'s':>8}{'/ort':>9}"
                                                for r in ("v1", "v2")) + f"{'ort s':>9}")
    for spec in MODELS:
        print(check(root, *spec), flush=True)


if __name__ == "__main__":
    main()
