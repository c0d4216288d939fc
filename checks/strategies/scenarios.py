"""Hypothesis strategies for scenarios: a graph plus compile options (and, for executions, runtime choices).

``scenarios(kinds=...)`` composes ``graphs()`` with the compile options an engineer can choose
(SoC profile, strategy, reuse, offline build, a build for a refreshable feature base) so a campaign
reaches every rule the options switch on. Plan and model-file scenarios draw graphs decorated for
planning (workspaces, ``_no_reuse``, a second stream, dynamic-batch labels); execution scenarios draw
graphs decorated the same way but without labels (half of them over ``GROUP_FAMILIES``), with one node in three on stream 1
or 2 (so continuous groups and producers meet across streams), and runs drawn from the graph (``checks.strategies.runs``):
both runtimes, random bindings, against the oracle. It shrinks toward fewer nodes, the default
options and one plain run.

Kinds whose scenarios are drawn elsewhere register a strategy in ``KIND_STRATEGIES``
(``kind -> (max_nodes) -> SearchStrategy[Scenario]``); the default mix is every registered kind.
"""
from __future__ import annotations

from typing import Callable

from hypothesis import strategies as st

from zcspec.checks.scenario import KINDS, Scenario
from zcspec.checks.strategies.device_probes import PROBE_GRAPH, programs
from zcspec.checks.strategies.graphs import graphs
from zcspec.checks.strategies.planning_graphs import decorate
from zcspec.checks.strategies.runs import runs
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.platform.soc import PROFILES


def compile_options() -> st.SearchStrategy[CompileOptions]:
    socs = ["ascend910b"] + sorted(set(PROFILES) - {"ascend910b"})
    return st.builds(
        CompileOptions,
        soc=st.sampled_from(socs),
        strategy=st.sampled_from(["ge", "compact"]),
        reuse=st.booleans().map(lambda off: not off),
        offline=st.booleans(),
        feature_base_refreshable=st.booleans(),
    )


def _static(kind: str):
    def strategy(max_nodes: int):
        graph = graphs(max_nodes=max_nodes).flatmap(lambda g: decorate(g))
        return st.builds(Scenario, st.just(kind), graph, compile_options(), st.just({}))
    return strategy


# Half the executed graphs draw from the families that make continuous groups, collectives, views and
# in-place nodes (with elementwise ops around them), so groups meet streams and HCCL meets model I/O
# often; the other half draw from every family.
GROUP_FAMILIES = ("unary", "binary", "allreduce", "broadcast", "phony_concat", "concat", "split", "slice", "inplace",
                  "identity", "fused_allreduce")


def _executions(max_nodes: int):
    shapes = st.one_of(graphs(max_nodes=max_nodes), graphs(max_nodes=max_nodes, families=GROUP_FAMILIES))

    @st.composite
    def build(draw):
        graph = draw(shapes.flatmap(lambda g: decorate(g, labels=False, other_stream=3, streams=3)))
        return Scenario("execution", graph, draw(compile_options()), draw(runs(graph)))
    return build()


def _device_probes(max_nodes: int):
    """A probe of the bare device (checks/strategies/device_probes.py); the graph bound does not apply."""
    return st.builds(Scenario, st.just("device"), st.just(PROBE_GRAPH), st.just(CompileOptions()),
                     programs().map(lambda p: {"program": list(p)}))


KIND_STRATEGIES: dict[str, Callable[[int], st.SearchStrategy[Scenario]]] = {
    "plan": _static("plan"),
    "model_file": _static("model_file"),
    "execution": _executions,
    "device": _device_probes,
}


# ``zcspec explore``'s default graph bound (benchmarks/fault_detection.py --plain hunts with it too).
EXPLORE_MAX_NODES = 10


def default_kinds() -> tuple[str, ...]:
    """The kinds of the default mix (``zcspec explore``, verify's campaign): every one drawn here."""
    return tuple(k for k in KINDS if k in KIND_STRATEGIES)


def scenarios(*, kinds: tuple[str, ...] | None = None, max_nodes: int = 8,
              runtime=None) -> st.SearchStrategy[Scenario]:
    """Scenarios of the given kinds (default: ``default_kinds()``); ``runtime``, a strategy of runtime
    dicts, replaces the drawn runs of executions."""
    kinds = default_kinds() if kinds is None else tuple(kinds)
    if unknown := set(kinds) - set(KINDS):
        raise ValueError(f"scenarios(): unknown kinds {sorted(unknown)}; known: {KINDS}")
    if missing := [k for k in kinds if k not in KIND_STRATEGIES]:
        raise ValueError(f"scenarios(): no strategy draws kind {missing}; registered: {sorted(KIND_STRATEGIES)}")
    if not kinds:
        raise ValueError("scenarios(): kinds is empty")
    if max_nodes < 1:
        raise ValueError(f"scenarios(): max_nodes={max_nodes!r} must be at least 1")
    parts = []
    for k in kinds:
        if k == "execution" and runtime is not None:
            parts.append(st.builds(Scenario, st.just("execution"), graphs(max_nodes=max_nodes), compile_options(),
                                   runtime))
        else:
            parts.append(KIND_STRATEGIES[k](max_nodes))
    return st.one_of(parts)
