"""The plan file: what ``zcspec import`` writes and ``zcspec check``, ``zcspec replay`` and
``zcspec.check_plan`` read.

The file is the ``zcspec-plan`` format (spec/observables/plan_contract.py, docs/plan-format.md):
the plan observation's JSON with the provenance keys ``planner`` (``xla``, ...), ``source`` (the
artefact read) and ``program`` (the module or method inside it). Reading is strict: a key the
format does not have is bad input naming its path.
"""
from __future__ import annotations

import json
import os

import attrs

from zcspec.checks.errors import UsageError
from zcspec.spec.errors import SpecError
from zcspec.spec.observables.plan import PlanObservation
from zcspec.spec.observables.plan_contract import Provenance, plan_to_contract, read_contract

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
        return " ".join(p for p in (self.planner, self.program) if p)


def to_json(imported: ImportedPlan) -> str:
    """The file's text: the format's JSON, provenance first (keys in the format's order)."""
    provenance = Provenance(planner=imported.planner or None, source=imported.source or None,
                            program=imported.program or None)
    return json.dumps(plan_to_contract(imported.plan, provenance), indent=1)


def write(imported: ImportedPlan, path: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(to_json(imported) + "\n")
    except OSError as e:
        raise UsageError(f"cannot be written: {e.strerror or e}", file=path) from e


def read(path: str) -> ImportedPlan:
    """The plan in the file at ``path`` with its provenance (a plan without ``program`` is titled by
    the file's name); UsageError or the spec's ObservationFormatError naming the file otherwise."""
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
        plan, provenance = read_contract(data)
    except SpecError as e:
        raise (e.in_file(path) if hasattr(e, "in_file") else UsageError(str(e), file=path)) from None
    return ImportedPlan(provenance.planner or "", provenance.source or "",
                        provenance.program or os.path.basename(path), plan)
