"""A mutant's outcome and the campaign's scores, each with its 95% Wilson interval.

A mutant is ``verify-killed`` (verify failed on it; ``kill`` says how), ``missed`` (verify passed but
the artefacts it built differ from the unmutated run's, or they are identical and the test suite
kills it) or ``equivalent`` (verify passed, every artefact identical to the unmutated run's on
verify's cases, and the suite, when run, passed too: evidence, not a guess). The scores:

- overall: verify's kills among the non-equivalent mutants;
- silent: among the non-equivalent mutants whose code neither crashed, hung nor refused its own
  artefacts on verify's cases (every miss is silent), those a claim killed (the oracle's too);
- claims and GE's cases: as silent, counting also the kills of verify's phase of GE's own unit
  tests (checks/cases/ge: the numbers GE's tests fix for its decisions), issue 35's "decisions";
- claims alone: the non-equivalent mutants a claim killed, whatever else verify saw;
- claims but the oracle outside the kernels: among the silent mutants outside impl/device/kernels/
  (where comparing outputs is not the right judge), those a claim other than the oracle killed.
"""
from __future__ import annotations

import math
from collections import Counter

import attrs

from .attribution import HOWS, Kill
from .confirm import UNCONFIRMED
from .mutator import Mutation
from .runs import Run

KERNELS = "impl/device/kernels/"
Z95 = 1.959964


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``k`` successes in ``n`` trials, in percent ((0, 100) for n = 0)."""
    if n == 0:
        return 0.0, 100.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return 100 * max(0.0, centre - half), 100 * min(1.0, centre + half)


@attrs.frozen
class Rate:
    k: int
    n: int

    @property
    def percent(self) -> float | None:
        return 100.0 * self.k / self.n if self.n else None

    def text(self, noun: str = "") -> str:
        """``k of n[ noun] = p% (95% interval lo-hi%)``."""
        counted = f"{self.k} of {self.n}" + (f" {noun}" if noun else "")
        if not self.n:
            return counted + " (no score)"
        lo, hi = wilson(self.k, self.n)
        return f"{counted} = {self.percent:.1f}% (95% interval {lo:.1f}-{hi:.1f}%)"

    def to_json(self) -> dict:
        lo, hi = wilson(self.k, self.n)
        pct = self.percent
        return {"k": self.k, "n": self.n, "percent": None if pct is None else round(pct, 1),
                "wilson95": [round(lo, 1), round(hi, 1)]}


@attrs.frozen
class Outcome:
    mutation: Mutation
    verify: Run
    kill: Kill
    artefacts: str | None    # None: not compared (verify killed it); "": identical; else where they differ
    suite: Run | None        # None when not run

    @property
    def status(self) -> str:
        if self.verify.killed:
            return "verify-killed"
        if self.artefacts or self.artefacts is None or (self.suite is not None and self.suite.killed):
            return "missed"
        if self.suite is not None and self.suite.kind == UNCONFIRMED:
            return "undecided"   # the suite failed, but not because of the mutant (confirm.py): no evidence
        return "equivalent"

    @property
    def why_missed(self) -> str:
        if self.status != "missed":
            return ""
        if self.artefacts:
            return f"artefacts differ: {self.artefacts}"
        return "artefacts identical, the suite kills it" if self.artefacts == "" else "artefacts not compared"

    @property
    def seconds(self) -> float:
        return self.verify.seconds + (self.suite.seconds if self.suite else 0.0)

    def to_json(self) -> dict:
        return {"mutation": self.mutation.to_json(), "status": self.status, "seconds": round(self.seconds, 1),
                "kill": self.kill.to_json(), "artefacts": self.artefacts, "why_missed": self.why_missed,
                "verify": self.verify.to_json(), "suite": self.suite.to_json() if self.suite else None}


@attrs.frozen
class Score:
    killed: tuple[Outcome, ...]
    missed: tuple[Outcome, ...]
    equivalent: tuple[Outcome, ...]
    undecided: tuple[Outcome, ...] = ()

    @classmethod
    def of(cls, outcomes) -> "Score":
        return cls(*(tuple(o for o in outcomes if o.status == s)
                     for s in ("verify-killed", "missed", "equivalent", "undecided")))

    @property
    def judged(self) -> tuple[Outcome, ...]:
        return self.killed + self.missed

    @property
    def silent(self) -> tuple[Outcome, ...]:
        return tuple(o for o in self.judged if o.kill.silent)

    @property
    def overall(self) -> Rate:
        return Rate(len(self.killed), len(self.judged))

    @property
    def silent_claims(self) -> Rate:
        return Rate(sum(o.kill.by_claims for o in self.silent), len(self.silent))

    @property
    def silent_decisions(self) -> Rate:
        return Rate(sum(o.kill.by_decisions for o in self.silent), len(self.silent))

    @property
    def claims_alone(self) -> Rate:
        return Rate(sum(o.kill.by_claims for o in self.judged), len(self.judged))

    @property
    def claims_outside_kernels(self) -> Rate:
        outside = [o for o in self.silent if not o.mutation.path.startswith(KERNELS)]
        return Rate(sum(bool(o.kill.claims) for o in outside), len(outside))

    @property
    def percent(self) -> float | None:
        return self.overall.percent

    def hows(self) -> Counter:
        return Counter(o.kill.how for o in self.killed)

    def lines(self) -> list[str]:
        hows = self.hows()
        differ = sum(1 for o in self.missed if o.artefacts)
        return [
            f"verify kills {self.overall.text('non-equivalent mutants')}",
            f"  the claims (the oracle too) kill {self.silent_claims.text('silent mutants')} (silent: no crash, hang "
            f"or refusal on verify's cases)",
            f"  the claims and GE's own unit-test cases kill {self.silent_decisions.text('silent mutants')} "
            f"(checks/cases/ge: the numbers GE's tests fix)",
            f"  the claims alone kill {self.claims_alone.text()} (any claim violated, whatever else verify saw)",
            "  claims other than the oracle kill "
            + self.claims_outside_kernels.text(f"silent mutants outside {KERNELS}"),
            "how verify killed: " + ", ".join(f"{_HOW_NAMES[h]} {hows[h]}" for h in HOWS if hows[h] or h != "unknown"),
            f"verify's misses: {len(self.missed)} (artefacts differ {differ}, identical artefacts but the suite "
            f"kills {len(self.missed) - differ})",
            f"equivalent (every artefact identical, suite passes or not run): {len(self.equivalent)}",
        ] + ([f"undecided (artefacts identical, the suite failed but not because of the mutant; left out): "
              f"{len(self.undecided)}"] if self.undecided else [])

    def to_json(self) -> dict:
        return {"overall": self.overall.to_json(), "silent_claims": self.silent_claims.to_json(),
                "silent_decisions": self.silent_decisions.to_json(),
                "claims_alone": self.claims_alone.to_json(),
                "claims_outside_kernels": self.claims_outside_kernels.to_json(),
                "how": dict(self.hows()), "missed": len(self.missed), "equivalent": len(self.equivalent),
                "undecided": len(self.undecided)}


_HOW_NAMES = {"timeout": "timeout", "crash": "crash", "refusal": "refusal", "claims": "claims",
              "oracle": "oracle only", "check": "other checks", "floor": "exercise floor", "unknown": "unknown"}
