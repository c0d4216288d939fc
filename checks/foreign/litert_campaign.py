"""The LiteRT campaign: Hypothesis draws small models, LiteRT's interpreter plans their arena, the spec checks it.

Each drawn model is a list of builtin operators over float32 tensors (:func:`litert_programs`):
element-wise unary and binary operators, concatenations, views (RESHAPE, SQUEEZE, EXPAND_DIMS),
more views of a tensor a view already reads (one memory read through several views), and
FULLY_CONNECTED with a constant matrix. It is built with LiteRT's schema API
(checks/foreign/litert_programs.py), run by the builtin interpreter with the default delegates off
against a NumPy reference (the oracle), and its arena read back (checks/foreign/tflite.py) and
checked. Kinds of program, the loop and the finding file are checks/foreign/campaign_core.py's;
Hypothesis shrinks the first confirmed bug or miss and :func:`reduce` then deletes the operators it
could not. The finding keeps the model and its arena record, so it replays with no LiteRT. Needs
the ``litert`` extra.

From a clean start (seed 0, ``max_steps=10``) it finds the class of google-ai-edge/LiteRT#8928 in
about 2,000 programs: an element-wise operator computed in place over a view of a view, while the
middle one is still read later.
"""
from __future__ import annotations

import base64
import json
import math
import tempfile
from pathlib import Path

import attrs
import numpy as np
from hypothesis import strategies as st

from zcspec.checks.foreign.campaign_core import CampaignResult, Outcome, run_campaign
from zcspec.checks.foreign.litert_programs import VIEWS, Model, build, interpret
from zcspec.checks.foreign.tflite import load_record, read_tflite, record_arena
from zcspec.spec.check import check

UNARY = ("TANH", "LOGISTIC", "RELU")
BINARY = ("ADD", "MUL", "SUB", "MAXIMUM")
# The forms a step is drawn from, views more often than the rest: LiteRT's planner shares a view's
# bytes with its input, and one memory read through several views is where its bookkeeping must hold.
DRAWN = ("unary", "binary", "binary", "concat", "view", "view", "reread", "fully_connected")
# The interpreter and NumPy sum FULLY_CONNECTED's products in different orders: a relative tolerance.
RTOL, ATOL = 1e-4, 1e-5


@attrs.frozen
class LitertProgram:
    """A drawn model, in the form ``Model`` builds; ``steps`` are its operators."""

    model: Model

    @property
    def steps(self):
        return self.model.ops

    def source(self) -> str:
        m = self.model
        lines = [f"# inputs {list(m.inputs)}, outputs {list(m.outputs)}"]
        lines += [f"t{i}{list(m.shapes[i])} = constant ramp" for i in m.weights]
        lines += [f"t{i}[] = constant 0 (int32)" for i in m.axes]
        lines += [f"t{outs[0]}{list(m.shapes[outs[0]])} = {op}({', '.join(f't{i}' for i in ins if i >= 0)})"
                  for op, ins, outs in m.ops]
        return "\n".join(lines) + "\n"

    def to_data(self) -> dict:
        m = self.model
        return {"shapes": [list(s) for s in m.shapes], "ops": [[op, list(i), list(o)] for op, i, o in m.ops],
                "inputs": list(m.inputs), "outputs": list(m.outputs), "weights": list(m.weights), "axes": list(m.axes)}

    @classmethod
    def from_data(cls, d: dict) -> "LitertProgram":
        return cls(Model("drawn", "", tuple(tuple(s) for s in d["shapes"]),
                         tuple((str(op), tuple(i), tuple(o)) for op, i, o in d["ops"]), tuple(d["inputs"]),
                         tuple(d["outputs"]), tuple(d.get("weights", ())), tuple(d.get("axes", ()))))


