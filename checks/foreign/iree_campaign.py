"""The IREE campaign: Hypothesis draws small ONNX models, IREE packs their transient memory, the spec checks it.

Each drawn program is a list of steps over one running float32 tensor ``h`` of shape (rows, cols):
element-wise ops, an affine map, a matrix product with a constant square matrix, a softmax over the
rows, a concatenation with a transformed copy folded back, a transpose applied twice, a reduction
kept as an extra output. It becomes an ONNX model (opset 17) that ``iree-import-onnx`` imports and
``iree-compile`` compiles for the CPU, printing the stream IR around its layout pass; the reader
(checks/foreign/iree_mlir.py) takes the plan of every packed function and the spec checks it. IREE's
runtime runs the compiled module against onnxruntime (the oracle). Kinds of program, the loop,
shrinking and the finding file (which keeps the dump, so it replays without IREE) are
checks/foreign/campaign_core.py's. Needs the ``iree`` extra and IREE's runtime (iree-base-runtime).
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import attrs
import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from zcspec.checks.foreign.campaign_core import CampaignResult, Outcome, run_campaign
from zcspec.checks.foreign.iree_mlir import IreeDumpError, read_iree_dump
from zcspec.checks.foreign.iree_programs import FLAGS, _tool
from zcspec.checks.foreign.step_programs import Step, StepProgram
from zcspec.spec.check import check

UNARY = ("Tanh", "Sigmoid", "Relu", "Exp", "Sin")
RTOL, ATOL = 1e-3, 1e-4


@attrs.frozen
class OnnxProgram(StepProgram):

    def source(self) -> str:
        return "\n".join([f"# x: float32[{self.rows}, {self.cols}]"] + [f"{s.form}{list(s.args)}" for s in self.steps]) + "\n"

    def model(self) -> onnx.ModelProto:
        r, c = self.rows, self.cols
        nodes, inits, outputs = [], [], []
        h = "x"

        def fresh(prefix: str) -> str:
            return f"{prefix}{len(nodes)}"

        for s in self.steps:
            a = s.args
            if s.form == "unary":
                out = fresh("u")
                nodes.append(helper.make_node(a[0], [h], [out]))
            elif s.form == "affine":
                k, b, out = fresh("k"), fresh("b"), fresh("af")
                inits += [numpy_helper.from_array(np.array(a[0], np.float32), k),
                          numpy_helper.from_array(np.array(a[1], np.float32), b)]
                mid = fresh("m")
                nodes += [helper.make_node("Mul", [h, k], [mid]), helper.make_node("Add", [mid, b], [out])]
            elif s.form == "matmul":
                w, out = fresh("w"), fresh("mm")
                inits.append(numpy_helper.from_array(np.eye(c, dtype=np.float32) * a[0] + 0.01, w))
                nodes.append(helper.make_node("MatMul", [h, w], [out]))
            elif s.form == "softmax":
                out = fresh("sm")
                nodes.append(helper.make_node("Softmax", [h], [out], axis=1))
            elif s.form == "concat":
                t, cat, half = fresh("t"), fresh("cat"), fresh("half")
                nodes += [helper.make_node(a[0], [h], [t]), helper.make_node("Concat", [h, t], [cat], axis=0)]
                starts, ends, axes = fresh("s"), fresh("e"), fresh("ax")
                inits += [numpy_helper.from_array(np.array([r], np.int64), starts),
                          numpy_helper.from_array(np.array([2 * r], np.int64), ends),
                          numpy_helper.from_array(np.array([0], np.int64), axes)]
                second = fresh("sl")
                nodes += [helper.make_node("Slice", [cat, starts, ends, axes], [second]),
                          helper.make_node("Add", [h, second], [half])]
                out = half
            elif s.form == "transpose":
                t, out = fresh("tr"), fresh("tt")
                nodes += [helper.make_node("Transpose", [h], [t], perm=[1, 0]),
                          helper.make_node("Transpose", [t], [out], perm=[1, 0])]
            elif s.form == "reduce":
                axes, out = fresh("rax"), fresh("red")
                inits.append(numpy_helper.from_array(np.array([a[0]], np.int64), axes))
                nodes.append(helper.make_node("ReduceSum", [h, axes], [out], keepdims=1))
                outputs.append((out, [1, c] if a[0] == 0 else [r, 1]))
                continue
            else:
                raise ValueError(f"unknown step form {s.form!r}")
            h = out
        if h == "x":
            out = fresh("id")
            nodes.append(helper.make_node("Identity", ["x"], [out]))
            h = out
        graph = helper.make_graph(nodes, "drawn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [r, c])],
                                  [helper.make_tensor_value_info(h, TensorProto.FLOAT, [r, c])]
                                  + [helper.make_tensor_value_info(o, TensorProto.FLOAT, shape) for o, shape in outputs],
                                  initializer=inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])

    def input(self) -> np.ndarray:
        n = self.rows * self.cols
        return ((np.arange(n, dtype=np.float32) - n / 3) / n).reshape(self.rows, self.cols)


@st.composite
def onnx_programs(draw, max_steps: int = 6) -> OnnxProgram:
    steps = []
    for _ in range(draw(st.integers(1, max_steps))):
        form = draw(st.sampled_from(("unary", "affine", "matmul", "softmax", "concat", "transpose", "reduce")))
        unary = st.sampled_from(UNARY)
        if form in ("unary", "concat"):
            steps.append(Step(form, (draw(unary),)))
        elif form == "affine":
            steps.append(Step(form, (draw(st.sampled_from((0.5, 2.0, -1.0))), draw(st.sampled_from((0.0, 0.25))))))
        elif form == "matmul":
            steps.append(Step(form, (draw(st.sampled_from((0.5, 1.0, 2.0))),)))
        elif form == "reduce":
            steps.append(Step(form, (draw(st.integers(0, 1)),)))
        else:
            steps.append(Step(form))
    return OnnxProgram(draw(st.integers(1, 8)), draw(st.integers(1, 8)), tuple(steps))


def run_program(program: OnnxProgram) -> Outcome | None:
    import iree.runtime as rt          # iree-base-runtime: the campaign's only
    import onnxruntime as ort

    model = program.model()
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path, mlir, vmfb = (os.path.join(tmp, n) for n in ("m.onnx", "m.mlir", "m.vmfb"))
        onnx.save(model, onnx_path)
        imported = subprocess.run([_tool("iree-import-onnx"), onnx_path, "-o", mlir], capture_output=True, text=True)
        if imported.returncode:
            return None
        run = subprocess.run([_tool("iree-compile"), mlir, *FLAGS, "-o", vmfb], capture_output=True, text=True)
        if run.returncode:
            return None
        layout = Path(tmp) / "layout.txt"
        layout.write_text(run.stderr)
        try:
            plans = read_iree_dump(layout)
        except IreeDumpError as e:
            if "has no function that packs" not in str(e):
                raise                 # the reader failed on a real dump: ours to fix, not a finding
            plans = []                # everything fused: nothing transient to plan
        context = rt.SystemContext(config=rt.Config("local-task"))
        context.add_vm_module(rt.VmModule.copy_buffer(context.instance, Path(vmfb).read_bytes()))
        got = context.modules.module["drawn"](program.input())
        got = [np.asarray(g) for g in (got if isinstance(got, (tuple, list)) else [got])]
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": program.input()})
    diff = max((float(np.abs(g - w).max()) for g, w in zip(got, want) if g.shape == w.shape), default=0.0)
    matches = len(got) == len(want) and all(g.shape == w.shape and np.allclose(g, w, rtol=RTOL, atol=ATOL)
                                            for g, w in zip(got, want))
    reports = [(name, check(plan)) for name, plan in plans]
    claims = tuple(sorted({i for _, r in reports for i in r.violated()}))
    violations = tuple(f"[@{name}] {v}" for name, r in reports for v in r.violations)
    return Outcome(program, claims, violations, diff, matches, {"layout.txt": run.stderr})


def campaign(*, examples: int = 100, seed: int = 0, budget: float = 600.0, max_steps: int = 6,
             progress=lambda s: None) -> CampaignResult:
    from importlib.metadata import version

    result = run_campaign(onnx_programs(max_steps=max_steps), run_program, examples=examples, seed=seed,
                          budget=budget, progress=progress)
    result.versions = {"iree-base-compiler": version("iree-base-compiler"), "iree-base-runtime": version("iree-base-runtime")}
    return result
