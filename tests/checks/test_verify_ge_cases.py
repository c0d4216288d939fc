"""verify's phase "GE's unit-test cases": the catalogue of GE's ported unit tests (checks/cases/ge) runs when
the ``ge`` strategy is verified; a case that matched GE and stops matching fails the run naming GE's file and
TEST_F, and so does a recorded deviation that starts matching (its record is stale)."""
from __future__ import annotations

import json
import re

import attrs

from zcspec.checks.cases.ge.all import CASES
from zcspec.checks.cli.main import main
from zcspec.checks.cli.verify import ERROR_LABELS
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.checks.verify_result import ERROR_KINDS
from zcspec.impl.compiler import ops
from zcspec.impl.compiler.memory import lifetimes, rules

# Only the phases a plan-only run without proofs, campaign or corpus has: the other compilers' plans and GE's.
GE_ONLY = VerifyConfig(models=(), strategies=("ge",), kinds=("plan",), examples=0, proofs=False, corpus=False,
                       onnx_node_tests=False, acl_refusals=False)
PHASE = "GE's unit-test cases"


def _ge_errors(result) -> list[tuple[str, str, str]]:
    """(case label, message, kind) of the run's errors that name a GE test."""
    return [(case, message, kind) for (case, message), kind in zip(result.errors, result.error_kinds)
            if " TEST_F " in case]


def test_the_phase_passes_on_the_real_code(tmp_path):
    result = verify(attrs.evolve(GE_ONLY, artefacts=str(tmp_path)))
    result.artefacts.finish([], {})
    assert result.ge_cases == (len(CASES), 0) and not result.errors, result.errors[:3]
    assert len(CASES) >= 120 and {c.status for c in CASES} == {"match", "deviation"}
    assert PHASE in dict(result.timings)
    lines = [json.loads(line) for line in (tmp_path / "ge-cases.jsonl").read_text().splitlines()]
    assert [line["case"] for line in lines] == [c.label for c in CASES]
    assert {line["verdict"] for line in lines} == {"match", "deviates"}


def test_the_phase_runs_only_for_the_ge_strategy():
    for config in (attrs.evolve(GE_ONLY, strategies=("compact",)), attrs.evolve(GE_ONLY, ge_cases=False)):
        result = verify(config)
        assert result.ge_cases == (0, 0) and PHASE not in dict(result.timings)


def test_a_planted_planner_fault_fails_the_phase_naming_the_case(monkeypatch):
    # GE's InitReuseFlag takes "FooV1".."FooV4" for "Foo" (MatchNoReuseType: DropOutGenMaskV5 stays reusable).
    # The fault takes any version for its base type: DropOutGenMaskV5's outputs would never be reused.
    monkeypatch.setattr(rules, "_VERSIONED", re.compile(r"^(.*)V\d+$"))
    result = verify(GE_ONLY)
    assert result.failing() and result.ge_cases == (len(CASES), 1)
    ((case, message, kind),) = _ge_errors(result)
    assert case.startswith("block_mem_assigner_unittest.cc TEST_F MatchNoReuseType (")
    assert "MatchNoReuseType[DropOutGenMaskV5-True]" in case and kind == "check"
    assert message.startswith("GE expects rules.reusable_producer(op_type) is reusable; in zcspec it does not hold")


def test_a_fault_in_a_plan_rule_names_each_ge_test_it_breaks_and_fail_fast_stops_at_the_first(monkeypatch):
    # The fault forgets ``no_zero_copy_ops`` (GE: an engine that cannot refresh addresses, DSA or HCCL, keeps
    # its output out of zero copy, IsNodeSupportZeroCopy): those outputs become zero copy.
    monkeypatch.setattr(rules, "supports_zero_copy", lambda op_type, options: ops.info(op_type).zero_copy)
    broken = {case.split(" (")[0] for case, _, _ in _ge_errors(verify(GE_ONLY))}
    assert broken == {"block_mem_assigner_unittest.cc TEST_F IsZeroCopyBlock_unsupport_dsa",
                      "block_mem_assigner_unittest.cc TEST_F IsZeroCopyBlock_unsupport_hccl",
                      "block_mem_assigner_unittest.cc TEST_F IsZeroCopyBlock_unsupport_addhccl",
                      "mem_assigner_unittest.cc TEST_F graph_ref_not_zero_copy"}
    result = verify(attrs.evolve(GE_ONLY, fail_fast=True))
    assert len(_ge_errors(result)) == 1 and result.ge_cases[0] < len(CASES)
    assert result.stopped.endswith(PHASE) and PHASE not in dict(result.timings)


def test_a_deviation_that_starts_matching_is_reported(monkeypatch):
    # Row P6: GE's GetNodeWorkSpaceSize takes a workspace of -1 as 0, zcspec refuses it. Planted: zcspec does
    # as GE does, so the recorded deviation ValidWorkSpaceNeg1 now matches and its record is stale.
    real = lifetimes._workspaces

    def minus_one_as_zero(graph, order):
        nodes = [n.with_attrs(_workspace_bytes=tuple(0 if b == -1 else b for b in n.attr("_workspace_bytes")))
                 if n.attr("_workspace_bytes", ()) else n for n in graph.nodes]
        return real(attrs.evolve(graph, nodes=nodes), order)

    monkeypatch.setattr(lifetimes, "_workspaces", minus_one_as_zero)
    ((case, message, kind),) = _ge_errors(verify(GE_ONLY))
    assert case.startswith("mem_assigner_unittest.cc TEST_F ValidWorkSpaceNeg1 (") and kind == "check"
    assert message.startswith("recorded as a deviation (docs/ge-deviations.md row P6: GE: SUCCESS")
    assert "the record is stale" in message


def test_the_command_line_names_a_failed_ge_case_as_a_failed_check_not_a_crash(monkeypatch, capsys):
    """verify's report prints each error by its kind (a GE case that stops matching is one of verify's
    checks failing, not a crash of the code under test) and counts the kinds apart in its verdict."""
    monkeypatch.setattr(rules, "_VERSIONED", re.compile(r"^(.*)V\d+$"))
    code = main(["verify", "--no-execution", "--no-proofs", "--examples", "0", "--strategy", "ge", "--quiet"])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAILED CHECK in block_mem_assigner_unittest.cc TEST_F MatchNoReuseType (" in out
    assert "CRASH in block_mem_assigner" not in out
    assert f"GE's unit-test cases (checks/cases/ge, ge strategy): {len(CASES)} run, 1 failed" in out
    assert "0 crashes, 0 refusals of its own artefacts, 1 failed checks" in out


def test_every_error_kind_has_its_label():
    assert set(ERROR_LABELS) == set(ERROR_KINDS)


def test_a_plan_of_a_ge_graph_that_breaks_a_claim_is_that_claim_s_finding(monkeypatch):
    """The mutation run's continuous_groups.py:118 (the separate-clean groups never recorded): the plans of GE's
    continuous-input tests break MEM-CONT-INPUT. verify reports those as findings of the claim on the GE test,
    not as errors of the phase: the claim caught the bug (benchmarks/mutation/attribution.py counts it so)."""
    from zcspec.impl.compiler.memory import units
    monkeypatch.setattr(units, "clean_sets", lambda *a: [])
    result = verify(GE_ONLY)
    assert result.failing() and result.ge_cases[1] > 0
    ids = {f.violation.invariant_id for f in result.findings}
    assert "MEM-CONT-INPUT" in ids, ids
    assert all(" TEST_F " in f.case for f in result.findings)
    assert not any("breaks the spec" in message for _, message, _ in _ge_errors(result))
