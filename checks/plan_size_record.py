"""The plan-size record: the region sizes the planner reached on verify's zoo cases, committed, so that a plan
that stays safe but grows (or shrinks) is a failed check of ``zcspec verify`` and not a silent change.

The claims judge whether a plan is safe and, where GE's rule fixes a number, tight; nothing in them says
how small zcspec's own packer (the ``compact`` strategy) gets a plan, and a search budget turned down
leaves every claim holding while densenet121's feature map grows by 5%. GE's strategy follows GE's rules,
whose numbers GE's ported unit tests fix (checks/cases/ge) only on GE's small graphs. This record holds
both strategies to the sizes of the zoo's plans, the way checks/conformance/imports.json holds the front
end to its node-test imports: a size that differs from the record fails verify naming the case, the
region and both numbers (judged after every other phase: what a claim can name, it names first); after a deliberate change, print the new record with
``zcspec conformance --plan-record`` and commit it. It is judged only where it applies: the SoC it was
recorded on, the zoo's models as the zoo gives them (no ``--shape`` or ``--value``), the labels it holds.
"""
from __future__ import annotations

import json
from pathlib import Path

RECORD = Path(__file__).with_name("conformance") / "plan_sizes.json"
SOC = "ascend910b"
ABOUT = ("The region sizes (bytes) of the plans zcspec verify builds for its zoo cases on " + SOC + ", by case "
         "label; written by 'zcspec conformance --plan-record' (checks/plan_size_record.py).")


def load_record(path: Path = RECORD) -> dict[str, dict[str, int]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("soc") != SOC or not isinstance(data.get("plans"), dict):
        raise ValueError(f"{path}: not a plan-size record for {SOC} (keys 'soc', 'plans')")
    return data["plans"]


def render(sizes: dict[str, dict[str, int]]) -> str:
    """The record's text for ``sizes`` (case label -> region -> bytes), sorted, one case per line."""
    lines = [f"  {json.dumps(label)}: {json.dumps(dict(sorted(regions.items())))}"
             for label, regions in sorted(sizes.items())]
    return ('{\n  "about": ' + json.dumps(ABOUT) + ',\n  "soc": ' + json.dumps(SOC) + ',\n  "plans": {\n'
            + ",\n".join("  " + line for line in lines) + "\n  }\n}\n")


def differences(label: str, regions: dict[str, int], record: dict[str, dict[str, int]]) -> str | None:
    """Why ``regions`` (the plan of case ``label``) is not the recorded one; None when it is, or when the
    record holds no such case."""
    want = record.get(label)
    if want is None or dict(regions) == want:
        return None
    parts = [f"{r} {regions.get(r, 0)} bytes, recorded {want.get(r, 0)} "
             f"({'+' if regions.get(r, 0) > want.get(r, 0) else ''}{regions.get(r, 0) - want.get(r, 0)})"
             for r in sorted(set(regions) | set(want)) if regions.get(r, 0) != want.get(r, 0)]
    return (f"the plan's regions are not the recorded ones: {'; '.join(parts)} (checks/conformance/plan_sizes.json; "
            "after a deliberate change: zcspec conformance --plan-record)")
