"""``compile(graph, options) -> bytes``: the whole compiler, one function per arrow.

    Graph -> passes -> MemoryPlan -> TaskList -> CompiledModel -> .zcm bytes

``build_model`` returns the CompiledModel (what a loader gives back); ``compile``
encodes it. Both are pure: the same graph and options give the same bytes.
"""
from __future__ import annotations

import attrs

from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.memory.plan import MemoryPlan, plan_memory
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.model_file.model import CompiledModel, WeightEntry
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import run_passes
from zcspec.impl.compiler.tasks.taskgen import generate_tasks
from zcspec.impl.compiler.validate import no_set_sizes, validate


@attrs.frozen
class Stages:
    """Every artefact of one compilation, for observers and debugging."""

    graph: Graph          # after the passes: the graph that was planned
    plan: MemoryPlan
    model: CompiledModel


def compile_stages(graph: Graph, options: CompileOptions = CompileOptions()) -> Stages:
    callers = validate(graph)
    graph = run_passes(no_set_sizes(callers), options)
    plan = plan_memory(graph, options.plan_options())
    tasks = generate_tasks(graph, plan, options.profile, callers.outputs)
    placed = {t.name: t for t in plan.tensors}
    weights = tuple(
        WeightEntry(w.name, placed[w.name].offset, graph.desc[w.name].shape, graph.desc[w.name].dtype, w.splat, w.data)
        for w in graph.weights if w.name in placed
    )
    model = CompiledModel(graph.name, options, plan, tasks, weights)
    return Stages(graph, plan, model)


def build_model(graph: Graph, options: CompileOptions = CompileOptions()) -> CompiledModel:
    return compile_stages(graph, options).model


def compile(graph: Graph, options: CompileOptions = CompileOptions()) -> bytes:  # noqa: A001 - the API's name
    return encode(build_model(graph, options))
