"""Run one catalogue case and say how it came out against its record: verify's judgement of GE's cases.

GE's tests are the reference, so the record must stay true in both directions:

- a **match** must run clean; anything else is a failure naming the GE test: a GeMismatch (GE's value
  and zcspec's) or a PlanCheckFailed (zcspec's plan of GE's graph breaks the spec) is a ``mismatch``,
  any other exception is zcspec raising where GE succeeds (``raised``);
- a **deviation** must still raise what its record says (``deviates``). One that now runs clean is
  ``stale``: good news, but docs/ge-deviations.md still lists a difference that is gone, so it fails
  as pytest's strict xfail does (XPASS) until the record is changed. One that raises something else
  (``deviates otherwise``) no longer deviates the recorded way, and fails too.
"""
from __future__ import annotations

import attrs

from zcspec.checks.cases.ge.catalogue import GeCase, GeMismatch
from zcspec.checks.cases.ge.graph import PlanCheckFailed

PASSING = ("match", "deviates")


@attrs.frozen
class Outcome:
    case: GeCase
    verdict: str                      # "match", "deviates", "mismatch", "raised", "stale", "deviates otherwise"
    message: str = ""                 # what differs from GE or from the record (empty for a match)
    error: BaseException | None = attrs.field(default=None, eq=False, repr=False)   # the exception raised

    @property
    def ok(self) -> bool:
        return self.verdict in PASSING


def judge(case: GeCase) -> Outcome:
    """Run ``case`` and compare what happened with its record."""
    try:
        case.run()
    except Exception as e:  # the case's outcome is judged below, whatever zcspec raised
        return _raised(case, e)
    if case.status == "match":
        return Outcome(case, "match")
    return Outcome(case, "stale", f"recorded as a deviation (docs/ge-deviations.md row {case.row}: "
                                  f"{case.reason}), but zcspec now gives GE's result: the record is stale; "
                                  f"make the case a match and update row {case.row}")


def _raised(case: GeCase, e: Exception) -> Outcome:
    what = f"{type(e).__name__}: {e}"
    if case.status == "deviation":
        if isinstance(e, case.raises):
            return Outcome(case, "deviates", f"as recorded: {type(e).__name__}: {e}", e)
        recorded = " or ".join(t.__name__ for t in case.raises)
        return Outcome(case, "deviates otherwise", f"recorded as a deviation raising {recorded} (docs/"
                                                   f"ge-deviations.md row {case.row}); it raised {what}", e)
    if isinstance(e, (GeMismatch, PlanCheckFailed)):
        return Outcome(case, "mismatch", str(e), e)
    return Outcome(case, "raised", f"GE's test passes; zcspec raised {what}", e)
