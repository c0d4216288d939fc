"""A continuous group whose pieces are produced on two streams (issue 13's cross-stream bug).

Two faults made runtime v1 return wrong results here, both found by an independent suite:

- the reader of the group (Relu of the PhonyConcat) must wait for the stream that wrote a
  piece. Matched by tensor name, it waited for the writer of the concat's output, which no
  task writes, so it ran before the piece existed (GE inserts an event per cross-stream
  edge, ``StreamAllocator::InsertSyncEvents``; v1 matches the bytes read against the bytes
  earlier tasks wrote, ``cross_stream_waits``);
- the planner widened the group's life at its end but not at its start, so a tensor of
  stream 0 that dies before the group's first step could share the group's memory, while
  the piece's producer on stream 1, ordered only after its own inputs, wrote that memory
  in the middle of the tensor's life (GE lowers the group's ``life_begin_`` by
  ``GetDiffStreamMinLifeTime``; units.py ``first_write``).

Each graph is checked on both runtimes against numpy; the emulator's schedule (stream 0
runs until it blocks on an event, then stream 1) is deterministic, so each test either
reproduces the fault every time or not at all.
"""
from __future__ import annotations

import importlib

import numpy as np
import pytest

from zcspec.checks.zoo import cross_stream_group
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.memory import stream_order, unit_facts
from zcspec.impl.compiler.topology import execution_order
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import load
from zcspec.impl.runtime.v2.runner import run

load_module = importlib.import_module("zcspec.impl.runtime.v1.load")   # the package exports the function as `load`

X = (np.arange(16, dtype=np.float32).reshape(4, 4) - 7.5) * 0.25


def pieces_on_two_streams():
    """B = Relu(A) on stream 0, C = Neg(A) on stream 1, PhonyConcat(B, C), then Relu."""
    b = GraphBuilder("pieces_on_two_streams")
    a = b.op("Neg", [b.input("x", (4, 4))], name="A")
    k = b.op("PhonyConcat", [b.op("Relu", [a], name="B"), b.op("Neg", [a], name="C", stream=1)],
             name="K", shape=(8, 4), axis=0)
    b.output(b.op("Relu", [k], name="R"))
    want = np.maximum(np.concatenate([np.maximum(-X, 0), X]), 0)
    return b.build(), want


def piece_written_early():
    """C = x + x on stream 1 depends only on the input, so it runs while stream 0 waits for Q;
    D on stream 0 lives before the group's first step in the execution order (verify's
    ``builtin:cross_stream_group``)."""
    want = np.maximum(np.concatenate([X + X, np.maximum(-(-X + np.maximum(X, 0)), 0)]), 0)
    return cross_stream_group(), want


GRAPHS = {"pieces_on_two_streams": pieces_on_two_streams, "piece_written_early": piece_written_early}


def execute(model, runtime: str) -> np.ndarray:
    dev = Device()
    ins, outs = stage_inputs(dev, model, {"x": X}), alloc_outputs(dev, model)
    if runtime == "v1":
        lm = load(dev, model)
        lm.execute(ins, outs)
        lm.unload()
    else:
        run(model, dev, ins, outs, zero_copy=True)
    got = read_outputs(dev, model, outs)["R:0"]
    free_buffers(dev, ins + outs)
    return got


@pytest.mark.parametrize("runtime", ["v1", "v2"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_group_with_a_piece_from_another_stream_computes_the_graph(name, runtime):
    graph, want = GRAPHS[name]()
    np.testing.assert_array_equal(execute(build_model(graph), runtime), want)


def test_the_group_reader_waits_for_the_stream_that_wrote_a_piece():
    graph, _ = pieces_on_two_streams()
    model = build_model(graph)
    waits = dict(zip((t.node for t in model.tasks.tasks), load_module.cross_stream_waits(model)))
    assert waits["R"] == (1,), waits


def assert_group_alone(model):
    group = next(b for b in model.plan.blocks if "K:0" in b.tensors)
    overlap = [b.id for b in model.plan.blocks if b.region == "feature_map" and b.id != group.id
               and b.offset < group.offset + group.size and group.offset < b.offset + b.size]
    assert overlap == [], f"block {group.id} of the group shares memory with blocks {overlap}"


def test_the_group_shares_no_memory_with_a_tensor_a_stream_1_piece_may_overwrite():
    """C depends on nothing of stream 0, so the group's life on stream 0 begins at step 0 and
    D, E (which die before the group's first step in the execution order) keep their own memory."""
    graph, _ = piece_written_early()
    assert_group_alone(build_model(graph))


def test_known_before_follows_data_edges_and_stream_order_only():
    graph, _ = piece_written_early()
    order = execution_order(graph)
    step = {n: i for i, n in enumerate(order)}
    clock = stream_order.known_before(graph, order)
    assert clock["C"] == {1: step["C"]}                        # after Q on its stream; nothing of stream 0
    assert clock["D"] == {0: step["D"], 1: step["Q"]}          # its input Q's event
    assert clock["B"] == {0: step["B"], 1: step["Q"]}          # stream order from D
    assert clock["R"][1] == step["C"]                          # through the taskless PhonyConcat


# --- the faults, reinstated one at a time: each must make a test above fail -------------

def _name_matched_waits(model):
    """The old rule: wait for the writer of the tensor *name* read."""
    writer: dict[str, int] = {}
    out = []
    for t in model.tasks.tasks:
        others = {writer[s.tensor] for s in t.slots if s.role == "in" and s.tensor in writer}
        out.append(tuple(sorted(others - {t.stream})))
        writer.update((s.tensor, t.stream) for s in t.slots if s.role == "out")
    return out


def test_waits_matched_by_name_compute_a_wrong_result(monkeypatch):
    monkeypatch.setattr(load_module, "cross_stream_waits", _name_matched_waits)
    graph, want = pieces_on_two_streams()
    assert not np.array_equal(execute(build_model(graph), "v1"), want)


def test_a_group_begun_at_its_first_step_computes_a_wrong_result(monkeypatch):
    monkeypatch.setattr(unit_facts.Facts, "first_write", lambda self, roots, stream, first: first)
    graph, want = piece_written_early()
    model = build_model(graph)
    with pytest.raises(AssertionError):
        assert_group_alone(model)
    assert not np.array_equal(execute(model, "v1"), want)
