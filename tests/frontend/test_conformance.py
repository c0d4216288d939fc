"""ONNX's backend node tests for every op of the op table, through the front end, the compiler and
both runtimes (checks/conformance): each case passes, or is refused with a message naming a
feature impl/compiler/op_limits.py lists as unsupported. docs/frontend.md's conformance table is
what ``zcspec conformance --markdown`` prints.

The whole sweep (every case, ~600) takes a few seconds, so it is the default run, not ``slow``.
``KNOWN_FAILURES`` (checks/conformance/cases.py) names the cases that still fail, each with why; they
are strict xfails, so a fix shows as an XPASS failure until its entry is removed.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from zcspec.checks.cli.main import main
from zcspec.checks.conformance import node_cases, run_case, tally
from zcspec.checks.conformance.cases import KNOWN_FAILURES
from zcspec.checks.conformance.report import markdown_table
from zcspec.impl.compiler import op_limits

DOC = Path(__file__).resolve().parents[2] / "docs" / "frontend.md"
CASES = node_cases()


def _param(case):
    marks = [pytest.mark.xfail(reason=KNOWN_FAILURES[case.name], strict=True)] if case.name in KNOWN_FAILURES else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_node_case_passes_or_is_refused_naming_a_listed_feature(case):
    r = run_case(case)
    if r.status == "refused":
        named = [f for f in op_limits.features(case.op_types) if f in r.detail]
        assert named, f"refusal names no feature op_limits lists for {case.op_types}: {r.detail}"
        return
    assert r.status == "pass", f"{r.stage}: {r.detail}"


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
    printed = markdown_table(tally(run_case(c) for c in CASES))
    assert m.group(1).strip() == printed.strip(), (
        "docs/frontend.md's conformance table is stale: paste the output of `zcspec conformance --markdown`")


def test_cli_table_and_exit_code(capsys):
    assert main(["conformance", "--op", "Softmax", "--op", "Dropout"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^Softmax +\d+ +\d+ +0 +0 ", out, flags=re.M) and "total (distinct cases)" in out


def test_cli_unknown_op_is_bad_input(capsys):
    assert main(["conformance", "--op", "NoSuchOp"]) == 2
    assert "NoSuchOp" in capsys.readouterr().err
