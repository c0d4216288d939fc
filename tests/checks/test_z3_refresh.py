"""The refresh proof: runtime v1's argument addresses right for every legal placement of the user's
buffers. Proved on real code; refuted, with a placement the checker's executions never use, under
the proof-only variant; refuted under the slot-skipping variant too; unknown, never a pass, where
it cannot decide."""
from __future__ import annotations

import attrs
import numpy as np
import pytest
import z3

from zcspec.checks.faults import registry
from zcspec.checks.proofs import refresh as refresh_proof
from zcspec.checks.proofs.cases import case_proofs
from zcspec.checks.proofs.refresh import prove_refresh
from zcspec.checks.scenario import Scenario, observe
from zcspec.checks.zoo import load
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device import Device
from zcspec.impl.runtime import v1
from zcspec.impl.runtime.user_buffers import UserBuffer

# Views at offsets into an input, pass-through, concat pieces, collectives, constants as outputs.
GRAPHS = ("builtin:split_views", "builtin:phony_concat", "builtin:inplace_passthrough", "builtin:collectives",
          "builtin:constants")


def _model(name: str, **options):
    return compile_stages(load(name), CompileOptions(soc="ascend910b", **options)).model


@pytest.mark.parametrize("name", GRAPHS)
def test_real_refresh_is_proved_for_every_placement(name):
    result = prove_refresh(_model(name))
    assert result.status == "proved" and result.passed, result.reason
    assert result.claims_encoded > 0 and result.calls == 2


def test_base_granule_variant_is_refuted_with_a_view_into_a_real_buffer():
    with registry.active("v1-refresh-base-granule"):
        result = prove_refresh(_model("builtin:split_views"))
    assert result.status == "refuted" and not result.passed
    assert result.kind == "at_offset"
    moved = [v for k, v in result.counterexample if not k.endswith(":size") and v % 32]
    assert moved, result.counterexample                  # the breaking base is no multiple of 32
    assert all(v % 4 == 0 for v in moved)                # yet element aligned (float32): legal
    assert any("outside" in m and "buffer" in m for m in result.violations)
    assert result.reason.startswith("counterexample:") and result.pair[0] in result.reason


def _run_split_views(offset: int):
    """Execute split_views once through v1 with device buffers ``offset`` bytes into fresh allocations."""
    model = _model("builtin:split_views")
    dev = Device("ascend910b")
    lm = v1.load(dev, model)
    x = np.arange(6 * 40, dtype=np.float32).reshape(6, 40)
    bufs = []
    for d in model.tasks.inputs + model.tasks.outputs:
        bufs.append(UserBuffer(d.tensor, dev.malloc(d.size + 64) + offset, d.size))
    n = len(model.tasks.inputs)   # x first; the graph's other inputs get counting values too
    for b, d in zip(bufs[:n], model.tasks.inputs):
        values = x if d.tensor == bufs[0].name else np.arange(np.prod(d.shape), dtype=np.float32) - 5
        host = dev.host_malloc(values.nbytes)
        dev.host_write(host, values)
        dev.memcpy(b.addr, host, values.nbytes, "h2d")
    lm.execute(bufs[:n], bufs[n:])
    outs = [dev.peek(b.addr, d.shape, "<f4") for b, d in zip(bufs[n:], model.tasks.outputs)]
    return x, outs


def test_base_granule_variant_is_invisible_at_allocation_starts_and_real_at_a_view():
    """Why no fixed check sees it: at the buffers every campaign binds (allocation starts) the
    variant computes the right answer; 4 bytes into an allocation it does not."""
    x, real = _run_split_views(0)
    with registry.active("v1-refresh-base-granule"):
        _, at_start = _run_split_views(0)
        _, at_view = _run_split_views(4)
    assert all(np.array_equal(a, b) for a, b in zip(real, at_start))
    assert np.array_equal(real[0], np.maximum(x[:2], 0))
    assert not all(np.array_equal(a, b) for a, b in zip(real, at_view))


def test_slot_not_refreshed_variant_is_refuted_too():
    with registry.active("v1-slot-not-refreshed"):
        result = prove_refresh(_model("builtin:split_views"))
    assert result.status == "refuted" and result.kind == "at_offset"


def _patched_refresh(monkeypatch, edit):
    """Install a refresh whose writes ``edit((task, slots)) -> (task, slots)`` changes."""
    real = refresh_proof._REFRESH.refresh

    def wrong(table, active, bindings, feature_map):
        plan = real(table, active, bindings, feature_map)
        return attrs.evolve(plan, per_task=tuple(edit(ts) for ts in plan.per_task))

    monkeypatch.setattr(refresh_proof._REFRESH, "refresh", wrong)


