"""verify puts crafted models to the front end (checks/frontend_cases.py): unsorted nodes, an If its
initializers decide, a cycle in an ONNX file and in a graph JSON file, a missing tensor, an unknown op and
an opset-6 training-mode BatchNormalization, and an opset-7 one with spatial=0. Each bug below survived
verify before these cases."""
from __future__ import annotations

import networkx as nx
import pytest

from zcspec.checks.frontend_cases import FrontendCase, check_refusal, frontend_cases
from zcspec.checks.verify import VerifyConfig, VerifyResult, _frontend_cases
from zcspec.impl.compiler import op_limits, topology
from zcspec.impl.compiler.errors import CycleError
from zcspec.impl.compiler.frontend import onnx_graph


def _errors() -> dict[str, str]:
    result = VerifyResult()
    _frontend_cases(result, VerifyConfig(models=()))
    assert not result.findings, [(f.case, str(f.violation)) for f in result.findings]
    return dict(result.errors)


def test_the_real_front_end_meets_every_case():
    assert _errors() == {}


def test_the_cases_cover_imports_and_refusals():
    cases = frontend_cases()
    assert {c.refused for c in cases} >= {None, "CycleError", "MissingTensorError", "UnsupportedOpError",
                                          "UnsupportedFeatureError"}
    assert any(isinstance(c.model, str) for c in cases) and len({c.name for c in cases}) == len(cases)


def test_an_import_that_ignores_dependencies_fails_the_unsorted_case(monkeypatch):
    def in_file_order(graph, names, writer):
        return list(range(len(names)))

    monkeypatch.setattr(onnx_graph, "_execution_order", in_file_order)
    errors = _errors()
    assert "front-end case unsorted_nodes" in errors and "must import" in errors["front-end case unsorted_nodes"]


def test_a_training_mode_batchnorm_let_through_fails(monkeypatch):
    monkeypatch.setitem(op_limits.UNSUPPORTED, "BatchNormalization",
                        tuple(e for e in op_limits.UNSUPPORTED["BatchNormalization"] if e.key != "is-test"))
    assert "imports; expected a UnsupportedFeatureError" in _errors()["front-end case batchnorm_opset6_training"]


def test_a_cycle_report_that_crashes_fails(monkeypatch):
    monkeypatch.setattr(topology, "dependency_graph", lambda graph: None)
    assert "front-end case graph_json_cycle" in _errors()


def test_check_refusal_wants_the_class_and_the_culprits():
    case = FrontendCase("c", "{}", "CycleError", ("'a'", "'b'"))
    assert check_refusal(case, CycleError(("a", "b"))) is None
    assert "does not name 'b'" in check_refusal(case, CycleError(("a", "c")))
    assert "expected a CycleError" in check_refusal(case, ValueError("nope"))
    assert "must import" in check_refusal(FrontendCase("d", "{}"), ValueError("nope"))


def test_the_cycle_case_really_has_a_cycle():
    (case,) = [c for c in frontend_cases() if c.name == "graph_json_cycle"]
    from zcspec.impl.compiler import graph_json
    g = topology.dependency_graph(graph_json.from_json(case.model))
    assert nx.find_cycle(g)
    with pytest.raises(CycleError):
        topology.execution_order(graph_json.from_json(case.model))


def test_a_batchnorm_kernel_that_ignores_spatial_fails(monkeypatch):
    """Before this case no verify model had spatial=0: a kernel normalising per channel regardless passed."""
    from zcspec.impl.device.kernels import common

    real = common.KERNELS["BatchNormalization"]

    class PerChannel:   # the task as the kernel sees it, with spatial forced back to 1
        def __init__(self, task):
            self._task = task

        def __getattr__(self, name):
            return getattr(self._task, name)

        def attr(self, key, default=None):
            return 1 if key == "spatial" else self._task.attr(key, default)

    def per_channel(task, ins, outs):
        x, scale, bias, mean, var = ins
        flat = [p.reshape(-1)[: x.shape[1]] for p in (scale, bias, mean, var)]
        return real(PerChannel(task), [x, *flat], outs)

    monkeypatch.setitem(common.KERNELS, "BatchNormalization", per_channel)
    result = VerifyResult()
    _frontend_cases(result, VerifyConfig(models=()))
    assert {(f.case, f.violation.invariant_id) for f in result.findings} == {
        ("front-end case batchnorm_opset7_per_activation [execution]", "EXEC-ORACLE")}
