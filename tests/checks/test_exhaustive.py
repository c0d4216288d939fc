"""The bounded exhaustive mode: what it enumerates, what it skips, and that it catches seeded bugs."""
from __future__ import annotations

import json
import os

import networkx as nx
import pytest

from zcspec.checks.exhaustive import DEFAULT_OPS, INPUT_SHAPE, all_graphs, run_exhaustive
from zcspec.impl.compiler.ops import OPS


def _compute(graph):
    return [n for n in graph.nodes if n.op_type not in ("Data", "NetOutput")]


def test_one_node_graphs_are_counted_by_hand():
    # One input: Relu, Add(x, x), ReduceSum, Reshape, Identity, HcomAllReduce(x), Split: 7 structures
    # (Relu! needs a compute input, PhonyConcat two distinct tensors). Two inputs, both read:
    # Add(a, b), HcomAllReduce(a, b), PhonyConcat(a, b): 3 (the (b, a) orders are the same up to
    # swapping the inputs). Outputs: the unread tensors, plus none or one read tensor (the
    # inputs): 2 choices with one input, 3 with two, but only 2 for Add(a, b), which the swap maps
    # onto itself (a or b as the extra output is one graph). 7 * 2 + 2 * 3 + 2 = 22.
    graphs = list(all_graphs(1))
    assert len(graphs) == 22
    assert len({g.name for g in graphs}) == 22


def test_every_graph_is_valid_bounded_and_follows_the_rules():
    for g in all_graphs(2):
        compute = _compute(g)
        assert 1 <= len(compute) <= 2
        assert all(g.desc[t].shape == INPUT_SHAPE for t in g.inputs)
        readers = {t: [n for n in compute if t in n.inputs] for t in g.desc}
        assert all(readers[t] for t in g.inputs), f"{g.name}: an input nobody reads"
        produced = [t for n in compute for t in n.outputs]
        assert all(t in g.outputs for t in produced if not readers[t]), f"{g.name}: an unread tensor is no output"
        for n in compute:
            if n.attr("_reuse_input", False):
                target = n.inputs[0]
                assert OPS[g.node[g.producer[target]].op_type].kind == "compute"
                assert readers[target] == [n] and target not in g.outputs


def _structure(graph) -> nx.DiGraph:
    """The graph as a labelled DAG, independent of node names and order (for isomorphism)."""
    dg = nx.DiGraph()
    for n in graph.nodes:
        dg.add_node(n.name, label=f"{n.op_type}{'!' if n.attr('_reuse_input', False) else ''}")
    for n in graph.nodes:
        for pos, t in enumerate(n.inputs):
            if t in graph.producer:
                src = graph.node[graph.producer[t]]
                ordered = n.op_type not in ("Add", "NetOutput")
                label = (src.outputs.index(t), pos if ordered else None)
                if dg.has_edge(src.name, n.name):   # Add(x, x): a parallel edge, kept as a label list
                    dg.edges[src.name, n.name]["label"] = tuple(sorted(dg.edges[src.name, n.name]["label"]
                                                                       + (label,), key=str))
                else:
                    dg.add_edge(src.name, n.name, label=(label,))
    return dg


def _classes(graphs) -> list[list[nx.DiGraph]]:
    """Isomorphism classes, bucketed by the WL hash and split exactly with is_isomorphic."""
    buckets: dict[str, list[list[nx.DiGraph]]] = {}
    same = {"node_match": lambda a, b: a["label"] == b["label"], "edge_match": lambda a, b: a["label"] == b["label"]}
    for g in graphs:
        s = _structure(g)
        key = nx.weisfeiler_lehman_graph_hash(s, node_attr="label")
        for cls in buckets.setdefault(key, []):
            if nx.is_isomorphic(cls[0], s, **same):
                cls.append(s)
                break
        else:
            buckets[key].append([s])
    return [c for cs in buckets.values() for c in cs]


@pytest.mark.filterwarnings("ignore:The hashes produced for directed graphs")   # networkx 3.5 notice
def test_dedupe_skips_reorderings_only():
    kept = list(all_graphs(2))
    every = list(all_graphs(2, dedupe=False))
    assert len(every) > len(kept)
    assert len(_classes(kept)) == len(_classes(every)), "deduplication lost a structure"
    repeated = [c for c in _classes(kept) if len(c) > 1]
    assert all(_has_twins(c[0]) for c in repeated), "a structure without twins was kept twice"


def _has_twins(s: nx.DiGraph) -> bool:
    """Two nodes with one op on the same inputs (the case deduplication leaves alone)."""
    seen = set()
    for n, d in s.nodes(data=True):
        key = (d["label"], frozenset((p, s.edges[p, n]["label"]) for p in s.predecessors(n)))
        if key in seen and s.in_degree(n):
            return True
        seen.add(key)
    return False


def test_ops_and_bounds_are_checked_eagerly():
    with pytest.raises(ValueError, match="unknown op forms"):
        all_graphs(2, ops=("Relu", "Conv"))
    with pytest.raises(ValueError, match="max_nodes"):
        all_graphs(0)
    assert {n.op_type for g in all_graphs(1, ops=("Relu",), max_inputs=1) for n in _compute(g)} == {"Relu"}
    assert set(DEFAULT_OPS) >= {"Relu!", "ReduceSum", "HcomAllReduce", "PhonyConcat", "Split"}


def test_the_planner_holds_on_every_one_node_graph():
    run = run_exhaustive(1, kinds=("plan",))
    tally, failures = run.tally, run.failures
    assert run.graphs == 22 and tally.cases == 22 * 2 and not failures, failures[:3]
    assert tally.exercised["MEM-ATOMIC-NOREUSE"] and tally.exercised["MEM-CONT-INPUT"]


def test_a_seeded_planner_bug_is_caught():
    from zcspec.checks.faults.registry import active

    with active("zc-align-32"):
        run = run_exhaustive(1, kinds=("plan",), strategies=("ge",))
    tally, failures = run.tally, run.failures
    assert tally.violated["LAYOUT-ALIGN"]
    cx = next(f for f in failures if f.invariant == "LAYOUT-ALIGN").counterexample()
    assert cx.scenario.kind == "plan" and cx.found_with == "exhaustive"


def test_cli_exit_codes_table_and_saved_counterexamples(tmp_path, capsys):
    from zcspec.checks.cli.main import main
    from zcspec.checks.counterexample import Counterexample
    from zcspec.checks.faults.registry import active
    from zcspec.checks.replay import replay

    assert main(["exhaustive", "--max-nodes", "1", "--kinds", "plan", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "LAYOUT-NO-OVERLAP" in out and "22 graphs" in out and "every invariant held" in out
    assert main(["exhaustive", "--kinds", "plan,bogus"]) == 2
    with active("zc-align-32"):
        code = main(["exhaustive", "--max-nodes", "1", "--kinds", "plan", "--strategy", "ge", "--quiet",
                     "--save", str(tmp_path)])
        assert code == 1
        path = tmp_path / "exhaustive-layout-align.json"
        assert json.loads(path.read_text())["invariant"] == "LAYOUT-ALIGN"
        assert replay(Counterexample.load(os.fspath(path))).still_fails
    assert not replay(Counterexample.load(os.fspath(path))).still_fails
    assert "VIOLATION LAYOUT-ALIGN" in capsys.readouterr().out
