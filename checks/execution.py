"""Execution scenarios: run a compiled model through a runtime and observe it.

Filled in as the runtimes land: ``default_runtimes()`` lists the runtime
choices ``zcspec verify`` executes each zoo model with, ``observe_execution``
runs them and returns the spec's ExecutionObservations.
"""
from __future__ import annotations


def default_runtimes() -> list[dict]:
    return []


def observe_execution(scenario) -> list:
    if scenario.runtime.get("runtime") == "v2":
        from impl.compiler.compile import build_model
        from impl.runtime.v2.scenario import observe_scenario

        return observe_scenario(build_model(scenario.graph, scenario.compile), scenario.runtime)
    return []
