"""ONNX's backend node tests for every op of the op table, through the front end, the compiler and
both runtimes (checks/conformance), as the files are and with run-time operands frozen: each case
passes, or is refused with a message naming a feature impl/compiler/op_limits.py lists as
unsupported; as the files are, a case differs from its frozen run only by a refusal for an operand
that decides a shape, a size or the task list. docs/frontend.md's conformance table is what
``zcspec conformance --markdown`` prints.

The whole sweep (every case, ~600) takes a few seconds, so it is the default run, not ``slow``.
``KNOWN_FAILURES`` (checks/conformance/cases.py) names the cases that still fail, each with why; they
are strict xfails, so a fix shows as an XPASS failure until its entry is removed.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from zcspec.checks.cli.main import main
from zcspec.checks.conformance import node_cases, run_both, tally
from zcspec.checks.conformance.cases import KNOWN_FAILURES
from zcspec.checks.conformance.report import markdown_table
from zcspec.impl.compiler import op_limits

DOC = Path(__file__).resolve().parents[2] / "docs" / "frontend.md"
CASES = node_cases()
RESULTS: dict = {}   # case name -> Both, so the docs table does not run every case a second time


def _both(case):
    if case.name not in RESULTS:
        RESULTS[case.name] = run_both(case)
    return RESULTS[case.name]


def _param(case):
    marks = [pytest.mark.xfail(reason=KNOWN_FAILURES[case.name], strict=True)] if case.name in KNOWN_FAILURES else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_node_case_passes_or_is_refused_naming_a_listed_feature(case):
    both = _both(case)
    for way, r in (("as the file is", both.as_is), ("frozen", both.frozen)):
        if r.status == "refused":
            named = [f for f in op_limits.features(case.op_types) if f in r.detail]
            assert named, f"{way}: refusal names no feature op_limits lists for {case.op_types}: {r.detail}"
            continue
        assert r.status == "pass", f"{way}: {r.stage}: {r.detail}"
    if both.as_is.status != both.frozen.status:   # only a shape-, size- or task-deciding run-time operand
        assert both.as_is.runtime_operand, f"as the file is: {both.as_is.detail}"
        assert " decides " in both.as_is.detail or "the shape of " in both.as_is.detail, both.as_is.detail
    if both.as_is.status == "pass":
        assert not both.as_is.frozen


def test_known_failures_are_cases_that_exist():
    assert set(KNOWN_FAILURES) <= {c.name for c in CASES}


def test_the_cases_are_the_claimed_ops_node_tests():
    ops_seen = {op for c in CASES for op in c.op_types}
    assert {"Softmax", "ReduceSum", "Max", "Min", "Reshape", "Squeeze", "Unsqueeze", "Dropout",
            "BatchNormalization"} <= ops_seen
    assert all(c.model.graph.node for c in CASES) and len({c.name for c in CASES}) == len(CASES)


def test_the_docs_table_is_what_the_command_prints():
    text = DOC.read_text(encoding="utf-8")
    m = re.search(r"<!-- conformance:begin -->\n(.*?)\n<!-- conformance:end -->", text, flags=re.S)
    assert m, "docs/frontend.md has no conformance table between its markers"
    results = [_both(c) for c in CASES]
    printed = markdown_table(tally(results), results)
    assert m.group(1).strip() == printed.strip(), (
        "docs/frontend.md's conformance table is stale: paste the output of `zcspec conformance --markdown`")


def test_cli_table_and_exit_code(capsys):
    assert main(["conformance", "--op", "Softmax", "--op", "Dropout"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^Softmax +(\d+) +\1 +0 +0 +0 +\1 +0 +0$", out, flags=re.M) and "total (distinct cases)" in out
    assert re.search(r"^Dropout +12 +6 +6 +0 +6 +8 +4 +0$", out, flags=re.M), out


def test_value_only_operands_are_not_frozen():
    """Clip's node tests give min and max as graph inputs: they pass as the files are, nothing frozen."""
    clip = [_both(c) for c in CASES if c.op_types == ("Clip",)]
    assert len(clip) >= 10 and all(b.as_is.status == "pass" and not b.as_is.frozen for b in clip)
    assert any(len(c.input_names) == 3 for c in CASES if c.op_types == ("Clip",))


def test_cli_unknown_op_is_bad_input(capsys):
    assert main(["conformance", "--op", "NoSuchOp"]) == 2
    assert "NoSuchOp" in capsys.readouterr().err
