"""Kept plan files as regressions: ``zcspec replay PLAN.json`` and ``--export-pytest`` for any planner's plan.

A plan file (docs/plan-format.md) is its own reproduction: re-checking it needs nothing but the
file. ``zcspec replay`` re-judges it by every claim (exit 1 while it breaks one); the exported
pytest file embeds the plan and calls ``zcspec.assert_plan_ok``, so it passes once the plan holds
every claim, and fails with the report while it does not.
"""
from __future__ import annotations

import re

from zcspec.checks.errors import UsageError
from zcspec.checks.foreign.plan_file import ImportedPlan, to_json
from zcspec.spec.observables.plan_contract import FORMAT


def is_plan_file(data) -> bool:
    """Whether parsed JSON claims to be a plan: it names the format, or has a plan's two first keys."""
    return isinstance(data, dict) and (data.get("format") == FORMAT or {"order", "tensors"} <= set(data))


def export_plan_pytest(kept: ImportedPlan, path: str, version: str) -> None:
    """Write a standalone pytest file for the plan ``kept`` (see the module doc)."""
    name = re.sub(r"\W+", "_", kept.title.lower()).strip("_") or "plan"
    body = "\n".join([
        f'"""Regression test for the plan {kept.title!r}, exported by zcspec {version}.',
        "",
        "It passes when the plan holds every claim that applies to it; while it does not, the failure",
        "message is zcspec's report (the violations naming tensors, steps and bytes).",
        '"""',
        "import json",
        "",
        "import zcspec",
        "",
        f"PLAN = json.loads({to_json(kept)!r})",
        "",
        "",
        f"def test_plan_{name}():",
        "    zcspec.assert_plan_ok(PLAN)",
        "",
    ])
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(body)
    except OSError as e:
        raise UsageError(f"cannot be written: {e.strerror or e}", file=path) from e