def test_an_address_two_bytes_off_is_refuted_as_misaligned_too(monkeypatch):
    _patched_refresh(monkeypatch, lambda ts: (ts[0], {s: a + 2 for s, a in ts[1].items()}))
    result = prove_refresh(_model("builtin:split_views"))
    assert result.status == "refuted" and result.kind == "at_offset"
    assert any("is not 4-byte aligned (float32)" in m for m in result.violations)


def test_a_refresh_that_rewrites_a_slot_of_model_memory_is_refuted_as_moved(monkeypatch):
    """A task that reads a model input and a weight: the refresh rewrites its input slot; this one
    also overwrites the weight slot beside it."""
    model = _model("builtin:constants")
    io_slots = {(z.task, z.slot) for z in model.tasks.zero_copy}
    task, slot = next((t.index, i) for t in model.tasks.tasks for i in range(len(t.slots))
                      if (t.index, i) not in io_slots and any((t.index, j) in io_slots for j in range(len(t.slots))))
    _patched_refresh(monkeypatch, lambda ts: (ts[0], {**ts[1], slot: 0x1000}) if ts[0] == task else ts)
    result = prove_refresh(model)
    assert result.status == "refuted" and result.kind == "moved", result.reason
    assert result.pair == (f"task {task} ({model.tasks.tasks[task].node!r}) slot {slot}", "")


def test_a_kernel_reaching_past_the_smallest_accepted_buffer_is_refuted(monkeypatch):
    """A slot that accesses 64 bytes more than its output's raw bytes fits the buffers concrete runs
    give (the planned size, in a 512-byte device allocation) and leaves the smallest buffer the size
    check accepts. (The model-file loader refuses such a file against its plan, so the facts are
    edited after reading.)"""
    real = refresh_proof.model_facts

    def wider(model):
        slots, ios = real(model)
        first = next(f for f in slots if f.io == ("output", 0))
        return tuple(attrs.evolve(f, nbytes=f.nbytes + 64) if f is first else f for f in slots), ios

    monkeypatch.setattr(refresh_proof, "model_facts", wider)
    model = _model("builtin:split_views")
    result = prove_refresh(model)
    assert result.status == "refuted" and result.kind == "outside_buffer", result.reason
    assert result.pair[1] == model.tasks.outputs[0].tensor


def test_a_refresh_that_branches_on_an_address_is_unknown_not_proved(monkeypatch):
    real = refresh_proof._REFRESH.refresh

    def ordering(table, active, bindings, feature_map):
        if any(b.address is not None and b.address > 0 for b in bindings):   # `<`/`>` cannot be followed
            pass
        return real(table, active, bindings, feature_map)

    monkeypatch.setattr(refresh_proof._REFRESH, "refresh", ordering)
    result = prove_refresh(_model("builtin:split_views"))
    assert result.status == "unknown" and not result.passed and "compared" in result.reason


def test_contradictory_assumptions_give_unknown_not_a_vacuous_proof(monkeypatch):
    monkeypatch.setattr(refresh_proof, "call_assumptions", lambda *a: [z3.BoolVal(False)])
    result = prove_refresh(_model("builtin:split_views"))
    assert result.status == "unknown" and "vacuous" in result.reason


def test_calls_must_be_positive():
    with pytest.raises(ValueError, match="calls=0"):
        prove_refresh(_model("builtin:split_views"), calls=0)


def test_verify_proves_layouts_on_plans_and_the_refresh_on_default_strategy_model_files():
    graph = load("builtin:split_views")
    plan = Scenario("plan", graph, CompileOptions(soc="ascend910b"))
    assert [p.status for p in case_proofs(plan, observe(plan))] == ["proved"]
    model_file = Scenario("model_file", graph, CompileOptions(soc="ascend910b"))
    [proof] = case_proofs(model_file, observe(model_file))
    assert isinstance(proof, refresh_proof.RefreshProof) and proof.passed
    compact = Scenario("model_file", graph, CompileOptions(soc="ascend910b", strategy="compact"))
    assert case_proofs(compact, observe(compact)) == []
    mutated = Scenario("model_file", graph, CompileOptions(soc="ascend910b"), {"mutation": {"op": "truncate"}})
    assert case_proofs(mutated, []) == []   # a mutated file is the loader's test, not the refresh's
