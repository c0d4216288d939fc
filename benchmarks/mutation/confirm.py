"""Whether a failed suite run is the mutant's doing.

A suite run stops at its first failed test (``-x``), and a test can fail for reasons that have nothing to
do with the mutant: the load of the campaign beside it (a CPU-time limit of a packing case), what earlier
tests in the same worker left behind (address space held by uncollected devices: ENOMEM), or a test that
fails on the unmutated code too. Counted as kills, such failures made a mutant whose artefacts verify left
identical a verify miss that never was (three of six at 4298fff). So a suite kill by a failed test is
confirmed before it counts: the test alone must fail on the mutant's copy and pass on the unmutated one.
When it does not, the whole selection runs once more on the mutant's copy and that run's verdict stands if
it survives or is confirmed the same way; else the suite's verdict is ``unconfirmed``: neither a kill nor a
pass, listed apart and left out of the scores.

``confirmed(run, alone_in_mutant, alone_in_pristine, again)`` takes the three re-runs as callables (a test
id -> Run, and () -> Run) and returns the Run that stands.
"""
from __future__ import annotations

from typing import Callable

import attrs

from .runs import Run

UNCONFIRMED = "unconfirmed"


def confirmed(run: Run, alone_in_mutant: Callable[[str], Run], alone_in_pristine: Callable[[str], Run],
              again: Callable[[], Run]) -> Run:
    """The suite's verdict on a mutant, ``run`` confirmed as described in the module doc."""
    if _stands(run, alone_in_mutant, alone_in_pristine):
        return run
    retry = again()
    if _stands(retry, alone_in_mutant, alone_in_pristine):
        return retry
    return attrs.evolve(retry, verdict="survived", kind=UNCONFIRMED,
                        reason=f"{run.reason} failed, but not alone on the mutant or also on the unmutated copy; "
                               f"the retry: {retry.short()}")


def _stands(run: Run, alone_in_mutant, alone_in_pristine) -> bool:
    """A survived run stands as it is, as does a kill that is not a failed test (a crash, a timeout); a
    failed test stands when it fails alone on the mutant and passes alone on the unmutated copy."""
    if not run.killed or run.kind != "violation" or "::" not in run.reason:
        return True
    return alone_in_mutant(run.reason).killed and not alone_in_pristine(run.reason).killed
