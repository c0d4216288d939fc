"""The LiteRT campaign: Hypothesis draws small models, LiteRT's interpreter plans their arena, the spec checks it.

Each drawn model is a list of builtin operators over float32 tensors (element-wise unary and binary
operators on any two live tensors of one shape, and concatenations along the rows), built with
LiteRT's schema API (checks/foreign/litert_programs.py), run by the builtin interpreter with the
default delegates off against a NumPy reference (the oracle), and its arena read back
(checks/foreign/tflite.py) and checked. Kinds of program, the loop, shrinking and the finding file
are checks/foreign/campaign_core.py's; the finding keeps the model and its arena record, so it
replays with no LiteRT. Needs the ``litert`` extra.
"""
from __future__ import annotations

import base64
import json
import tempfile
from pathlib import Path

import attrs
from hypothesis import strategies as st

from zcspec.checks.foreign.campaign_core import CampaignResult, Outcome, run_campaign
from zcspec.checks.foreign.litert_programs import Model, build, run
from zcspec.checks.foreign.tflite import load_record, read_tflite, record_arena
from zcspec.spec.check import check

UNARY = ("TANH", "LOGISTIC", "RELU")
BINARY = ("ADD", "MUL", "SUB", "MAXIMUM")
TOLERANCE = 1e-5


@attrs.frozen
class LitertProgram:
    """A drawn model, in the form ``Model`` builds; ``steps`` are its operators."""

    model: Model

    @property
    def steps(self):
        return self.model.ops

    def source(self) -> str:
        lines = [f"# inputs {list(self.model.inputs)}, outputs {list(self.model.outputs)}"]
        lines += [f"t{outs[0]}{list(self.model.shapes[outs[0]])} = {op}({', '.join(f't{i}' for i in ins)})"
                  for op, ins, outs in self.model.ops]
        return "\n".join(lines) + "\n"

    def to_data(self) -> dict:
        m = self.model
        return {"shapes": [list(s) for s in m.shapes], "ops": [[op, list(i), list(o)] for op, i, o in m.ops],
                "inputs": list(m.inputs), "outputs": list(m.outputs)}


@st.composite
def litert_programs(draw, max_steps: int = 6) -> LitertProgram:
    rows, cols = draw(st.integers(1, 6)), draw(st.integers(1, 8))
    shapes = [(rows, cols)]
    ops = []
    for _ in range(draw(st.integers(1, max_steps))):
        kind = draw(st.sampled_from(("unary", "binary", "binary", "concat")))
        a = draw(st.integers(0, len(shapes) - 1))
        if kind == "unary":
            op, ins, shape = draw(st.sampled_from(UNARY)), (a,), shapes[a]
        else:
            if kind == "binary":
                same = [i for i, s in enumerate(shapes) if s == shapes[a]]
            else:
                same = [i for i, s in enumerate(shapes) if s[1] == shapes[a][1]]
            b = draw(st.sampled_from(same))
            if kind == "binary":
                op, ins, shape = draw(st.sampled_from(BINARY)), (a, b), shapes[a]
            else:
                op, ins, shape = "CONCATENATION", (a, b), (shapes[a][0] + shapes[b][0], shapes[a][1])
        ops.append((op, ins, (len(shapes),)))
        shapes.append(shape)
    used = {i for _, ins, _ in ops for i in ins}
    outputs = tuple(sorted({len(shapes) - 1} | {i for i in range(1, len(shapes)) if i not in used}))
    return LitertProgram(Model("drawn", "", tuple(shapes), tuple(ops), (0,), outputs))


def run_program(program: LitertProgram) -> Outcome:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.tflite"
        path.write_bytes(build(program.model))
        record = record_arena(str(path))
        diff = run(path, program.model)
        (Path(tmp) / "arena.json").write_text(json.dumps(record))
        plan = read_tflite(path, load_record(str(Path(tmp) / "arena.json")))
        artefact = {"model.tflite": base64.b64encode(path.read_bytes()).decode(), "arena.json": json.dumps(record)}
    report = check(plan)
    return Outcome(program, tuple(report.violated()), tuple(str(v) for v in report.violations), diff,
                   diff <= TOLERANCE, artefact)


def campaign(*, examples: int = 100, seed: int = 0, budget: float = 600.0, max_steps: int = 6,
             progress=lambda s: None) -> CampaignResult:
    from importlib.metadata import version

    result = run_campaign(litert_programs(max_steps=max_steps), run_program, examples=examples, seed=seed,
                          budget=budget, progress=progress)
    result.versions = {"ai-edge-litert": version("ai-edge-litert")}
    return result
