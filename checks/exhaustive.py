"""Bounded exhaustive mode: every graph up to N compute/view nodes over a small op set, checked.

``all_graphs(max_nodes)`` enumerates graphs whose nodes are drawn from a few
*forms*, each chosen to reach one of the planner's rules:

- ``Relu`` (plain compute) and ``Relu!`` (the same, in place: ``_reuse_input``,
  output 0 shares input 0's block, GE's block_mem_assigner.cc ``ApplyOutMemory``);
- ``Add`` (two inputs; commutative, so only sorted input pairs are made);
- ``ReduceSum`` along axis 0 (atomic: its output is cleaned first, ``IsAtomicOutputMemory``);
- ``Reshape`` and ``Identity`` (views: no task, alias of the input);
- ``HcomAllReduce`` over one or two tensors (continuous inputs with padding, HCCL, AssignContinuousBlocks);
- ``PhonyConcat`` of two tensors along axis 0 (continuous inputs without padding, CalNodeAsContinuousInputMaxLife);
- ``Split`` along axis 0 (a view at byte offsets after the outer-axis pass).

Graph inputs are float32 ``(2, 8)``; every other shape follows from the forms
(ReduceSum gives ``(1, 8)``, PhonyConcat ``(4, 8)``, ...), so shapes stay
small and consistent. Each node reads earlier tensors (graph inputs included)
in every way its form accepts; every graph input is read (an unread input
would only repeat the smaller graph with a pass-through output). Outputs are
the tensors nobody reads plus every choice of up to ``max_extra_outputs``
tensors that are also read (graph inputs included: an input passed straight
to an output).

Deduplication: two node sequences that build the same DAG up to node order
and a swap of the graph inputs are one structure; only the first is kept
(``dedupe=False`` keeps every order, which matters because the execution
order is the insertion order among ready nodes, impl/compiler/topology.py).
A structure with two identical nodes is always kept, since its signature
does not say which of the twins a later node reads.

``run_exhaustive`` compiles every graph with every strategy, observes every
kind and checks every invariant, like ``zcspec verify`` does for the zoo.
"""
from __future__ import annotations

import itertools
import time
from typing import Callable, Iterator

import attrs
import numpy as np

from zcspec.checks.campaign import Tally
from zcspec.checks.counterexample import Counterexample
from zcspec.checks.execution import default_runtimes
from zcspec.checks.scenario import KINDS, Scenario, observe
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.observe import observe_model_file, observe_plan
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.check import check

DEFAULT_OPS = ("Relu", "Relu!", "Add", "ReduceSum", "Reshape", "Identity", "HcomAllReduce", "PhonyConcat", "Split")
INPUT_SHAPE = (2, 8)

# Where a tensor comes from; in place is allowed only over a compute node's output.
_INPUT, _COMPUTE, _OTHER = "input", "compute", "other"


@attrs.frozen
class _State:
    """A node sequence being built: per tensor its shape, origin and reader count."""

    inputs: int
    steps: tuple = ()           # (form, input tensor indices)
    shapes: tuple = ()
    origin: tuple = ()
    readers: tuple = ()
    sealed: frozenset = frozenset()   # tensors overwritten in place: nobody may read them again


def _readable(s: _State) -> list[int]:
    return [t for t in range(len(s.shapes)) if t not in s.sealed]


def _choices(form: str, s: _State) -> Iterator[tuple[int, ...]]:
    """Every input tuple ``form`` accepts in state ``s``."""
    ts = _readable(s)
    if form in ("Relu", "ReduceSum", "Reshape", "Identity"):
        yield from ((t,) for t in ts)
    elif form == "Relu!":
        # Overwriting is sound only for an intermediate nobody else reads (graphs.py's rule).
        yield from ((t,) for t in ts if s.origin[t] == _COMPUTE and s.readers[t] == 0)
    elif form == "Add":
        yield from ((a, b) for a, b in itertools.combinations_with_replacement(ts, 2) if s.shapes[a] == s.shapes[b])
    elif form == "HcomAllReduce":
        # One tensor cannot sit twice in one contiguous group: distinct inputs, in either order.
        yield from ((t,) for t in ts)
        yield from ((a, b) for a, b in itertools.permutations(ts, 2) if s.shapes[a] == s.shapes[b])
    elif form == "PhonyConcat":
        yield from ((a, b) for a, b in itertools.permutations(ts, 2) if s.shapes[a][1:] == s.shapes[b][1:])
    elif form == "Split":
        yield from ((t,) for t in ts if len(s.shapes[t]) > 0 and s.shapes[t][0] >= 2)
    else:
        raise ValueError(f"unknown exhaustive op form {form!r}; known: {DEFAULT_OPS}")


