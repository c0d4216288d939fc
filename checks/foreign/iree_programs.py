"""The IREE programs whose stream dumps zcspec keeps (checks/foreign/programs/iree/), and how to remake them.

Each program is one of onnx's light models (the zoo of ``zcspec verify``), brought to opset 17 by
onnx's version converter, imported with ``iree-import-onnx`` and compiled for the CPU
(``llvm-cpu``) with the stream dialect printed before and after the layout pass
(checks/foreign/iree_mlir.py reads it). Dense constants are elided from the dump
(``--mlir-elide-elementsattrs-if-larger``): the weights are not part of the transient plan.
Remaking them needs the ``iree`` extra (iree-base-compiler with its ONNX importer); reading
them needs nothing:

    python -m zcspec.checks.foreign.iree_programs [--only NAME ...]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx
from onnx import version_converter

PROGRAMS_DIR = Path(__file__).resolve().parent / "programs" / "iree"
MODELS = {"squeezenet": "onnx's light squeezenet (fire modules: concatenations of two branches)",
          "resnet50": "onnx's light resnet50 (residual additions)",
          "inception_v1": "onnx's light inception_v1 (four-way concatenations)"}
FLAGS = ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
         "--iree-llvmcpu-target-cpu=generic", "--mlir-print-ir-before=iree-stream-layout-slices",
         "--mlir-print-ir-after=iree-stream-layout-slices", "--mlir-elide-elementsattrs-if-larger=8")


def _tool(name: str) -> str:
    path = shutil.which(name) or os.path.join(os.path.dirname(sys.executable), name)
    if not os.path.exists(path):
        raise RuntimeError(f"{name} not found: pip install -e '.[iree]'")
    return path


def make(name: str, folder: Path) -> dict:
    light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", f"light_{name}.onnx")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        model = version_converter.convert_version(onnx.load(light), 17)
        onnx.save(model, os.path.join(tmp, "m.onnx"))
        subprocess.run([_tool("iree-import-onnx"), os.path.join(tmp, "m.onnx"), "-o", os.path.join(tmp, "m.mlir")],
                       check=True, capture_output=True, text=True)
        run = subprocess.run([_tool("iree-compile"), os.path.join(tmp, "m.mlir"), *FLAGS, "-o", os.path.join(tmp, "m.vmfb")],
                             capture_output=True, text=True)
        if run.returncode:
            raise RuntimeError(f"iree-compile failed on {name}: {run.stderr[-2000:]}")
        (folder / "layout.txt").write_text(run.stderr)
    version = subprocess.run([_tool("iree-compile"), "--version"], capture_output=True, text=True).stdout.split("\n")
    return {"iree_compile": next((v.strip() for v in version if "IREE compiler version" in v), "?")}


def write_programs(out: Path = PROGRAMS_DIR, only=()) -> list[str]:
    lines = []
    for name, what in MODELS.items():
        if only and name not in only:
            continue
        facts = make(name, out / name)
        meta = {"program": name, "what": what, "expect": "clean", "issue": "", **facts}
        (out / name / "program.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        lines.append(f"{name}: {facts['iree_compile']}, {(out / name / 'layout.txt').stat().st_size} bytes")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=(), metavar="NAME", help=f"remake only these ({', '.join(MODELS)})")
    parser.add_argument("--out", type=Path, default=PROGRAMS_DIR, help=f"where (default {PROGRAMS_DIR})")
    args = parser.parse_args(argv)
    for line in write_programs(args.out, args.only):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
