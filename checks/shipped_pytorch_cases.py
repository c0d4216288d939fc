"""The pytorch-operator and pytorch-converted models shipped in the installed onnx package, as verify's cases.

ONNX's node tests are one node each, at the op's newest opset; the models under
``onnx/backend/test/data/pytorch-*`` are what pytorch exported years ago: opset 6, element-wise
ops with ``broadcast=1``/``axis`` attributes (rewritten as numpy broadcasting by
frontend/legacy_broadcast.py), Constant nodes, small chains of ops. Nothing else verify runs has
those forms, so the opset 1-6 rewrite could break with verify passing.

``shipped_cases()`` gives each shipped model whose ops are all in the op table (or Constant nodes,
which fold into weights) as a conformance :class:`Case`: its first data set's inputs, its outputs
as the expected values, ONNX's backend tolerance (rtol 1e-3, atol 1e-7). ``judge(case)`` runs it
as ``zcspec conformance`` runs a node test (checks/conformance/runner.py ``run_case``: imported,
compiled, through the model file, on runtime v1 and v2) and says what is wrong: ``None`` when both
runtimes gave the shipped outputs, else an :class:`Outcome` with the error kind verify records.
Every shipped case of claimed ops passes today; ``KNOWN_REFUSED`` (name -> why) would list one
refused for a reason of its own (tests/frontend/test_legacy_broadcast.py holds them as strict
xfails, and verify requires them still refused).
"""
from __future__ import annotations

import functools
import glob
import os

import attrs
import onnx
from onnx import numpy_helper

from zcspec.checks.conformance.cases import Case
from zcspec.checks.conformance.runner import Result, run_case
from zcspec.impl.compiler import ops

DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
KINDS = ("pytorch-operator", "pytorch-converted")
FOLDED = {"Constant"}  # not in the op table, but folds into a weight
RTOL, ATOL = 1e-3, 1e-7  # ONNX's backend runner's defaults, which the shipped outputs are held to
# Shipped cases refused for a reason other than opset 1-6 broadcasting: name -> why.
KNOWN_REFUSED: dict[str, str] = {}


def label(name: str) -> str:
    return f"shipped pytorch case {name}"


def _tensors(folder: str, kind: str) -> tuple:
    return tuple(numpy_helper.to_array(onnx.load_tensor(p))
                 for p in sorted(glob.glob(os.path.join(folder, f"{kind}_*.pb")),
                                 key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0])))


@functools.lru_cache(maxsize=1)
def shipped_cases() -> tuple[Case, ...]:
    """Every shipped pytorch model of claimed ops (see the module doc), sorted by its folder."""
    out = []
    for folder in sorted(p for kind in KINDS for p in glob.glob(os.path.join(DATA, kind, "test_*"))):
        model = onnx.load(os.path.join(folder, "model.onnx"))
        op_types = tuple(sorted({n.op_type for n in model.graph.node}))
        if not all(op in ops.OPS or op in FOLDED for op in op_types):
            continue
        data = sorted(glob.glob(os.path.join(folder, "test_data_set_*")))[0]
        out.append(Case(os.path.basename(folder), model, _tensors(data, "input"), _tensors(data, "output"),
                        RTOL, ATOL, op_types))
    return tuple(out)


@attrs.frozen
class Outcome:
    """What is wrong with a shipped case's run: ``kind`` is one of verify's error kinds (a crash of the
    code under test, impl refusing a model of claimed ops, or a check: wrong outputs, or a known refusal
    that now imports), ``message`` what the report prints after the case's label."""

    kind: str
    message: str


def judge(case: Case, soc: str = "ascend910b") -> tuple[Result, Outcome | None]:
    """``case`` run as ``zcspec conformance`` runs it, and what is wrong with the result (None: nothing)."""
    r = run_case(case, soc=soc)
    where = f"{r.stage}: {r.detail}"
    if case.name in KNOWN_REFUSED:
        if r.status == "refused":
            return r, None
        return r, Outcome("check", f"expected refused ({KNOWN_REFUSED[case.name]}), got {r.status} ({where})")
    if r.status == "pass":
        return r, None
    if r.status == "refused" or r.detail.startswith("refused without naming"):
        return r, Outcome("refusal", f"refused at {where}")
    # run_case's detail is mismatch()'s text ("output ...") for wrong outputs, else the exception raised
    if r.stage in ("v1", "v2") and r.detail.startswith("output "):
        return r, Outcome("check", f"{r.stage} differs from the shipped outputs: {r.detail}")
    return r, Outcome("crash", f"at {where}")
