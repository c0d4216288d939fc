"""The recorded import outcome of every ONNX node test of the claimed ops, which verify holds the front end to.

A node test's import ends one of three ways: it imports as it is, it imports once some inputs are
frozen to their test values (the front end asked for them: an operand the static IR needs is computed
from them), or it is refused naming a feature the op table lists as unsupported. Verify used to accept
any such refusal and any freezing, so a front end that refused more, or asked for more values, than
before passed it. The record (``imports.json`` beside this module, reviewed like any source) states,
per case, the expected refusal feature or the expected frozen inputs; a case not listed imports as it
is. ``differences`` names every case whose outcome differs from the record: a new or different
refusal, a refusal gone (the record is stale: regenerate it with ``zcspec conformance --record``),
a different set of frozen inputs.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

from zcspec.checks.errors import UsageError

RECORD = Path(__file__).with_name("imports.json")


def outcome(refused: str | None, frozen) -> dict:
    """One case's outcome as the record writes it (``{}``: imports as it is)."""
    out: dict = {}
    if refused:
        out["refused"] = refused
    if frozen:
        out["frozen"] = sorted(frozen)
    return out


def observed(tests) -> dict[str, dict]:
    """Case name -> outcome of a ``NodeTests`` (checks/onnx_node_cases.py), trivial outcomes left out."""
    out = {}
    for name, feature in tests.refused_features:
        out[name] = outcome(feature, ())
    for name, inputs in tests.frozen:
        if inputs:
            out[name] = {**out.get(name, {}), **outcome(None, inputs)}
    return dict(sorted(out.items()))


def render(record: Mapping[str, dict]) -> str:
    """The record file's text."""
    return json.dumps({"cases": dict(sorted(record.items()))}, indent=1, sort_keys=True) + "\n"


def load_record(path: Path = RECORD) -> dict[str, dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read the node tests' import record: {e}", file=str(path)) from e
    cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(cases, dict) or not all(isinstance(v, dict) for v in cases.values()):
        raise UsageError('expected {"cases": {name: {"refused"?: feature, "frozen"?: [input, ...]}}}', file=str(path))
    return cases


def differences(seen: Mapping[str, dict], record: Mapping[str, dict], names) -> list[tuple[str, str]]:
    """(case name, what differs) for every case of ``names`` whose observed outcome is not the recorded one."""
    out = []
    for name in sorted(names):
        got, want = seen.get(name, {}), record.get(name, {})
        if got == want:
            continue
        if want.get("refused") != got.get("refused"):
            if got.get("refused") and not want.get("refused"):
                why = f"refused naming {got['refused']!r}; the record expects it to import"
            elif want.get("refused") and not got.get("refused"):
                why = (f"imports now; the record expects a refusal naming {want['refused']!r} "
                       f"(if that is an improvement, regenerate the record: zcspec conformance --record)")
            else:
                why = f"refused naming {got['refused']!r}; the record expects {want['refused']!r}"
        else:
            why = (f"imports with inputs {got.get('frozen', [])} frozen to their test values; the record "
                   f"expects {want.get('frozen', [])}")
        out.append((name, why))
    return out