@attrs.define
class _Draft:
    """A model being drawn: tensor shapes (0 is the input), constant tensors, operators so far."""

    shapes: list
    weights: list = attrs.Factory(list)
    axes: list = attrs.Factory(list)
    ops: list = attrs.Factory(list)

    def live(self) -> list[int]:
        return [i for i in range(len(self.shapes)) if i not in self.weights and i not in self.axes]

    def constant(self, shape: tuple, kind: list) -> int:
        kind.append(len(self.shapes))
        self.shapes.append(shape)
        return kind[-1]

    def add(self, op: str, ins: tuple, shape: tuple) -> None:
        self.ops.append((op, tuple(ins), (len(self.shapes),)))
        self.shapes.append(tuple(shape))

    def unread(self) -> list[int]:
        """The live tensors no operator reads (the input aside)."""
        used = {i for _, ins, _ in self.ops for i in ins}
        return [i for i in self.live()[1:] if i not in used]

    def model(self, outputs: tuple[int, ...]) -> Model:
        return Model("drawn", "", tuple(self.shapes), tuple(self.ops), (0,), outputs, tuple(self.weights),
                     tuple(self.axes))


def _unary(draw, d: _Draft, a: int) -> None:
    d.add(draw(st.sampled_from(UNARY)), (a,), d.shapes[a])


def _binary(draw, d: _Draft, a: int) -> None:
    # another tensor of a's shape first (a itself last): what a shrunk program keeps if it can
    same = [i for i in d.live() if d.shapes[i] == d.shapes[a] and i != a] + [a]
    d.add(draw(st.sampled_from(BINARY)), (a, draw(st.sampled_from(same))), d.shapes[a])


def _concat(draw, d: _Draft, a: int) -> None:
    s = d.shapes[a]
    b = draw(st.sampled_from([i for i in d.live() if len(d.shapes[i]) == len(s) and d.shapes[i][1:] == s[1:]]))
    d.add("CONCATENATION", (a, b), (s[0] + d.shapes[b][0], *s[1:]))


def _view(draw, d: _Draft, a: int) -> None:
    """RESHAPE to a shape of as many elements (flat, its own, or another live tensor's, so the view's
    readers can meet other tensors), SQUEEZE of a leading 1, or EXPAND_DIMS."""
    s, n = d.shapes[a], math.prod(d.shapes[a])
    same_size = {d.shapes[i] for i in d.live() if math.prod(d.shapes[i]) == n and len(d.shapes[i]) <= 3}
    targets = sorted({(n,), s} | same_size)
    kinds = ["RESHAPE"] + (["SQUEEZE"] if len(s) >= 2 and s[0] == 1 else []) + (["EXPAND_DIMS"] if len(s) <= 2 else [])
    op = draw(st.sampled_from(kinds))
    if op == "RESHAPE":
        d.add(op, (a,), draw(st.sampled_from(targets)))
    elif op == "SQUEEZE":
        d.add(op, (a,), s[1:])
    else:
        d.add(op, (a, d.constant((), d.axes)), (1, *s))


def _reread(draw, d: _Draft, a: int) -> None:
    """One more view of a tensor some view already reads: one memory read through several views."""
    viewed = sorted({ins[0] for op, ins, _ in d.ops if op in VIEWS})
    _view(draw, d, draw(st.sampled_from(viewed)) if viewed else a)


