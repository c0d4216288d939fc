"""zcspec's specification: observables, the invariant catalogue, and the checker over them.

    from zcspec.spec import check
    report = check(observation)      # a PlanObservation, ModelFileObservation, LoadObservation or ExecutionObservation
    report.ok, report.violations, report.exercised

The spec observes artefacts, never code: nothing in ``spec`` imports ``impl``.
``zcspec.spec.observables`` defines what can be seen (with a JSON form),
``zcspec.spec.invariants`` the claims (one module per concern), ``zcspec.spec.registry`` the
catalogue, ``zcspec.spec.picture`` the plan picture and ``zcspec.spec.document`` the
reviewed document (``zcspec spec``). docs/spec-guide.md explains how to read
and extend it.
"""
from zcspec.spec.check import Report, check
from zcspec.spec.invariant import Invariant, Violation
from zcspec.spec.registry import all_invariants, get

__all__ = ["Invariant", "Report", "Violation", "all_invariants", "check", "get"]
