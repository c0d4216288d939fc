"""How ``zcspec verify`` failed on a mutant: which claims, the output oracle only, a crash, a refusal, a
check of verify's own, the exercise floor, or the time limit.

``zcspec verify --artefacts DIR`` writes ``DIR/verdict.json`` (checks/verify_artefacts.py): the claims
its findings broke, the campaign's counterexample, the Z3 proofs not proved, the corpus regressions,
each error of the run with its kind (``crash``: the code under test raised; ``refusal``: it refused its
own artefact or a valid input; ``check``: one of verify's checks that is not a claim, such as the ACL
refusal cases), the valid calls that failed, the claims below the exercise floor. ``Kill.of`` reads it;
a run that wrote none (killed at the time limit, verify itself died, a refusal that ended the run) is
attributed from its exit alone.

A kill is ``silent`` when the code under test neither crashed, hung nor refused its own artefacts on
verify's cases: a bug it does not announce, which only a claim can catch. Its primary ``how`` puts the
announced failures first (timeout, crash, refusal), then the claims (other than the oracle), the
oracle only, verify's other checks, the floor.
"""
from __future__ import annotations

import json
from pathlib import Path

import attrs

# The claims that compare outputs with a reference (onnxruntime / onnx.reference, and the device's
# kernels against onnxruntime): the right judge of a kernel's arithmetic, not of memory decisions.
ORACLE_CLAIMS = ("EXEC-ORACLE", "DEVICE-KERNEL-ORACLE")
# verify's phase of GE's own unit tests (checks/cases/ge): the numbers GE's tests fix for its decisions.
GE_CASE = "ge-case"
HOWS = ("timeout", "crash", "refusal", "claims", "oracle", "check", "floor", "unknown")


@attrs.frozen
class Kill:
    """What one verify run that failed said (``how`` is "" for a run that passed)."""

    how: str
    claims: tuple[str, ...] = ()    # claims other than the oracle (PROOF-... for a Z3 proof refuted)
    oracle: tuple[str, ...] = ()    # ORACLE_CLAIMS violated
    crashed: bool = False
    refused: bool = False
    timed_out: bool = False
    checks: tuple[str, ...] = ()    # verify's checks that are not claims, by family
    floor: tuple[str, ...] = ()     # claims below the exercise floor
    first: str = ""                 # the first error or finding, for a reader

    @property
    def silent(self) -> bool:
        return not (self.crashed or self.refused or self.timed_out)

    @property
    def by_claims(self) -> bool:
        return bool(self.claims or self.oracle)

    @property
    def by_decisions(self) -> bool:
        """A claim or one of GE's own unit-test cases (a number GE's tests fix) failed."""
        return self.by_claims or GE_CASE in self.checks

    def short(self) -> str:
        if not self.how:
            return "survived"
        names = {"claims": ", ".join(self.claims), "oracle": "only " + ", ".join(self.oracle),
                 "check": ", ".join(self.checks), "floor": "below the floor: " + ", ".join(self.floor)}
        text = names.get(self.how) or self.first
        also = [w for w, on in (("crash", self.crashed and self.how != "crash"),
                                ("refusal", self.refused and self.how != "refusal"),
                                ("claims " + ", ".join(self.claims), self.claims and self.how != "claims"),
                                ("oracle", self.oracle and self.how not in ("claims", "oracle"))) if on]
        return f"{self.how}" + (f": {_clip(text)}" if text else "") + (f" (also {'; '.join(also)})" if also else "")

    def to_json(self) -> dict:
        return {**attrs.asdict(self), "silent": self.silent}

    @classmethod
    def of(cls, run, verdict: dict | None) -> "Kill":
        """The kill of a verify ``run`` (benchmarks/mutation/runs.Run) given its ``verdict.json`` (None
        when the run wrote none)."""
        if not run.killed:
            return cls("")
        if run.kind == "timeout":
            return cls("timeout", timed_out=True, first=run.reason)
        if verdict is None:
            how = {"crash": "crash", "bad-input": "refusal"}.get(run.kind, "unknown")
            return cls(how, crashed=how == "crash", refused=how == "refusal", first=run.reason)
        return _from_verdict(verdict, run.reason)


def read_verdict(folder: Path) -> dict | None:
    path = Path(folder) / "verdict.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _from_verdict(v: dict, reason: str) -> Kill:
    violated = set(v["claims"]) | ({v["counterexample"]} if v["counterexample"] else set())
    violated |= {r["claim"] for r in v["corpus_regressed"] if not r["error"]}
    violated |= {f"PROOF-{p['kind'] or 'layout'}".upper() for p in v["proofs_failed"] if p["status"] == "refuted"}
    oracle = tuple(sorted(violated & set(ORACLE_CLAIMS)))
    claims = tuple(sorted(violated - set(ORACLE_CLAIMS)))
    kinds = v["error_kinds"]
    crashed = bool(kinds.get("crash")) or any(r["error"] for r in v["corpus_regressed"])
    refused = bool(kinds.get("refusal")) or v["failed_call_count"] > 0
    checks = sorted({_family(e) for e in v["errors"] if e["kind"] == "check"}
                    | ({"z3-unknown"} if any(p["status"] == "unknown" for p in v["proofs_failed"]) else set()))
    floor = tuple(v["below_floor"])
    for how, on in (("crash", crashed), ("refusal", refused), ("claims", claims), ("oracle", oracle),
                    ("check", checks), ("floor", floor)):
        if on:
            break
    else:
        how = "unknown"
    first = next((f"{e['kind']} in {e['case']}: {e['message']}" for e in v["errors"] if e["kind"] == how), "")
    if how == "refusal" and not first and v["failed_calls"]:
        first = f"failed valid call {v['failed_calls'][0]['run']}: {v['failed_calls'][0]['reason']}"
    return Kill(how, claims, oracle, crashed, refused, False, tuple(checks), floor, first or reason)


def _family(error: dict) -> str:
    """Which of verify's non-claim checks an error of kind ``check`` comes from."""
    case, message = error["case"], error["message"]
    if message.startswith("output not judged"):
        return "node-test-unjudged"
    for prefix, family in (("ACL refusal", "acl-refusal"), ("packing case", "packing-case"),
                           ("foreign", "foreign-program"), ("front-end case", "front-end-case"),
                           ("plan-size record", "plan-size-record")):
        if case.startswith(prefix):
            return family
    if " TEST_F " in case and "(checks/cases/ge/" in case:   # checks/cases/ge/catalogue.py GeCase.label
        return GE_CASE
    return "import-record" if case.endswith("[import]") else "other-check"


def _clip(text: str, width: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."
