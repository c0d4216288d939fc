"""A Scenario: everything needed to reproduce one check, as data with a JSON form.

``kind`` says what is observed: ``plan`` (the memory plan), ``model_file``
(the compiled file and the pass decisions) or ``execution`` (a run through a
runtime; ``runtime`` holds its options and buffer choices). ``observe``
drives impl with the scenario and returns the spec's observations of it;
``evaluate`` checks them. Observers are a table, so the runtimes plug in their
own kinds (``OBSERVERS``).
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Callable

import attrs

from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import check_runtime, observe_runs
from zcspec.checks.device_probe_run import observe_probe
from zcspec.checks.strategies.model_files import edit
from zcspec.impl.compiler import graph_json
from zcspec.impl.compiler.artefact_json import to_json
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.errors import OptionError
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.observe import observe_model_file, observe_plan
from zcspec.impl.compiler.options import CompileOptions, options_from_json
from zcspec.impl.compiler.passes import check_disabled_passes
from zcspec.impl.platform.errors import UnknownSocError
from zcspec.spec.check import check
from zcspec.spec.registry import get

KINDS = ("plan", "model_file", "execution", "device")   # device: a probe of the bare device (DEVICE-BOUNDS)


@attrs.frozen
class Scenario:
    kind: str = attrs.field(validator=attrs.validators.in_(KINDS))
    graph: Graph
    compile: CompileOptions = CompileOptions()
    runtime: dict = attrs.field(factory=dict)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "graph": graph_json.to_dict(self.graph), "compile": to_json(self.compile),
                "runtime": self.runtime}

    @classmethod
    def from_dict(cls, d: dict) -> "Scenario":
        """The scenario of its JSON form, every part checked: ScenarioError (or the graph's, the options'
        or a runtime option's own error, all BadInput) naming the culprit key, before anything runs."""
        if not isinstance(d, dict):
            raise ScenarioError(f"a scenario must be an object, got {type(d).__name__}", key="scenario")
        if missing := [k for k in ("kind", "graph", "compile") if k not in d]:
            raise ScenarioError(f"scenario: missing key {missing[0]!r}", key=missing[0])
        if unknown := sorted(set(d) - {"kind", "graph", "compile", "runtime"}):
            raise ScenarioError(f"scenario: unknown keys {unknown}; known: compile, graph, kind, runtime",
                                key=", ".join(unknown))
        if d["kind"] not in KINDS:
            raise ScenarioError(f"scenario: kind {d['kind']!r} is not one of {KINDS}", key="kind")
        runtime = d.get("runtime", {})
        if d["kind"] == "execution":
            check_runtime(runtime)
        elif not isinstance(runtime, dict):
            raise ScenarioError(f"scenario: runtime must be an object, got {runtime!r}", key="runtime")
        return cls(d["kind"], graph_json.from_dict(d["graph"]), _compile_options(d["compile"]), dict(runtime))


def _compile_options(data) -> CompileOptions:
    """The scenario's CompileOptions, every value checked now (the SoC, the strategy and the planner's
    options, the disabled passes' names), so a bad one is a ScenarioError naming it, not a crash later."""
    options = options_from_json(data, "scenario.compile")
    try:
        options.plan_options()
        check_disabled_passes(options.disabled_passes)
    except UnknownSocError as e:
        raise ScenarioError(f"scenario compile.soc: {e}", key="compile.soc") from e
    except OptionError as e:
        raise ScenarioError(f"scenario compile.{e.field}: {e}", key=f"compile.{e.field}") from e
    return options


def _observe_plan(s: Scenario) -> list:
    stages = compile_stages(s.graph, s.compile)
    return [observe_plan(stages.graph, stages.plan, soc=s.compile.soc)]


def _observe_model_file(s: Scenario) -> list:
    """The compiled file, or, with ``runtime["mutation"]`` (checks/strategies/model_files.py), a mutated one."""
    stages = compile_stages(s.graph, s.compile)
    data, path = encode(stages.model), None
    if "mutation" in s.runtime:
        data, path = edit(data, s.runtime["mutation"])
    return [observe_model_file(data, stages.graph, s.compile, edited=path, built=stages.model)]


OBSERVERS: dict[str, Callable[[Scenario], list]] = {
    "plan": _observe_plan,
    "model_file": _observe_model_file,
    "execution": observe_runs,
    "device": observe_probe,
}


def observe(s: Scenario) -> list[Any]:
    """The spec's observations of ``s``; an execution's list also carries ``notes``
    (checks/execution/judge.py): the outputs no oracle judged, and valid calls that failed."""
    return OBSERVERS[s.kind](s)


def notes_of(observations) -> list:
    """The notes an observer attached to its observations (none for kinds that judge no outputs)."""
    return list(getattr(observations, "notes", ()))


def key_of(s: Scenario) -> str:
    """A fingerprint of ``s`` (its JSON form): two scenarios with the same key are the same case."""
    text = json.dumps(s.to_dict(), sort_keys=True, default=str)
    return hashlib.sha1(text.encode()).hexdigest()


def evaluate(s: Scenario, invariant_ids: tuple[str, ...] | None = None):
    """The spec's reports for every observation of ``s`` (only the given invariants, if named)."""
    chosen = None if invariant_ids is None else [get(i) for i in invariant_ids]
    return [check(o, invariants=chosen) for o in observe(s)]
