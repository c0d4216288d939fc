"""The other compilers' programs zcspec keeps, as cases: each plan, and what checking it must show.

A case is a saved artefact under checks/foreign/programs/PLANNER/NAME/ with its ``program.json``
(what the program is, ``expect``: ``clean`` or the id of the claim a known bug of that compiler
breaks, and the bug's ``issue``; ``also``: claims the bug breaks as a consequence of that one, as
LAYOUT-LOWER-BOUND does where two live tensors share a storage sized for one). ``zcspec verify``
checks every case: a clean program must break no claim; a known bug must be found, by its claims
and no other (checks/verify.py).
"""
from __future__ import annotations

import json
from pathlib import Path

import attrs

from zcspec.checks.foreign import tvm_relax, xla_dump
from zcspec.checks.foreign.iree_mlir import read_iree_dump
from zcspec.checks.foreign.pte import read_pte
from zcspec.checks.foreign.tflite import load_record, read_tflite
from zcspec.checks.foreign.plan_file import ImportedPlan
from zcspec.spec.check import Report

PROGRAMS = Path(__file__).resolve().parent / "programs"


@attrs.frozen
class ForeignCase:
    planner: str
    name: str
    what: str
    expect: str          # "clean", or the claim the plan breaks
    issue: str
    folder: Path
    also: tuple[str, ...] = ()   # claims the known bug also breaks, as a consequence of ``expect``

    @property
    def label(self) -> str:
        return f"{self.planner}:{self.name}"

    def imported(self) -> list[ImportedPlan]:
        """The program's plans: one, or one per execution path (ExecuTorch's conditionals), or one per
        packed function (IREE)."""
        if self.planner == "xla":
            module = xla_dump.find_modules(self.folder)[0]
            return [ImportedPlan("xla", str(self.folder), self.name, xla_dump.read_module(module))]
        if self.planner == "executorch":
            _, paths = read_pte(self.folder / "program.pte")
            return [ImportedPlan("executorch", str(self.folder / "program.pte"),
                                 f"{self.name} [{label}]" if label else self.name, plan) for label, plan in paths]
        if self.planner == "litert":
            model = self.folder / "model.tflite"
            return [ImportedPlan("litert", str(model), self.name,
                                 read_tflite(model, load_record(str(self.folder / "arena.json"))))]
        if self.planner == "iree":
            plans = read_iree_dump(self.folder / "layout.txt")
            return [ImportedPlan("iree", str(self.folder / "layout.txt"),
                                 f"{self.name} [@{function}]" if len(plans) > 1 else self.name, plan)
                    for function, plan in plans]
        if self.planner == "tvm":
            plans = tvm_relax.read_relax(self.folder / "relax.txt")
            return [ImportedPlan("tvm", str(self.folder / "relax.txt"), title, p.plan)
                    for title, p in zip(tvm_relax.titles(plans, self.name), plans)]
        raise ValueError(f"no reader for planner {self.planner!r}")


def foreign_cases(root: Path = PROGRAMS) -> list[ForeignCase]:
    """Every kept program, by planner and name."""
    return [foreign_case(meta) for meta in sorted(root.glob("*/*/program.json"))]


def foreign_case(meta: Path) -> ForeignCase:
    """The kept program whose ``program.json`` is ``meta`` (in ``PLANNER/NAME/``)."""
    data = json.loads(meta.read_text())
    return ForeignCase(meta.parent.parent.name, meta.parent.name, data.get("what", ""),
                       data.get("expect", "clean"), data.get("issue", ""), meta.parent,
                       tuple(data.get("also", ())))


def is_kept_program(data) -> bool:
    """Whether parsed JSON is a kept program's ``program.json``: it says what checking it must show."""
    return isinstance(data, dict) and isinstance(data.get("expect"), str) and "what" in data


def problems(case: ForeignCase, reports: Report | list[Report]) -> list[str]:
    """What is wrong with a case's reports (one per plan of the program): a clean program's violation,
    a known bug not found on any path (or found by another claim)."""
    reports = [reports] if isinstance(reports, Report) else list(reports)
    violated = {i for r in reports for i in r.violated()}
    if case.expect == "clean":
        return [f"{v.invariant_id}: {v.culprit}: {v.message}" for r in reports for v in r.violations]
    out = [f"the known bug {case.issue or expected} is no longer found: {expected} holds"
           for expected in (case.expect, *case.also) if expected not in violated]
    out += [f"{i} is also violated (expected only {', '.join((case.expect, *case.also))})"
            for i in sorted(violated - {case.expect, *case.also})]
    return out
