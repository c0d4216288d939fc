"""Hypothesis strategies for scenarios: a graph plus compile options (and, for executions, runtime choices).

``scenarios(kinds=...)`` composes ``graphs()`` with the compile options an
engineer can choose (SoC profile, strategy, reuse, offline build) so a
campaign reaches every rule the options switch on; it shrinks toward fewer
nodes and the default options.
"""
from __future__ import annotations

from hypothesis import strategies as st

from zcspec.checks.scenario import KINDS, Scenario
from zcspec.checks.strategies.graphs import graphs
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
    )


def scenarios(*, kinds: tuple[str, ...] = ("plan", "model_file"), max_nodes: int = 8,
              runtime=None) -> st.SearchStrategy[Scenario]:
    """Scenarios of the given kinds; ``runtime`` is a strategy of runtime dicts for executions."""
    if unknown := set(kinds) - set(KINDS):
        raise ValueError(f"scenarios(): unknown kinds {sorted(unknown)}; known: {KINDS}")
    if "execution" in kinds and runtime is None:
        raise ValueError("scenarios(): executions need runtime=, a strategy of runtime dicts "
                         "(the keys zcspec.checks.execution documents)")
    runtimes = runtime if runtime is not None else st.just({})
    return st.builds(Scenario, st.sampled_from(kinds), graphs(max_nodes=max_nodes), compile_options(), runtimes)