def _fully_connected(draw, d: _Draft, a: int) -> None:
    """y = x W^T over the rows of x's last dimension, W a constant square matrix: y keeps that width."""
    width = d.shapes[a][-1]
    w = d.constant((width, width), d.weights)
    d.add("FULLY_CONNECTED", (a, w, -1), (math.prod(d.shapes[a]) // width, width))


FORMS = {"unary": _unary, "binary": _binary, "concat": _concat, "view": _view, "reread": _reread,
         "fully_connected": _fully_connected}


@st.composite
def litert_programs(draw, max_steps: int = 6) -> LitertProgram:
    """Models of up to ``max_steps`` operators over one float32 input (``FORMS``): element-wise unary and
    binary operators (a binary one on two live tensors of one shape), concatenations, views (RESHAPE,
    SQUEEZE, EXPAND_DIMS), more views of what a view already reads, and FULLY_CONNECTED with a
    constant matrix. Each operator reads the newest live tensor half of the time (chains, as models
    are), else one drawn further back."""
    if max_steps < 1:
        raise ValueError(f"max_steps={max_steps!r} must be at least 1")
    d = _Draft([(draw(st.integers(1, 6)), draw(st.integers(1, 8)))])
    for k in range(max_steps):
        # one more step nine times in ten: a list Hypothesis shrinks by deleting a step's choices
        if k and not draw(st.sampled_from((False,) + (True,) * 9)):
            break
        form = draw(st.sampled_from(DRAWN))
        live = d.live()
        # the newest by name, an older one by index: deleting a step keeps what the others read
        FORMS[form](draw, d, draw(st.just(live[-1]) | st.sampled_from(live)))
    # The last tensor is an output; each other one nothing reads is one when drawn so (a model's
    # outputs are few, and LiteRT computes nothing in the bytes of an output).
    last = len(d.shapes) - 1
    outputs = tuple(i for i in d.unread() if i != last and draw(st.booleans())) + (last,)
    return LitertProgram(d.model(outputs))


def run_program(program: LitertProgram) -> Outcome:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.tflite"
        path.write_bytes(build(program.model))
        record = record_arena(str(path))
        with np.errstate(all="ignore"):     # the reference may overflow as the interpreter does
            pairs = interpret(path, program.model)
        (Path(tmp) / "arena.json").write_text(json.dumps(record))
        plan = read_tflite(path, load_record(str(Path(tmp) / "arena.json")))
        artefact = {"model.tflite": base64.b64encode(path.read_bytes()).decode(), "arena.json": json.dumps(record)}
    report = check(plan)
    diff = max(_difference(got, want) for got, want in pairs)
    matches = all(np.allclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True) for got, want in pairs)
    return Outcome(program, tuple(report.violated()), tuple(str(v) for v in report.violations), diff, matches,
                   artefact)


def _difference(got: np.ndarray, want: np.ndarray) -> float:
    """The largest |got - want|: equal infinities and NaN against NaN differ by nothing, a NaN on
    one side only by infinitely much."""
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        return float(np.nan_to_num(np.where(same, 0, np.abs(got - want)), nan=np.inf).max(initial=0))


def without(model: Model, k: int) -> Model | None:
    """``model`` without operator ``k``: its readers read its first input instead, and tensors no
    operator names any more are dropped. None when a reader would see another shape, or ``k``'s
    result is an output."""
    op, ins, (out,) = model.ops[k]
    read = any(out in i_ for _, i_, _ in model.ops)
    if out in model.outputs or (read and model.shapes[ins[0]] != model.shapes[out]):
        return None
    ops = [(o, tuple(ins[0] if i == out else i for i in i_), o_) for j, (o, i_, o_) in enumerate(model.ops) if j != k]
    kept = sorted({*model.inputs, *model.outputs} | {i for _, i_, o_ in ops for i in (*i_, *o_) if i >= 0})
    new = {old: n for n, old in enumerate(kept)} | {-1: -1}
    return attrs.evolve(model, shapes=tuple(model.shapes[i] for i in kept),
                        ops=tuple((o, tuple(new[i] for i in i_), tuple(new[i] for i in o_)) for o, i_, o_ in ops),
                        inputs=tuple(new[i] for i in model.inputs), outputs=tuple(new[i] for i in model.outputs),
                        weights=tuple(new[i] for i in model.weights if i in new),
                        axes=tuple(new[i] for i in model.axes if i in new))


def reduce(outcome: Outcome, run=run_program) -> Outcome:
    """Delete operators (:func:`without`), last first, while the program stays of ``outcome``'s kind
    with the same claims broken, until no deletion does.

    Hypothesis deletes a step's choices while it shrinks, but a later step that names an older
    tensor by its index then names another one, so a step between often stays; this pass rewires
    the readers instead."""
    smaller = True
    while smaller:
        smaller = False
        for k in reversed(range(len(outcome.program.steps))):
            model = without(outcome.program.model, k) if k < len(outcome.program.steps) else None
            if model is None:
                continue
            candidate = run(LitertProgram(model))
            if (candidate.kind, candidate.claims) == (outcome.kind, outcome.claims):
                outcome, smaller = candidate, True
    return outcome


def campaign(*, examples: int = 100, seed: int = 0, budget: float = 600.0, max_steps: int = 6,
             progress=lambda s: None) -> CampaignResult:
    """Draw up to ``examples`` models (stop drawing after ``budget`` seconds); the first confirmed bug
    or miss shrunk by Hypothesis, then by :func:`reduce`."""
    from importlib.metadata import version

    result = run_campaign(litert_programs(max_steps=max_steps), run_program, examples=examples, seed=seed,
                          budget=budget, progress=progress)
    if result.finding is not None:
        result.finding = reduce(result.finding)
    result.versions = {"ai-edge-litert": version("ai-edge-litert")}
    return result