def _out_shapes(form: str, shapes: list[tuple]) -> list[tuple]:
    x = shapes[0]
    if form == "ReduceSum":
        return [(1, *x[1:])]
    if form == "Reshape":
        return [(x[0] * x[1],)] if len(x) == 2 else [(2, x[0] // 2) if x[0] % 2 == 0 else (1, x[0])]
    if form == "HcomAllReduce":
        return list(shapes)
    if form == "PhonyConcat":
        return [(x[0] + shapes[1][0], *x[1:])]
    if form == "Split":
        return [(x[0] // 2, *x[1:]), (x[0] - x[0] // 2, *x[1:])]
    return [x]


def _push(s: _State, form: str, ins: tuple[int, ...]) -> _State:
    outs = _out_shapes(form, [s.shapes[t] for t in ins])
    origin = _COMPUTE if form in ("Relu", "Relu!", "Add", "ReduceSum") else _OTHER
    readers = list(s.readers)
    for t in ins:
        readers[t] += 1
    return attrs.evolve(s, steps=s.steps + ((form, ins),), shapes=s.shapes + tuple(outs),
                        origin=s.origin + (origin,) * len(outs), readers=tuple(readers) + (0,) * len(outs),
                        sealed=(s.sealed | {ins[0]}) if form == "Relu!" else s.sealed)


def _sequences(s: _State, max_nodes: int, ops: tuple[str, ...]) -> Iterator[_State]:
    """Depth first: ``s`` itself, then every extension by one node."""
    yield s
    if len(s.steps) == max_nodes:
        return
    for form in ops:
        for ins in _choices(form, s):
            yield from _sequences(_push(s, form, ins), max_nodes, ops)


def _terms(s: _State, swap: bool) -> tuple[list[str], list[str]]:
    """Each node and each tensor as a term over the graph inputs (``swap`` exchanges in0 and in1)."""
    names = [f"i{(s.inputs - 1 - k) if swap else k}" for k in range(s.inputs)]
    sigs = []
    for form, ins in s.steps:
        args = [names[t] for t in ins]
        term = f"{form}({','.join(sorted(args) if form == 'Add' else args)})"
        sigs.append(term)
        count = len(_out_shapes(form, [s.shapes[t] for t in ins]))
        names.extend([term] if count == 1 else [f"{term}#{k}" for k in range(count)])
    return sigs, names


def _signature(s: _State, swap: bool) -> tuple[str, ...] | None:
    """The sorted node terms, or None when two nodes are twins (then the terms do not say which
    twin a later node reads)."""
    sigs, _ = _terms(s, swap)
    return None if len(set(sigs)) < len(sigs) else tuple(sorted(sigs))


def _structures(max_nodes: int, ops: tuple[str, ...], max_inputs: int, dedupe: bool) -> Iterator[_State]:
    for n_in in range(1, max_inputs + 1):
        root = _State(n_in, shapes=(INPUT_SHAPE,) * n_in, origin=(_INPUT,) * n_in, readers=(0,) * n_in)
        seen: set = set()
        for s in _sequences(root, max_nodes, ops):
            if not s.steps or 0 in s.readers[:n_in]:
                continue
            key = _signature(s, False) if dedupe else None
            if key is not None:
                keys = {key, _signature(s, True)} if n_in == 2 else {key}
                if seen & keys:
                    continue
                seen.update(keys)
            yield s


def _build(s: _State, outputs: tuple[int, ...], name: str) -> Graph:
    b = GraphBuilder(name)
    tensors = [b.input(f"in{k}", INPUT_SHAPE) for k in range(s.inputs)]
    for k, (form, ins) in enumerate(s.steps):
        args = [tensors[t] for t in ins]
        shapes = [s.shapes[t] for t in ins]
        outs = _out_shapes(form, shapes)
        if form == "Relu!":
            out = b.op("Relu", args, _reuse_input=True)
        elif form == "ReduceSum":
            out = b.op("ReduceSum", args, shape=outs[0], axes=(0,), keepdims=1)
        elif form == "Reshape":
            out = b.op("Reshape", [*args, b.weight(f"shape{k}", np.array(outs[0], np.int64))], shape=outs[0])
        elif form == "HcomAllReduce":
            out = b.op(form, args, outputs=[(o, "float32") for o in outs], reduction="sum")
        elif form == "PhonyConcat":
            out = b.op(form, args, shape=outs[0], axis=0)
        elif form == "Split":
            out = b.op(form, args, outputs=[(o, "float32") for o in outs], axis=0, split=tuple(o[0] for o in outs))
        else:
            out = b.op(form, args)
        tensors.extend(out if isinstance(out, tuple) else (out,))
    b.output(*(tensors[t] for t in outputs))
    return b.build()


def _output_choices(s: _State, max_extra: int) -> Iterator[tuple[int, ...]]:
    unread = [t for t, r in enumerate(s.readers) if r == 0]
    # A tensor overwritten in place no longer holds its value: it cannot be an output.
    read = [t for t, r in enumerate(s.readers) if r and t not in s.sealed]
    for k in range(max_extra + 1):
        for extra in itertools.combinations(read, k):
            yield tuple(sorted(unread + list(extra)))


def all_graphs(max_nodes: int, *, ops: tuple[str, ...] = DEFAULT_OPS, max_inputs: int = 2,
               max_extra_outputs: int = 1, dedupe: bool = True, shard: tuple[int, int] = (0, 1)) -> Iterator[Graph]:
    """Every valid graph of 1..``max_nodes`` compute/view nodes over ``ops`` (see the module doc).

    Deterministic: the same arguments give the same graphs in the same order,
    named ``exhaustive_<k>``. ``shard=(i, n)`` keeps the graphs whose ``k % n == i``
    (named as in the whole enumeration, so the n shards together are exactly the
    whole). Arguments are checked eagerly.
    """
    _check_args(max_nodes, ops, max_inputs, max_extra_outputs, shard)
    index, count = shard
    return (_build(s, outputs, f"exhaustive_{k}")
            for k, s, outputs in _enumerate(max_nodes, tuple(ops), max_inputs, max_extra_outputs, dedupe)
            if k % count == index)


def count_graphs(max_nodes: int, *, ops: tuple[str, ...] = DEFAULT_OPS, max_inputs: int = 2,
                 max_extra_outputs: int = 1, dedupe: bool = True) -> int:
    """How many graphs ``all_graphs`` gives with these arguments (enumerated, not built: a small
    part of the time, benchmarks/exhaustive_size.py; progress lines use it for the time left)."""
    _check_args(max_nodes, ops, max_inputs, max_extra_outputs, (0, 1))
    return sum(1 for _ in _enumerate(max_nodes, tuple(ops), max_inputs, max_extra_outputs, dedupe))


def _check_args(max_nodes, ops, max_inputs, max_extra_outputs, shard) -> None:
    if max_nodes < 1 or max_inputs < 1 or max_extra_outputs < 0:
        raise ValueError(f"all_graphs(): need max_nodes >= 1, max_inputs >= 1, max_extra_outputs >= 0; "
                         f"got max_nodes={max_nodes!r}, max_inputs={max_inputs!r}, "
                         f"max_extra_outputs={max_extra_outputs!r}")
    if unknown := set(ops) - set(DEFAULT_OPS):
        raise ValueError(f"all_graphs(): unknown op forms {sorted(unknown)}; known: {DEFAULT_OPS}")
    if len(shard) != 2 or not 0 <= shard[0] < shard[1]:
        raise ValueError(f"all_graphs(): shard must be (index, count) with 0 <= index < count; got {shard!r}")


def _enumerate(max_nodes, ops, max_inputs, max_extra, dedupe) -> Iterator[tuple[int, _State, tuple[int, ...]]]:
    """(k, structure, outputs) of every graph, in enumeration order."""
    k = 0
    for s in _structures(max_nodes, ops, max_inputs, dedupe):
        # A structure that swapping the inputs maps onto itself has output choices that are
        # swaps of each other (Relu(in0), Relu(in1) with in0 or in1 as an extra output): keep one.
        symmetric = dedupe and s.inputs == 2 and _signature(s, False) is not None \
            and _signature(s, False) == _signature(s, True)
        names = [_terms(s, swap)[1] for swap in (False, True)] if symmetric else None
        seen: set = set()
        for outputs in _output_choices(s, max_extra):
            if symmetric:
                keys = [tuple(sorted(n[t] for t in outputs)) for n in names]
                if seen & set(keys):
                    continue
                seen.update(keys)
            yield k, s, outputs
            k += 1


@attrs.frozen
class Failure:
    """One case that failed: a violation (``invariant`` set) or a crash of the code under test;
    ``index`` is the graph's place in the enumeration (``exhaustive_<index>``)."""

    scenario: Scenario
    invariant: str | None
    culprit: str
    message: str
    values: dict = attrs.field(factory=dict)
    index: int = 0

    def counterexample(self):
        """The counterexample file content for a violation (None for a crash)."""
        if self.invariant is None:
            return None
        return Counterexample(self.scenario, self.invariant, {"culprit": self.culprit, "message": self.message,
                                                              "values": self.values}, found_with="exhaustive")


@attrs.frozen
class ExhaustiveRun:
    """What one run (or one shard of it) found: the per-invariant tally (one case per observation),
    the failures in enumeration order, the graphs checked and the seconds it took."""

    tally: Tally
    failures: tuple
    graphs: int
    seconds: float


def merge_runs(runs) -> ExhaustiveRun:
    """The shards' runs as one: tallies summed, failures in enumeration order, graphs summed, the
    longest shard's seconds (they ran side by side). Equals the single-process run exactly."""
    runs = list(runs)
    tally = Tally(keyed=False)
    for r in runs:
        tally.merge(r.tally)
    failures = sorted((f for r in runs for f in r.failures), key=lambda f: f.index)
    return ExhaustiveRun(tally, tuple(failures), sum(r.graphs for r in runs),
                         max((r.seconds for r in runs), default=0.0))


def _observations(graph: Graph, kinds, options: CompileOptions, with_execution: bool) -> Iterator[tuple]:
    """(kind, observation) pairs; plan and model file share one compilation (half the cost of
    observing them through two scenarios, which compile twice)."""
    if "plan" in kinds or "model_file" in kinds:
        stages = compile_stages(graph, options)
        if "plan" in kinds:
            yield "plan", observe_plan(stages.graph, stages.plan, soc=options.soc)
        if "model_file" in kinds:
            yield "model_file", observe_model_file(encode(stages.model), stages.graph, options)
    if with_execution:
        for obs in observe(_scenario("execution", graph, options)):
            yield "execution", obs


def _scenario(kind: str, graph: Graph, options: CompileOptions) -> Scenario:
    """The scenario that reproduces one kind of check (what a counterexample file stores)."""
    runtime = {}
    if kind == "execution":
        runtime = {"runs": default_runtimes(graph)}
    return Scenario(kind, graph, options, runtime)


def _check(graph: Graph, index: int, kinds, options: CompileOptions, with_execution: bool, tally: Tally,
           failures: list) -> None:
    kind = kinds[0]
    try:
        for kind, obs in _observations(graph, kinds, options, with_execution):
            for v in tally.add([check(obs)]):
                values = {k: x if isinstance(x, (int, float, str, bool, type(None))) else str(x)
                          for k, x in v.values.items()}
                failures.append(Failure(_scenario(kind, graph, options), v.invariant_id, v.culprit,
                                        v.message, values, index))
    except Exception as e:  # a crash of the code under test is a finding of its own
        failures.append(Failure(_scenario(kind, graph, options), None, graph.name, f"{type(e).__name__}: {e}",
                                index=index))


def run_exhaustive(max_nodes: int, kinds: tuple[str, ...] = ("plan", "model_file"),
                   strategies: tuple[str, ...] = ("ge", "compact"),
                   progress: Callable[[int, float, int], None] | None = None, *, soc: str = "ascend910b",
                   every: int = 500, shard: tuple[int, int] = (0, 1), **graph_args) -> ExhaustiveRun:
    """Check every invariant on every graph of ``all_graphs(max_nodes, shard=shard, **graph_args)``.

    Returns the per-invariant tally (one case per observation checked), the failures (every
    violation and every crash, in enumeration order) and the graph count.
    ``progress(graphs_done, seconds, failures_so_far)`` is called every ``every`` graphs and at the end.
    """
    if unknown := set(kinds) - set(KINDS):
        raise ValueError(f"run_exhaustive(): unknown kinds {sorted(unknown)}; known: {KINDS}")
    tally, failures = Tally(keyed=False), []
    start, n = time.perf_counter(), 0
    for n, graph in enumerate(all_graphs(max_nodes, shard=shard, **graph_args), 1):
        index = int(graph.name.rsplit("_", 1)[1])
        for j, strategy in enumerate(strategies):
            # Runtimes run on one plan per graph, layouts on every strategy (as verify does).
            _check(graph, index, tuple(kinds), CompileOptions(soc=soc, strategy=strategy),
                   "execution" in kinds and j == 0, tally, failures)
        if progress and n % every == 0:
            progress(n, time.perf_counter() - start, len(failures))
    seconds = time.perf_counter() - start
    if progress:
        progress(n, seconds, len(failures))
    return ExhaustiveRun(tally, tuple(failures), n, seconds)
