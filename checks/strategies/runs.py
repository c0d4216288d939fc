"""Hypothesis strategies for the runs of an execution scenario, drawn from the graph they run.

``runs(graph)`` draws one to three runtime dicts (checks/execution/__init__.py documents the
keys) for a compiled ``graph``: the differential run (v1 and v2 on the same inputs against the
oracle, zero copy on or off); runtime v1 with a binding sequence (fresh buffers, the same
buffers again, re-binding, undersized or null buffers, host placement, two I/O bound to one
buffer, a buffer reaching past its allocation or freed before the call, a retry with good
buffers after such a call, reuseZeroCopyMemory, a session's static memory policy,
calls from several threads at once); runtime v2 in the default mode or under always_zero_copy,
with correct or undersized output buffers, null or short inputs, host-placed outputs,
external allocators or one stream, and calls from several threads at once. A graph with collectives sometimes runs crafted, as a
foreign model file could have it: HCCL tasks that declare no zero-copy support
(``model_edits``). Every drawn run is judged against the oracle where its call succeeds.

Draws shrink toward one plain run with exact, fresh, device-placed buffers.
"""
from __future__ import annotations

from hypothesis import strategies as st

from zcspec.impl.compiler.ir import Graph


def _sizes(draw, graph: Graph, names: list[str], one_in: int = 4) -> dict:
    """Maybe (one time in ``one_in``) one I/O's caller buffer resized: half, null, one byte short, or
    one alignment unit over."""
    if not names or draw(st.integers(0, one_in - 1)):
        return {}
    name = draw(st.sampled_from(names))
    raw = graph.desc[name].nbytes
    return {name: draw(st.sampled_from([raw // 2, 0, max(raw - 1, 0), raw + 64]))}


def _shared(draw, graph: Graph) -> list:
    """Maybe two I/O bound to one buffer: two inputs of the same size (legal, both only read), or
    an input and an output (refused: an output shares memory with no other I/O)."""
    if draw(st.integers(0, 4)):
        return []
    ins, outs = list(graph.inputs), list(dict.fromkeys(graph.outputs))
    pairs = [[a, b] for i, a in enumerate(ins) for b in ins[i + 1:]
             if graph.desc[a].nbytes == graph.desc[b].nbytes]
    pairs += [[a, b] for a in ins for b in outs if a != b and graph.desc[a].nbytes == graph.desc[b].nbytes]
    return [draw(st.sampled_from(pairs))] if pairs else []


def _outside(draw, graph: Graph) -> dict:
    """Maybe (one time in six) one I/O's buffer outside every live allocation of the caller: reaching
    past the end of its allocation (``overhang``) or in one the caller freed before the call (``dangling``)."""
    names = list(graph.inputs) + list(dict.fromkeys(graph.outputs))
    if not names or draw(st.integers(0, 5)):
        return {}
    return {draw(st.sampled_from(["overhang", "dangling"])): [draw(st.sampled_from(names))]}


def _v1(draw, graph: Graph) -> dict:
    run: dict = {"runtime": "v1"}
    calls = draw(st.integers(1, 3))
    if calls > 1:
        run["calls"] = calls
        run["rebind"] = draw(st.one_of(st.booleans(), st.lists(st.booleans(), min_size=calls - 1,
                                                               max_size=calls - 1)))
    if draw(st.integers(0, 3)) == 0:
        run["threads"] = draw(st.integers(2, 3))
    if draw(st.integers(0, 4)) == 0:
        run["zero_copy"] = False
    elif draw(st.integers(0, 3)) == 0:
        run["reuse_zero_copy_memory"] = 1
    if draw(st.integers(0, 4)) == 0:
        run["placement"] = "host"
    outs = list(dict.fromkeys(graph.outputs))
    if sizes := _sizes(draw, graph, outs):
        run["output_sizes"] = sizes
    if sizes := _sizes(draw, graph, list(graph.inputs)):
        run["input_sizes"] = sizes
    if share := _shared(draw, graph):
        run["share"] = share
    run.update(_outside(draw, graph))
    bad = ("input_sizes", "output_sizes", "share", "overhang", "dangling")
    if calls > 1 and any(k in run for k in bad) and draw(st.booleans()):
        run["retry"] = True   # the later calls retry with good buffers: the refused call changed nothing
    if draw(st.integers(0, 5)) == 0:   # loaded into a session: its feature map from the session's allocator
        run["static_memory_policy"] = draw(st.sampled_from(["2", "1", "3", "0"]))
    run["seed"] = draw(st.integers(0, 3))
    return run


def _v2(draw, graph: Graph) -> dict:
    run: dict = {"runtime": "v2"}
    if draw(st.booleans()):
        run["always_zero_copy"] = True
    for switch in ("always_external_allocator", "enable_single_stream", "trust_shape_on_out_tensor"):
        if draw(st.integers(0, 4)) == 0:
            run[switch] = True
    # Zero copy off contradicts always_zero_copy's promise; runtime v2 accepts the pair without a word
    # (and then computes outputs in its own memory), so the two are not drawn together.
    if not run.get("always_zero_copy") and draw(st.integers(0, 5)) == 0:
        run["zero_copy"] = False
    if draw(st.integers(0, 3)) == 0:
        run["threads"] = draw(st.integers(2, 3))
    if draw(st.integers(0, 5)) == 0:
        run["output_placement"] = "host"
    # Half the v2 runs get a bad output buffer: the modes differ only there (always_zero_copy must
    # refuse it, the default mode must fall back).
    if sizes := _sizes(draw, graph, list(dict.fromkeys(graph.outputs)), one_in=2):
        run["output_sizes"] = sizes
    # A bad input, also beside a bad output: the call is then refused naming either (CALL-INVALID-REFUSED,
    # V2-AZC-REJECT), where the default mode would otherwise fall back for the output (V2-DEFAULT-FALLBACK).
    if sizes := _sizes(draw, graph, list(graph.inputs), one_in=3):
        run["input_sizes"] = sizes
    run["seed"] = draw(st.integers(0, 3))
    return run


def _differential(draw, graph: Graph) -> dict:
    return {"runtime": "differential", "zero_copy": draw(st.booleans().map(lambda off: not off)),
            "inputs": "normal", "seed": draw(st.integers(0, 3))}


_RUNS = (_differential, _v1, _v2)


@st.composite
def _one_run(draw, graph: Graph) -> dict:
    run = draw(st.sampled_from(_RUNS))(draw, graph)
    has_hccl = any(n.op_type.startswith("Hcom") for n in graph.nodes)
    if has_hccl and run["runtime"] != "differential" and draw(st.booleans()):
        run["model_edits"] = ["hccl_zero_copy_off"]
    return run


@st.composite
def _crafted_hccl(draw, graph: Graph) -> list:
    """For a graph with collectives, half the time a v1 run of the model crafted with HCCL tasks that
    declare no zero-copy support: the one case where the HCCL rule alone decides how an I/O is bound."""
    if not any(n.op_type.startswith("Hcom") for n in graph.nodes) or not draw(st.booleans()):
        return []
    return [{**_v1(draw, graph), "model_edits": ["hccl_zero_copy_off"]}]


def runs(graph: Graph, *, max_runs: int = 3) -> st.SearchStrategy[dict]:
    """A runtime dict ``{"runs": [...]}`` of 1 to ``max_runs`` runs of ``graph`` (see the module doc)."""
    if max_runs < 1:
        raise ValueError(f"runs(): max_runs={max_runs!r} must be at least 1")
    drawn = st.lists(_one_run(graph), min_size=1, max_size=max_runs)
    return st.tuples(_crafted_hccl(graph), drawn).map(lambda p: {"runs": (p[0] + p[1])[:max_runs]})
