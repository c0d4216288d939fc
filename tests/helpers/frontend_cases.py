"""Run verify's front-end cases (checks/frontend_cases.py, checks/graph_json_cases.py) the way
``zcspec verify`` does, optionally only some of them, and say what each one reported.

``run_cases(monkeypatch, *names)``: the cases called ``names`` (all when none are given) through
``checks.verify_onnx_cases.check_frontend_cases``; returns :class:`Outcome`: ``errors`` (case label -> why: a refusal
that is not the expected one, an import that had to refuse, a crash) and ``findings`` (case label ->
the invariant ids of its violations: an imported model whose runs break an invariant).
"""
from __future__ import annotations

import attrs

from zcspec.checks import verify_onnx_cases
from zcspec.checks.frontend_cases import frontend_cases
from zcspec.checks.verify import VerifyConfig, VerifyResult


@attrs.frozen
class Outcome:
    errors: dict
    findings: dict

    def caught(self, name: str) -> str:
        """What the case ``name`` reported (its error, or its findings' invariant ids); '' when nothing."""
        label = f"front-end case {name}"
        found = sorted({i for case, ids in self.findings.items() if case.startswith(label + " ") for i in ids})
        return self.errors.get(label, "") or ", ".join(found)

    def outputs_wrong(self, name: str) -> bool:
        """Whether the case ``name`` imported and its outputs broke EXEC-ORACLE (differ from onnxruntime's
        or the reference's)."""
        return "EXEC-ORACLE" in self.caught(name).split(", ")


def run_cases(monkeypatch, *names: str) -> Outcome:
    cases = frontend_cases()
    if names:
        known = {c.name for c in cases}
        assert set(names) <= known, sorted(set(names) - known)
        chosen = tuple(c for c in cases if c.name in names)
        monkeypatch.setattr(verify_onnx_cases, "frontend_cases", lambda: chosen)
    result = VerifyResult()
    verify_onnx_cases.check_frontend_cases(result, VerifyConfig(models=()).soc)
    findings: dict = {}
    for f in result.findings:
        findings.setdefault(f.case, set()).add(f.violation.invariant_id)
    return Outcome(dict(result.errors), findings)
