"""Counterexample files: the input that reproduces a failure, the invariant, the violation, the version.

Format (JSON, documented in docs/counterexamples.md)::

    {"format": "zcspec-counterexample", "version": 1, "zcspec": "0.1.0",
     "invariant": "LAYOUT-NO-OVERLAP",
     "violation": {"culprit": ..., "message": ..., "values": {...}},
     "scenario": {"kind": "plan", "graph": <graph JSON>, "compile": {...}, "runtime": {...}},
     "expect": "fixed" | "violation",
     "found_with": null | "<fault variant>", "note": "..."}

``expect`` says what the corpus requires on replay: ``fixed`` (the usual: the
bug was fixed and must stay fixed) or ``violation`` (a documented hazard that
the checker must keep detecting, such as GE's unchecked AllocModelOutTensor).

A case that a Z3 proof refuted (the random campaign runs them, checks/campaign.py) has no
invariant of the spec to name: its ``invariant`` is the proof's pseudo-claim id, ``PROOF-`` and
the proof kind (``PROOF-LAYOUT``, ``PROOF-V1-REFRESH``: checks/proofs/cases.py), and its
``violation`` the proof's verdict (``proof_violation``); ``zcspec replay`` re-runs that proof.

A case on which the code under test raised (a crash, not a spec verdict; ``zcspec explore`` shrinks the
case of a crashed campaign) names no invariant either: its ``invariant`` is ``CRASH`` and its
``violation`` the exception (``crash_violation``: its type, message and the innermost frame);
``zcspec replay`` re-runs every check on the scenario and fails while it still raises.
"""
from __future__ import annotations

import json
import traceback
from importlib import metadata

import attrs

from zcspec.checks.errors import CounterexampleError
from zcspec.checks.scenario import Scenario
from zcspec.impl.platform.errors import BadInput

FORMAT = "zcspec-counterexample"
VERSION = 1
EXPECTS = ("fixed", "violation")
PROOF_PREFIX = "PROOF-"
CRASH = "CRASH"


def crash_violation(error: BaseException) -> dict:
    """The ``violation`` of a case on which the code under test raised ``error``: its type, its message and
    where it was raised (the innermost frame of its traceback)."""
    frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    where = f"{frame.filename}:{frame.lineno} in {frame.name}" if frame else ""
    return {"culprit": type(error).__name__, "message": str(error)[:2000], "values": {"raised_at": where}}


def proof_violation(claim: str, proof) -> dict:
    """The ``violation`` of a counterexample that proof result ``proof`` (of claim id ``claim``)
    refuted: the broken claim's kind and the slot or tensors it names, Z3's counterexample."""
    pair = [str(p) for p in (proof.pair or ()) if p]
    return {"culprit": f"{proof.kind} " + ", ".join(repr(p) for p in pair) if pair else str(proof.kind),
            "message": f"{claim} {proof.status}: {proof.reason}",
            "values": {"status": proof.status, "kind": proof.kind, "pair": pair,
                       "broken": [str(v) for v in getattr(proof, "violations", ())]}}


def zcspec_version() -> str:
    try:
        return metadata.version("zcspec")
    except metadata.PackageNotFoundError:
        return "unknown"


@attrs.frozen
class Counterexample:
    scenario: Scenario
    invariant: str
    violation: dict
    expect: str = attrs.field(default="fixed", validator=attrs.validators.in_(EXPECTS))
    found_with: str | None = None
    note: str = ""
    zcspec: str = attrs.field(factory=zcspec_version)

    @property
    def is_crash(self) -> bool:
        """Whether the code under test raised on the scenario (no invariant was judged)."""
        return self.invariant == CRASH

    @property
    def is_proof(self) -> bool:
        """Whether a Z3 proof, not an invariant, refuted the scenario (``invariant`` is its claim id)."""
        return self.invariant.startswith(PROOF_PREFIX)

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "zcspec": self.zcspec, "invariant": self.invariant,
                "violation": self.violation, "scenario": self.scenario.to_dict(), "expect": self.expect,
                "found_with": self.found_with, "note": self.note}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=True, default=str)

    @classmethod
    def from_dict(cls, d: dict, *, file: str = "") -> "Counterexample":
        where = file or "counterexample"
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise CounterexampleError(f"{where}: not a zcspec counterexample (format must be {FORMAT!r})")
        if d.get("version") != VERSION:
            raise CounterexampleError(f"{where}: counterexample version {d.get('version')!r} is not supported")
        try:
            return cls(Scenario.from_dict(d["scenario"]), d["invariant"], dict(d["violation"]),
                       d.get("expect", "fixed"), d.get("found_with"), d.get("note", ""), d.get("zcspec", "unknown"))
        except (KeyError, TypeError, ValueError, BadInput) as e:
            raise CounterexampleError(f"{where}: malformed counterexample: {type(e).__name__}: {e}") from e

    @classmethod
    def load(cls, path: str) -> "Counterexample":
        try:
            with open(path, encoding="utf-8") as f:
                return cls.from_dict(json.load(f), file=path)
        except OSError as e:
            raise CounterexampleError(f"{path}: cannot read: {e.strerror}") from e
        except json.JSONDecodeError as e:
            raise CounterexampleError(f"{path}: not JSON: {e}") from e

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json() + "\n")
