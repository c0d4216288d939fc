"""Scenario strategies for the fault hunts, over ``graphs()`` and ``compile_options()`` of
``zcspec.checks.strategies``; executions need runtime dicts built from the drawn graph
(``output_sizes`` keys are that graph's output tensor names), composed here.

Every strategy shrinks toward fewer nodes, the default compile options and the first
runtime choice (a caller buffer of exactly the output's raw size).
"""
from __future__ import annotations

import attrs
from hypothesis import strategies as st

from zcspec.checks.scenario import Scenario
from zcspec.checks.strategies.graphs import FAMILIES, graphs
from zcspec.checks.strategies.planning_graphs import decorate
from zcspec.checks.strategies.scenarios import compile_options

MAX_NODES = 6
RUNTIMES = ("v1", "v2", "v2-azc", "differential")


# Plan hunts draw every op family (two families were left out while MEM-ATOMIC-NOREUSE and the
# continuous-copies pass had the bugs this benchmark found; both are fixed).
PLAN_FAMILIES = FAMILIES


def bounded_graphs(max_nodes: int, families: tuple[str, ...] | None = None):
    """``graphs()`` with the input count bounded along with the nodes (1 input up to 4 nodes, 2 up
    to 5, else 3): the hunt's small bounds then draw only small graphs (at most 6 nodes with Data
    and NetOutput), since the shrinker does not always drop an input once later draws depend on it."""
    max_inputs = 1 if max_nodes <= 4 else 2 if max_nodes <= 5 else 3
    return graphs(max_nodes=max_nodes, max_inputs=max_inputs, **({"families": families} if families else {}))


def plan_scenarios(max_nodes: int = MAX_NODES, families: tuple[str, ...] = PLAN_FAMILIES):
    return st.builds(Scenario, st.just("plan"), bounded_graphs(max_nodes, families), compile_options(),
                     st.just({}))


def stream_plan_scenarios(max_nodes: int = MAX_NODES):
    """Plan scenarios whose nodes sit on three streams (one node in two off stream 0), with workspaces
    and control edges: where blocks of two streams meet."""
    shapes = bounded_graphs(max_nodes).flatmap(lambda g: decorate(g, labels=False, other_stream=2, streams=3))
    return st.builds(Scenario, st.just("plan"), shapes, compile_options(), st.just({}))


def model_file_scenarios(max_nodes: int = MAX_NODES):
    return st.builds(Scenario, st.just("model_file"), bounded_graphs(max_nodes), compile_options(),
                     st.just({}))


def _output_sizes(draw, graph) -> dict:
    """Maybe one output's caller buffer resized: raw, half, null or one byte short of raw."""
    if not draw(st.booleans()):
        return {}
    out = draw(st.sampled_from(sorted(set(graph.outputs))))
    raw = graph.desc[out].nbytes
    return {out: draw(st.sampled_from([raw // 2, 0, max(raw - 1, 0)]))}


def _runtime(draw, kind: str, graph) -> dict:
    if kind == "v1":
        d = {"runtime": "v1", "calls": draw(st.integers(1, 2))}
    elif kind == "v2":
        d = {"runtime": "v2"}
    elif kind == "v2-azc":
        d = {"runtime": "v2", "always_zero_copy": True}
    elif kind == "differential":
        return {"runtime": "differential", "zero_copy": True, "inputs": "normal"}
    else:
        raise ValueError(f"execution_scenarios(): unknown runtime {kind!r}; known: {RUNTIMES}")
    sizes = _output_sizes(draw, graph)
    if sizes:
        d["output_sizes"] = sizes
    return d


def execution_scenarios(runtimes: tuple[str, ...] = ("v1",), *, max_nodes: int = MAX_NODES,
                        socs: tuple[str, ...] | None = None, families: tuple[str, ...] | None = None,
                        model_edits: tuple[str, ...] = (), run_options: tuple[tuple[str, object], ...] = ()):
    """Execution scenarios through the named runtimes (``RUNTIMES``); ``socs`` pins the SoC profiles,
    ``families`` the op families of the graphs (default: all of ``graphs()``); ``model_edits``
    craft the compiled model first (checks/execution/__init__.py ``MODEL_EDITS``); ``run_options``
    are added to every run (load options such as ``legacy_copy_only_addrs``)."""
    if unknown := set(runtimes) - set(RUNTIMES):
        raise ValueError(f"execution_scenarios(): unknown runtimes {sorted(unknown)}; known: {RUNTIMES}")
    options = compile_options()
    if socs:
        options = st.tuples(options, st.sampled_from(socs)).map(lambda p: _with_soc(*p))

    @st.composite
    def build(draw):
        graph = draw(bounded_graphs(max_nodes, families))
        opts = draw(options)
        runtime = _runtime(draw, draw(st.sampled_from(runtimes)), graph)
        if model_edits:
            runtime["model_edits"] = list(model_edits)
        runtime.update(run_options)
        return Scenario("execution", graph, opts, runtime)

    return build()


def _with_soc(options, soc: str):
    return attrs.evolve(options, soc=soc)
