"""Execution scenarios: run a compiled model through the runtimes and observe each call.

A scenario's ``runtime`` dict picks the run:

- ``{"runtime": "v1", ...}`` / ``{"runtime": "v2", ...}``: one runtime, with its own
  options and buffer choices (``v1.py``, ``v2.py`` in this package);
- ``{"runtime": "differential", "zero_copy": bool, "inputs": "normal" | "ones", "seed": n}``:
  the same inputs through v1 and v2, each output judged against the other runtime and the
  oracle (``differential.py``);
- ``{"runs": [dict, ...]}``: several of the above, observations concatenated.

Every run of a dynamic-batch model carries ``"batch": label``, the branch it executes
(``default_runtimes`` repeats each run once per branch label).

Any run may carry ``"model_edits": [name, ...]`` (``MODEL_EDITS``): changes to the compiled
model before it runs, as a crafted or foreign model file would have them, so the runtime's own
defences (which the compiler normally makes redundant) are exercised too.

This is checker code: it drives impl/ and nothing in impl/ imports it.
"""
from __future__ import annotations

import attrs

from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import differential, v1, v1_options, v2
from zcspec.checks.execution.differential import observe_differential
from zcspec.checks.execution.judge import Observations
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.memory import rules


def default_runtimes(graph, *, light: bool = False) -> list[dict]:
    """What ``zcspec verify`` runs each zoo model with. A ``light`` model (one of onnx's light models,
    large): both runtimes against each other and the oracle (input all ones), zero copy on. A
    built-in graph (small, and
    built to reach every rule): also zero copy off, v1 re-bound to fresh buffers, with
    reuseZeroCopyMemory, with an undersized output, and v2's strict and default modes with an
    undersized output (the first output at half its size). A graph with dynamic-batch branches
    gets every run once per branch label (``"batch"``): each branch executes and is judged."""
    if light:
        return [{"runtime": "differential", "zero_copy": True, "inputs": "ones"}]
    labels = sorted({rules.batch_label(n) for n in graph.nodes} - {""})
    runs = _builtin_runs(graph)
    return [{**run, "batch": label} for label in labels for run in runs] if labels else runs


def _builtin_runs(graph) -> list[dict]:
    out0 = graph.outputs[0]
    half = max(graph.desc[out0].nbytes // 2, 1)
    return [
        {"runtime": "differential", "zero_copy": True},
        {"runtime": "differential", "zero_copy": False},
        {"runtime": "v1", "calls": 2},
        {"runtime": "v1", "reuse_zero_copy_memory": 1},
        {"runtime": "v1", "output_sizes": {out0: half}},
        {"runtime": "v2", "always_zero_copy": True, "output_sizes": {out0: half}},
        {"runtime": "v2", "output_sizes": {out0: half}},
    ]


def runs_of(runtime: dict) -> list[dict]:
    """The runs an execution scenario's ``runtime`` names: its ``runs`` list, or itself as one run."""
    return runtime["runs"] if "runs" in runtime else [runtime]


def races(scenario) -> bool:
    """Whether ``scenario`` makes calls from several threads at once (a run's ``threads``): which call the
    threads' schedule finishes first, and so which one shows the unload and what addresses each got,
    varies from run to run."""
    return scenario.kind == "execution" and any(run.get("threads") for run in runs_of(scenario.runtime))


def observe_runs(scenario) -> Observations:
    """Compile ``scenario.graph`` once, then observe every run its ``runtime`` dict names, in order;
    the result's ``notes`` gather every run's unjudged outputs and failed valid calls."""
    model = build_model(scenario.graph, scenario.compile)
    out = Observations()
    for runtime in runs_of(scenario.runtime):
        got = _observe_run(scenario, model, runtime)
        out.extend(got)
        out.notes.extend(got.notes)
    return out


def _hccl_zero_copy_off(model):
    """Every HCCL task declares no zero-copy support for any buffer (GE: hccl_task_info.cc
    ``HcclTaskInfo::InitZeroCopyInfos``, ``SetAddrs``)."""
    tasks = tuple(attrs.evolve(t, zero_copy_in=(False,) * len(t.zero_copy_in),
                               zero_copy_out=(False,) * len(t.zero_copy_out)) if t.kind == "hccl" else t
                  for t in model.tasks.tasks)
    return attrs.evolve(model, tasks=attrs.evolve(model.tasks, tasks=tasks))


MODEL_EDITS = {"hccl_zero_copy_off": _hccl_zero_copy_off}


def check_runtime(runtime: dict) -> None:
    """Check a scenario's ``runtime`` dict without running anything: every run's model edits,
    runtime kind, keys and option values. ScenarioError (or the runtime's own option error, a
    BadInput as well) names the culprit key."""
    runs = runtime.get("runs", [runtime]) if isinstance(runtime, dict) else None
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        raise ScenarioError(f"execution scenario: runtime (and each of its runs) must be an object, got {runtime!r}",
                            key="runtime")
    for run in runs:
        _, kind, rest = _split_run(run)
        if kind == "v1":
            v1_options.options_of(rest)
        elif kind == "v2":
            v2.options_of(rest)
        else:
            differential.check_keys(rest)


def _split_run(runtime: dict) -> tuple[tuple, str, dict]:
    """(model edits, runtime kind, the run's other keys); ScenarioError on an unknown edit or kind."""
    edits = runtime.get("model_edits", ())
    if unknown := sorted(set(edits) - set(MODEL_EDITS)):
        raise ScenarioError(f"execution scenario: unknown model_edits {unknown}; known: {sorted(MODEL_EDITS)}",
                            key="model_edits")
    kind = runtime.get("runtime", "v1")
    if kind not in ("v1", "v2", "differential"):
        raise ScenarioError(f"execution scenario: runtime {kind!r} is not v1, v2 or differential", key="runtime")
    return tuple(edits), kind, {k: v for k, v in runtime.items() if k != "model_edits"}


def _observe_run(scenario, model, runtime: dict) -> list:
    edits, kind, runtime = _split_run(runtime)
    for name in edits:
        model = MODEL_EDITS[name](model)
    if kind == "differential":
        return observe_differential(scenario.graph, model, runtime)
    if kind == "v2":
        return v2.observe_scenario(model, runtime, scenario.graph)
    return v1.observe_scenario(model, runtime, scenario.graph)
