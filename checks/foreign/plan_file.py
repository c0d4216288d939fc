"""The plan observation as a file: what ``zcspec import`` writes and ``zcspec check`` reads.

The file is the plan observation's JSON (spec/observables/plan.py, the general form) with three
keys of the importer's own: ``planner`` (``xla``, ...), ``source`` (the artefact read) and ``program``
(the module or method inside it). The reader ignores keys it does not know at the top level, as
for every plan contract, and parses the rest strictly.
"""
from __future__ import annotations

import json
import os

import attrs

from zcspec.checks.errors import UsageError
from zcspec.spec.errors import SpecError
from zcspec.spec.observables import to_data
from zcspec.spec.observables.plan import PlanObservation, plan_from_contract

MAX_PLAN_BYTES = 512 << 20


@attrs.frozen
class ImportedPlan:
    """A plan read from another compiler's artefact, with where it came from."""

    planner: str
    source: str
    program: str
    plan: PlanObservation = attrs.field(repr=False)

    @property
    def title(self) -> str:
        return f"{self.planner} {self.program}"


def to_json(imported: ImportedPlan) -> str:
    data = {"planner": imported.planner, "source": imported.source, "program": imported.program,
            **to_data(imported.plan)}
    return json.dumps(data, indent=1, sort_keys=True)


def write(imported: ImportedPlan, path: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(to_json(imported) + "\n")
    except OSError as e:
        raise UsageError(f"cannot be written: {e.strerror or e}", file=path) from e


def read(path: str) -> ImportedPlan:
    """An imported plan (or any plan contract: then planner and program are empty) from ``path``;
    UsageError or the spec's ObservationFormatError naming the file otherwise."""
    try:
        size = os.path.getsize(path)
        if size > MAX_PLAN_BYTES:
            raise UsageError(f"is {size} bytes, more than the {MAX_PLAN_BYTES} a plan file may have", file=path)
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise UsageError(f"cannot be read: {e.strerror or e}", file=path) from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"is not JSON: {e}", file=path) from e
    if not isinstance(data, dict):
        raise UsageError(f"holds a JSON {type(data).__name__}, not a plan object", file=path)
    try:
        plan = plan_from_contract(data)
    except SpecError as e:
        raise (e.in_file(path) if hasattr(e, "in_file") else UsageError(str(e), file=path)) from None
    extra = {k: data.get(k, "") for k in ("planner", "source", "program")}
    return ImportedPlan(str(extra["planner"]), str(extra["source"]), str(extra["program"] or os.path.basename(path)),
                        plan)
