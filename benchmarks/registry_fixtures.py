"""Writes tests/data/models/registry/: small stand-ins of real registry models, for CI's real-model imports.

The real files of the sweep (registry_models.py) are 0.6 to 54 MB each; CI should not download them
and the repository should not hold them whole. Each fixture here is its real file with the graph kept
whole (every node, attribute, subgraph, shape constant, value_info and opset import, byte for byte)
and the large floating weights log-quantized: every element of a floating tensor of at least
MIN_QUANTIZED elements (initializers and Constant values, subgraphs included) becomes the power of
two nearest it on a log scale, sign kept (zeros stay zero). A power of two has no mantissa bits, so
gzip shrinks the file four to six times; and the weights keep their signs and orders of magnitude,
so activations stay in the real model's range and the outputs depend on the input as the real
model's do (random weights of the tensor's scale saturated the PP-OCR classifier's softmax at 0 and
1, where a wrong kernel cannot show). Small tensors (biases of a few channels, scalars, every integer
tensor) are kept as they are. The licences of the sources (MIT, Apache-2.0) allow redistributing
this modified form with their notices (README.md and the LICENSE files beside the fixtures).

Each fixture is written gzip'd (no timestamp, so a rerun writes identical bytes) with its entry in
fixtures.json: the source package and file, the source's sha256, its licence, the --shape/--value a
user gives for each run (Silero's file twice: its 16 kHz and 8 kHz branches), and the fixture's
sha256 and op counts (its subgraphs' included).

    python benchmarks/registry_fixtures.py [--cache ~/.cache/zcspec-models] [--out tests/data/models/registry]
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil

import attrs
import numpy as np
import onnx
from onnx import numpy_helper

from registry_models import MODELS, file_ops, wheel_root

MIN_QUANTIZED = 64
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "data", "models", "registry")


@attrs.frozen
class Fixture:
    """A fixture: its file name, its source's licence and the licence file in the source's wheel
    (copied beside the fixtures), and the sweep's models it stands in for (one file, several
    --shape/--value runs: Silero's 16 kHz and 8 kHz branches)."""

    file: str
    licence: str
    licence_file: str
    models: tuple


SILERO_LICENCE = "silero_vad-6.2.3.dist-info/licenses/LICENSE"
FIXTURES = (
    Fixture("silero_vad_v6.onnx.gz", "MIT (Silero Team)", SILERO_LICENCE, ("Silero v6 16k", "Silero v6 8k")),
    Fixture("silero_vad_op18_ifless.onnx.gz", "MIT (Silero Team)", SILERO_LICENCE,
            ("Silero v6 op18 16k", "Silero v6 op18 8k")),
    Fixture("ppocr_mobile_v2.0_cls.onnx.gz", "Apache-2.0 (PaddleOCR authors; RapidOCR's MODEL_LICENSES.md)",
            "rapidocr-3.10.0.dist-info/licenses/LICENSE", ("PP-OCR cls v2.0",)),
)
# production_models.py's direction classifier; rapidocr 3.10.0 ships the same file (sha256 e47acedf...)
# with its licence and a MODEL_LICENSES.md naming the model's
EXTRA = {"PP-OCR cls v2.0": ("rapidocr==3.10.0", "rapidocr/models/ch_ppocr_mobile_v2.0_cls_mobile.onnx",
                             {"x": (1, 3, 48, 192)}, {})}


def _tensors(graph: onnx.GraphProto):
    """Every TensorProto of ``graph``: initializers, Constant values, and those of its subgraphs."""
    yield from graph.initializer
    for node in graph.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                yield a.t
            for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                yield from _tensors(g)


def log_quantize(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose floating tensors of at least MIN_QUANTIZED elements are log-quantized."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for t in _tensors(out.graph):
        a = numpy_helper.to_array(t)
        if a.dtype.kind != "f" or a.size < MIN_QUANTIZED:
            continue
        mag = np.abs(a.astype(np.float64))
        exponent = np.round(np.log2(np.where(mag > 0, mag, 1.0)))
        quantized = np.where(mag > 0, np.sign(a) * 2.0 ** exponent, 0.0).astype(a.dtype)
        t.CopyFrom(numpy_helper.from_array(quantized, t.name))
    return out


def source(name: str):
    """(package, file in the wheel, --shape, --value) of the sweep's model ``name``."""
    if name in EXTRA:
        return EXTRA[name]
    e = next(e for e in MODELS if e.name == name)
    return e.package, e.file, e.shapes, e.values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/zcspec-models"))
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    table = []
    for f in FIXTURES:
        package, rel, _, _ = source(f.models[0])
        root = wheel_root(args.cache, package)
        path = os.path.join(root, rel)
        licence_copy = "LICENSE-" + package.split("==")[0] + ".txt"
        shutil.copyfile(os.path.join(root, f.licence_file), os.path.join(args.out, licence_copy))
        real = open(path, "rb").read()
        derived = log_quantize(onnx.load_from_string(real))
        data = gzip.compress(derived.SerializeToString(), compresslevel=9, mtime=0)
        with open(os.path.join(args.out, f.file), "wb") as fh:
            fh.write(data)
        table.append({
            "file": f.file, "package": package, "source_file": rel,
            "source_sha256": hashlib.sha256(real).hexdigest(), "licence": f.licence, "licence_file": licence_copy,
            "runs": [{"stands_in_for": m, "shapes": {k: "x".join(map(str, v)) for k, v in source(m)[2].items()},
                      "values": source(m)[3]} for m in f.models],
            "sha256": hashlib.sha256(data).hexdigest(), "ops": dict(sorted(file_ops(derived.graph).items())),
        })
        print(f"{f.file:34}{len(real):>10}{len(data):>9} bytes  from {package} {rel}")
    with open(os.path.join(args.out, "fixtures.json"), "w") as fh:
        json.dump(table, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
