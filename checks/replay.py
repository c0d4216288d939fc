"""Replaying counterexamples, and exporting one as a standalone pytest file."""
from __future__ import annotations

import os

import attrs

from zcspec.checks.counterexample import Counterexample
from zcspec.checks.errors import CounterexampleError
from zcspec.checks.proofs.cases import CLAIMS, claimed_proofs, claims_of
from zcspec.checks.scenario import evaluate, observe

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")


@attrs.frozen
class ReplayResult:
    counterexample: Counterexample
    still_fails: bool
    violations: tuple = ()
    error: str | None = None

    @property
    def as_expected(self) -> bool:
        """Whether the corpus is satisfied: fixed bugs stay fixed, documented hazards stay detected."""
        return self.still_fails == (self.counterexample.expect == "violation")

    def summary(self) -> str:
        cx = self.counterexample
        if self.error:
            state = f"still fails: the scenario raised {self.error}"
        elif self.still_fails:
            state = "still fails:\n" + "\n".join(f"  {v}" for v in self.violations)
        elif cx.is_proof:
            state = "passes now (proved)"
        elif cx.is_crash:
            state = "passes now (it no longer raises, and every invariant holds)"
        else:
            state = "passes now (the invariant holds)"
        hazard = " [documented hazard: expected to keep failing]" if cx.expect == "violation" else ""
        return f"{cx.invariant} on a {cx.scenario.kind} scenario of {len(cx.scenario.graph.nodes)} nodes{hazard}: {state}"


def replay(cx: Counterexample) -> ReplayResult:
    """Re-run the scenario on the code as it is now and re-check the counterexample's invariant
    (for a proof's pseudo-claim id, re-run that proof: it passes only when proved; for a crash, every
    invariant: it passes once the scenario no longer raises and none is violated)."""
    if cx.is_proof:
        return _replay_proof(cx)
    try:
        reports = evaluate(cx.scenario, None if cx.is_crash else (cx.invariant,))
    except Exception as e:  # a crash of the code under test is a failure to report, not to hide
        return ReplayResult(cx, True, (), f"{type(e).__name__}: {e}")
    violations = tuple(v for r in reports for v in r.violations)
    return ReplayResult(cx, bool(violations), violations)


def _replay_proof(cx: Counterexample) -> ReplayResult:
    """The proof ``cx.invariant`` names, on the scenario: every result not proved (refuted, or unknown:
    never a pass) is listed; a crash is reported as the error."""
    if cx.invariant not in CLAIMS:
        raise CounterexampleError(f"counterexample names proof {cx.invariant!r}; known proofs: {', '.join(CLAIMS)}")
    if cx.invariant not in claims_of(cx.scenario):
        raise CounterexampleError(f"a {cx.scenario.kind} scenario with these options gets no {cx.invariant} proof "
                                  "(checks/proofs/cases.py claims_of)")
    try:
        proofs = claimed_proofs(cx.scenario, observe(cx.scenario), (cx.invariant,))
    except Exception as e:  # a crash of the code under test (or of the proof) is reported, not hidden
        return ReplayResult(cx, True, (), f"{type(e).__name__}: {e}")
    failed = tuple(f"{claim} {p.status}: {p.kind or ''} {p.pair or ''} {p.reason}".replace("  ", " ")
                   for claim, p in proofs if not p.passed)
    return ReplayResult(cx, bool(failed), failed)


def corpus_files(folder: str = CORPUS) -> list[str]:
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".json"))


def export_pytest(cx: Counterexample, path: str) -> None:
    """A standalone pytest file: it passes when the invariant holds on the scenario, fails otherwise
    (for a documented hazard, it passes while the hazard is still detected)."""
    name = cx.invariant.lower().replace("-", "_")
    expect_fail = cx.expect == "violation"
    message = str(cx.violation.get("message", "")).replace('"' * 3, "'" * 3)
    body = "\n".join([
        f'"""Counterexample for {cx.invariant}, exported by zcspec {cx.zcspec}.',
        "",
        message,
        '"""',
        "import json",
        "",
        "from zcspec.checks.counterexample import Counterexample",
        "from zcspec.checks.replay import replay",
        "",
        f"COUNTEREXAMPLE = json.loads({cx.to_json()!r})",
        "",
        "",
        f"def test_{name}():",
        "    result = replay(Counterexample.from_dict(COUNTEREXAMPLE))",
        f"    assert result.still_fails is {expect_fail}, result.summary()",
        "",
    ])
    with open(path, "w", encoding="utf-8") as f:
        f.write(body)
