"""zcspec's specification: observables, the invariant catalogue, and the checker over them.

    from spec import check
    report = check(observation)      # a PlanObservation, ModelFileObservation, LoadObservation or ExecutionObservation
    report.ok, report.violations, report.exercised

The spec observes artefacts, never code: nothing in ``spec`` imports ``impl``.
``spec.observables`` defines what can be seen (with a JSON form),
``spec.invariants`` the claims (one module per concern), ``spec.registry`` the
catalogue, ``spec.picture`` the plan picture and ``spec.document`` the
reviewed document (``zcspec spec``). docs/spec-guide.md explains how to read
and extend it.
"""
from spec.check import Report, check
from spec.invariant import Invariant, Violation
from spec.registry import all_invariants, get

__all__ = ["Invariant", "Report", "Violation", "all_invariants", "check", "get"]
