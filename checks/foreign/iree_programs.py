"""The IREE programs whose stream dumps zcspec keeps (checks/foreign/programs/iree/), and how to remake them.

Each program is an ONNX model imported with ``iree-import-onnx`` and compiled for the CPU
(``llvm-cpu``) with the stream dialect printed before and after the layout pass
(checks/foreign/iree_mlir.py reads it). Dense constants are elided from the dump
(``--mlir-elide-elementsattrs-if-larger``): the weights are not part of the transient plan.

- onnx's light squeezenet, resnet50 and inception_v1 (the zoo of ``zcspec verify``), brought to
  opset 17 by onnx's version converter: clean, made by whichever IREE is installed;
- reproductions of known IREE bugs, each made only by the release that has the bug (``made_with``),
  and the same model made by a release that computes it right: its plan must be clean. These are run
  with IREE's runtime against onnxruntime on seeded inputs; ``program.json`` says whether the results
  matched.

Remaking them needs the ``iree`` extra (iree-base-compiler with its ONNX importer, iree-base-runtime
and onnxruntime for the reproductions), in this Python or in another one (``--python``, a venv
holding the release a program needs); reading them needs nothing:

    python -m zcspec.checks.foreign.iree_programs [--only NAME ...] [--python PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

import attrs
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, version_converter

PROGRAMS_DIR = Path(__file__).resolve().parent / "programs" / "iree"
MODELS = {"squeezenet": "onnx's light squeezenet (fire modules: concatenations of two branches)",
          "resnet50": "onnx's light resnet50 (residual additions)",
          "inception_v1": "onnx's light inception_v1 (four-way concatenations)"}
FLAGS = ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
         "--iree-llvmcpu-target-cpu=generic", "--mlir-print-ir-before=iree-stream-layout-slices",
         "--mlir-print-ir-after=iree-stream-layout-slices", "--mlir-elide-elementsattrs-if-larger=8")
# IREE 3.5.0 sometimes aborts (a double free) while forming the LSTM's dispatches, and a run
# without threads does too; a later run of the same command succeeds.
COMPILE_ATTEMPTS = 8
TOLERANCE = 1e-4


def _tool(name: str, python: str | None = None) -> str:
    """An IREE tool: next to ``python`` when given, else on PATH or next to this Python."""
    if python is not None:
        path = os.path.join(os.path.dirname(python), name)
    else:
        path = shutil.which(name) or os.path.join(os.path.dirname(sys.executable), name)
    if not os.path.exists(path):
        raise RuntimeError(f"{name} not found: pip install -e '.[iree]'" + (f" (looked next to {python})" if python else ""))
    return path


def compiler_version(python: str | None = None) -> str:
    """``IREE compiler version 3.5.0rc20250609 @ 2e8738e...``, as ``iree-compile --version`` prints it."""
    lines = subprocess.run([_tool("iree-compile", python), "--version"], capture_output=True, text=True).stdout
    return next((v.strip() for v in lines.splitlines() if "IREE compiler version" in v), "?")


def release(version: str) -> str:
    """The release a compiler version string names: ``3.5.0`` for ``... version 3.5.0rc20250609 @ ...``."""
    m = re.search(r"version (\d+\.\d+\.\d+)", version)
    return m.group(1) if m else "?"


def _compile(onnx_path: str, tmp: str, python: str | None, extra=()) -> str:
    """Import and compile an ONNX model; the dump (the compiler's stderr)."""
    mlir, vmfb = os.path.join(tmp, "m.mlir"), os.path.join(tmp, "m.vmfb")
    subprocess.run([_tool("iree-import-onnx", python), onnx_path, "-o", mlir], check=True, capture_output=True, text=True)
    for _ in range(COMPILE_ATTEMPTS):
        run = subprocess.run([_tool("iree-compile", python), mlir, *FLAGS, *extra, "-o", vmfb],
                             capture_output=True, text=True, timeout=600)
        if run.returncode == 0:
            return run.stderr
    raise RuntimeError(f"iree-compile failed {COMPILE_ATTEMPTS} times on {onnx_path}: {run.stderr[-2000:]}")


def make(name: str, folder: Path, python: str | None = None) -> dict:
    light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", f"light_{name}.onnx")
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        model = version_converter.convert_version(onnx.load(light), 17)
        onnx.save(model, os.path.join(tmp, "m.onnx"))
        (folder / "layout.txt").write_text(_compile(os.path.join(tmp, "m.onnx"), tmp, python))
    return {"iree_compile": compiler_version(python)}


# -- reproductions of known bugs ------------------------------------------------------------------

def _time_embedding() -> onnx.ModelProto:
    """a = t*t and sin(a), one dispatch with two results, concatenated along the rows; beside it an input
    concatenated with itself (two updates that ScheduleConcurrency puts in the same concurrent block)."""
    nodes = [helper.make_node("Mul", ["t", "t"], ["a"]), helper.make_node("Sin", ["a"], ["b"]),
             helper.make_node("Concat", ["a", "b"], ["ab"], axis=0),
             helper.make_node("Concat", ["s", "s"], ["ss"], axis=0),
             helper.make_node("Mul", ["ab", "ab"], ["y"]), helper.make_node("Mul", ["ss", "ss"], ["z"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 160]),
                                           helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 160]),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, [4, 16])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _bidirectional_lstm() -> onnx.ModelProto:
    """One ONNX LSTM, direction bidirectional: 4 time steps, batch 1, 3 inputs, hidden size 5."""
    steps, batch, inputs, hidden = 4, 1, 3, 5
    rng = np.random.default_rng(1)
    weights = [numpy_helper.from_array((rng.standard_normal((2, 4 * hidden, inputs)) * 0.5).astype(np.float32), "W"),
               numpy_helper.from_array((rng.standard_normal((2, 4 * hidden, hidden)) * 0.5).astype(np.float32), "R"),
               numpy_helper.from_array((rng.standard_normal((2, 8 * hidden)) * 0.1).astype(np.float32), "B")]
    node = helper.make_node("LSTM", ["x", "W", "R", "B"], ["y"], direction="bidirectional", hidden_size=hidden)
    graph = helper.make_graph([node], "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, batch, inputs])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [steps, 2, batch, hidden])],
                              initializer=weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@attrs.frozen
class Reproducer:
    name: str
    what: str
    model: Callable[[], onnx.ModelProto]
    made_with: str                 # the IREE release (a version prefix) that makes it
    expect: str = "clean"
    issue: str = ""
    flags: tuple[str, ...] = ()


_EMPLACE = ("a dispatch with two results (t*t and its sine) that EmplaceAllocations places into the two halves "
            "of their concatenation, in a concurrent block; only the second result is used after")
_LSTM = "a bidirectional ONNX LSTM: two scf.for loops, one per direction, each writing its outputs into a resource it carries"
REPRODUCERS = (
    Reproducer("emplace-unused-tied-result", _EMPLACE + "; ScheduleAllocation gives the unused one its own slice",
               _time_embedding, "3.0.", "LAYOUT-READS-SEE-WRITES", "iree-org/iree#19355"),
    Reproducer("emplace-unused-tied-result-fixed", _EMPLACE + "; made by the release with the fix (#19389)",
               _time_embedding, "3.1.", issue="iree-org/iree#19355"),
    Reproducer("bidirectional-lstm", _LSTM + "; both loops are given the same resource", _bidirectional_lstm,
               "3.5.", "LAYOUT-READS-SEE-WRITES", "iree-org/iree#21053", ("--mlir-disable-threading",)),
    Reproducer("bidirectional-lstm-3.13", _LSTM + "; made by a release whose loops copy it first (right at run time)",
               _bidirectional_lstm, "3.13.", issue="iree-org/iree#21053", flags=("--mlir-disable-threading",)),
)

# Runs in the Python that has IREE's runtime: the compiled module against onnxruntime.
_RUN = """
import json, sys
import numpy as np, onnx, onnxruntime
import iree.runtime as rt
vmfb, model_path, function = sys.argv[1:4]
model = onnx.load(model_path)
rng = np.random.default_rng(0)
feeds = {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
         for i in model.graph.input}
want = onnxruntime.InferenceSession(model_path).run(None, feeds)
context = rt.SystemContext(config=rt.Config("local-task"))
context.add_vm_module(rt.VmModule.copy_buffer(context.instance, open(vmfb, "rb").read()))
got = context.modules.module[function](*feeds.values())
got = [np.asarray(g) for g in (got if isinstance(got, (list, tuple)) else [got])]
print(json.dumps({"diff": max(float(np.abs(g - w).max()) for g, w in zip(got, want)),
                  "onnxruntime": onnxruntime.__version__}))
"""


def make_reproducer(r: Reproducer, folder: Path, python: str | None = None) -> dict | None:
    """Compile and run ``r`` with ``python``'s IREE; None, with nothing written, when that is not the
    release ``r`` is made with."""
    version = compiler_version(python)
    if not release(version).startswith(r.made_with):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        model = r.model()
        onnx.save(model, os.path.join(tmp, "m.onnx"))
        dump = _compile(os.path.join(tmp, "m.onnx"), tmp, python, r.flags)
        run = subprocess.run([python or sys.executable, "-c", _RUN, os.path.join(tmp, "m.vmfb"),
                              os.path.join(tmp, "m.onnx"), model.graph.name], capture_output=True, text=True)
        if run.returncode:
            raise RuntimeError(f"running {r.name!r} failed (iree-base-runtime and onnxruntime installed?): "
                               f"{run.stderr[-2000:]}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "layout.txt").write_text(dump)
    ran = json.loads(run.stdout.strip().splitlines()[-1])
    return {"iree_compile": version, "iree": release(version), "onnxruntime": ran["onnxruntime"],
            "max_abs_diff_vs_onnxruntime": ran["diff"], "matches_reference": ran["diff"] <= TOLERANCE}


def write_programs(out: Path = PROGRAMS_DIR, only=(), python: str | None = None) -> list[str]:
    lines = []
    for name, what in MODELS.items():
        if only and name not in only:
            continue
        facts = make(name, out / name, python)
        meta = {"program": name, "what": what, "expect": "clean", "issue": "", **facts}
        (out / name / "program.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        lines.append(f"{name}: {facts['iree_compile']}, {(out / name / 'layout.txt').stat().st_size} bytes")
    for r in REPRODUCERS:
        if only and r.name not in only:
            continue
        facts = make_reproducer(r, out / r.name, python)
        if facts is None:
            lines.append(f"{r.name}: skipped, made with IREE {r.made_with}* only (the compiler given is another)")
            continue
        meta = {"program": r.name, "what": r.what, "expect": r.expect, "issue": r.issue, **facts}
        (out / r.name / "program.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
        lines.append(f"{r.name}: IREE {facts['iree']}, compiled vs onnxruntime max |diff| "
                     f"{facts['max_abs_diff_vs_onnxruntime']:.3g}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = [*MODELS, *(r.name for r in REPRODUCERS)]
    parser.add_argument("--only", nargs="*", default=(), metavar="NAME", help=f"remake only these ({', '.join(names)})")
    parser.add_argument("--out", type=Path, default=PROGRAMS_DIR, help=f"where (default {PROGRAMS_DIR})")
    parser.add_argument("--python", default=None,
                        help="the Python of an environment with the IREE release to use (default: this one's tools)")
    args = parser.parse_args(argv)
    for line in write_programs(args.out, args.only, args.python):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
