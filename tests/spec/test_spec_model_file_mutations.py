"""Mutated model files (checks/strategies/model_files.py): the loader refuses every one, MF-WELL-FORMED is
exercised exactly by the malformed ones, and a loader that stops checking is caught."""
from __future__ import annotations

import pytest
from hypothesis import given, settings

from zcspec.checks.errors import ScenarioError
from zcspec.checks.faults.variant import swap
from zcspec.checks.scenario import Scenario, evaluate
from zcspec.checks.strategies.model_files import (
    OPS, determined_fields, edit, field_sweep, fixed_mutations, mutate, mutations,
)
from zcspec.checks.zoo import load
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.observe import observe_model_file
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.check import check

GRAPH = load("builtin:atomic_clean")
STAGES = compile_stages(GRAPH, CompileOptions())
DATA = encode(STAGES.model)
WELL_FORMED_HEADER = ("bad_offset", "bad_region", "field")


@pytest.mark.parametrize("op", OPS)
def test_every_mutation_is_refused_and_only_malformed_headers_exercise_well_formed(op):
    obs = observe_model_file(mutate(DATA, {"op": op, "at": 12345}), STAGES.graph)
    assert not obs.load.accepted
    report = check(obs)
    assert report.ok
    assert ("MF-WELL-FORMED" in report.exercised) == (op not in WELL_FORMED_HEADER)


@settings(max_examples=40, deadline=None)
@given(mutations())
def test_drawn_mutations_are_refused(m):
    assert not observe_model_file(mutate(DATA, m), STAGES.graph).load.accepted


def test_a_loader_that_skips_the_header_checks_is_caught():
    """Break the loader on purpose: it no longer checks magic, version, lengths or checksum."""
    bad = mutate(DATA, {"op": "bad_digest", "at": 3})
    with swap("zcspec.impl.compiler.model_file.load", "_header",
              lambda header: (lambda data: header(data[:32] + __import__("hashlib").sha256(data[64:]).digest()
                                                  + data[64:]))):
        report = check(observe_model_file(bad, STAGES.graph))
    assert [v.invariant_id for v in report.violations] == ["MF-WELL-FORMED"]


def test_a_loader_that_skips_the_slot_checks_is_caught():
    """A re-packed file with a slot past its region has a valid header: only the slot claim can tell.
    (The loader refuses it twice over, by the slot check and by the plan-consistency check: both go.)"""
    module = "zcspec.impl.compiler.model_file.load"
    with swap(module, "_check_slot", lambda f: (lambda *a, **k: None)), \
            swap(module, "check_consistency", lambda f: (lambda *a, **k: None)):
        obs = observe_model_file(mutate(DATA, {"op": "bad_offset", "at": 0}), STAGES.graph)
    assert obs.load.accepted
    assert "MF-SLOT-IN-REGION" in {v.invariant_id for v in check(obs).violations}


def test_verify_scenarios_carry_the_mutation_and_reject_a_bad_one():
    (m, *_) = fixed_mutations()
    (report,) = evaluate(Scenario("model_file", GRAPH, CompileOptions(), {"mutation": m}))
    assert "MF-WELL-FORMED" in report.exercised and report.ok
    with pytest.raises(ScenarioError, match="runtime.mutation.op"):
        evaluate(Scenario("model_file", GRAPH, CompileOptions(), {"mutation": {"op": "shred", "at": 0}}))
    assert len({(x["op"], x["at"]) for x in fixed_mutations(1)}) == 2 * (len(OPS) - 1)   # "field": field_sweep


def test_every_determined_field_changed_alone_is_refused():
    """The sweep verify runs: each field another part of the file determines, changed to a near value of
    its type and re-signed, is refused (the loader's cross-checks), and MF-DETERMINED is exercised."""
    sweep = field_sweep(DATA)
    assert len(sweep) == len(determined_fields(DATA)) > 100
    for m in sweep:
        data, path = edit(DATA, m)
        obs = observe_model_file(data, STAGES.graph, edited=path, built=STAGES.model)
        assert not obs.load.accepted, f"{'.'.join(map(str, path))} changed and the file still loaded"
        report = check(obs)
        assert report.ok and "MF-DETERMINED" in report.exercised


def test_a_free_field_is_never_swept_nor_judged():
    assert all(p[0] != "name" and p[-1] not in ("first", "last") for p in determined_fields(DATA))
    obs = observe_model_file(DATA, STAGES.graph, edited=("name",), built=STAGES.model)
    assert "MF-DETERMINED" not in check(obs).exercised


@pytest.mark.parametrize("check_name, field", [("_block_sizes", ("plan", "blocks")),
                                               ("_tensor_sizes", ("plan", "tensors"))])
def test_a_loader_that_skips_a_size_cross_check_is_caught(check_name, field):
    """Break the loader on purpose: it no longer recomputes block (or tensor) sizes from what they hold."""
    with swap("zcspec.impl.compiler.model_file.consistency", check_name, lambda f: (lambda *a, **k: None)):
        violated = set()
        for m in field_sweep(DATA):
            data, path = edit(DATA, m)
            if path[:2] == field and path[-1] == "size":
                obs = observe_model_file(data, STAGES.graph, edited=path, built=STAGES.model)
                violated |= {v.invariant_id for v in check(obs).violations}
    assert "MF-DETERMINED" in violated
