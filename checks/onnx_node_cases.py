"""ONNX's backend node tests as ``zcspec verify``'s held-out models, judged by the spec.

``node_test_cases(soc) -> NodeTests``: every node test case of claimed ops
(checks/conformance/cases.py ``node_cases``) is imported as ``zcspec conformance`` imports it
(input shapes from the test data, inputs frozen to their test values where the import asks;
checks/conformance/runner.py ``import_case``). A case that imports becomes an execution scenario
of one differential run, ``{"runtime": "differential", "zero_copy": True, "node_test": name}``:
both runtimes on the case's inputs, each output held to the expected outputs ONNX ships with the
case (EXEC-ORACLE; checks/execution/judge.py) and every other execution claim judged on the
observations. A case refused at import naming a feature ``op_limits`` lists as unsupported is
``refused``; any other import error is ``broken`` (an unexplained refusal or a crash of the front
end: a failure). ``KNOWN_FAILURES`` cases are listed, not run.
"""
from __future__ import annotations

import attrs

from zcspec.checks.conformance.cases import KNOWN_FAILURES, node_cases
from zcspec.checks.conformance.runner import import_case, named_feature
from zcspec.checks.scenario import Scenario
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.platform.errors import BadInput


@attrs.frozen
class NodeTests:
    """``cases``: (case label, Scenario) to run; ``refused`` / ``broken``: (case name, why);
    ``known``: (case name, why) of the known failures left out; ``refused_features``: (case name,
    the listed feature its refusal names); ``frozen``: (case name, inputs frozen to their test values
    at the front end's request) of every imported or refused case: what checks/conformance/
    import_record.py compares with the record."""

    cases: tuple = ()
    refused: tuple = ()
    broken: tuple = ()
    known: tuple = ()
    refused_features: tuple = ()
    frozen: tuple = ()


def label(name: str) -> str:
    return f"onnx node test {name}"


def node_test_cases(soc: str) -> NodeTests:
    cases, refused, broken, known, features, frozen_inputs = [], [], [], [], [], []
    for case in node_cases():
        if case.name in KNOWN_FAILURES:
            known.append((case.name, KNOWN_FAILURES[case.name]))
            continue
        frozen: dict = {}
        try:
            graph = import_case(case, frozen)
        except BadInput as e:
            feature = named_feature(case, e)
            (refused if feature else broken).append((case.name, f"{type(e).__name__}: {e}"))
            if feature:
                features.append((case.name, feature))
                frozen_inputs.append((case.name, tuple(sorted(frozen))))
            continue
        except Exception as e:  # a crash of the front end is a bug
            broken.append((case.name, f"{type(e).__name__}: {e}"))
            continue
        frozen_inputs.append((case.name, tuple(sorted(frozen))))
        run = {"runtime": "differential", "zero_copy": True, "node_test": case.name}
        cases.append((label(case.name), Scenario("execution", graph, CompileOptions(soc=soc), {"runs": [run]})))
    return NodeTests(tuple(cases), tuple(refused), tuple(broken), tuple(known), tuple(features), tuple(frozen_inputs))
