"""Running device probe programs the way ``zcspec verify`` does (a ``device`` scenario through the scenario
table) and collecting what the spec reports, for the device probe tests."""
from __future__ import annotations

from zcspec.checks.scenario import Scenario, evaluate
from zcspec.checks.strategies.device_probes import PROBE_GRAPH
from zcspec.impl.compiler.options import CompileOptions


def probe_reports(programs, soc: str = "ascend910b") -> list:
    """The spec's report on each program, run as a device scenario of ``soc``."""
    return [evaluate(Scenario("device", PROBE_GRAPH, CompileOptions(soc=soc), {"program": list(p)}))[0]
            for p in programs]


def violated(programs, soc: str = "ascend910b") -> set[str]:
    """The ids of the invariants any of ``programs`` violates."""
    return {v.invariant_id for r in probe_reports(programs, soc) for v in r.violations}


def violations_of(claim: str, programs, soc: str = "ascend910b") -> list:
    return [v for r in probe_reports(programs, soc) for v in r.violations if v.invariant_id == claim]
