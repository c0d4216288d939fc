"""``zcspec schema``: print the JSON Schema of the plan file format, ``zcspec-plan`` version 1.

    zcspec schema > zcspec-plan-1.json    # then validate a planner's output with any JSON Schema tool

The schema is spec/plan_schema.json, shipped as package data of ``zcspec.spec``. It mirrors the one
strict reader (spec/observables/plan_contract.py) and says, for every key, its unit and the claims
that read it; docs/plan-format.md is the same contract in prose. A plan the schema accepts can still
be bad input for what a schema cannot say (a name that is not planned, a lifetime outside
``order``): ``zcspec check`` is the judge.
"""
from __future__ import annotations

from importlib import resources

SCHEMA_FILE = "plan_schema.json"


def plan_schema_text() -> str:
    """The schema's JSON text exactly as shipped (a missing file is a broken install and raises)."""
    return resources.files("zcspec.spec").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


def configure(parser) -> None:
    """No options: there is one schema, and the command prints it."""


def run(args) -> int:
    print(plan_schema_text(), end="")
    return 0
