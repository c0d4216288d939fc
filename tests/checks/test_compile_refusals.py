"""verify's front-end cases refused when compiled (``FrontendCase.at == "compile"``, checks/graph_json_cases.py):
graph JSON files that import (``zcspec plan`` takes them) but that compile must refuse, with the case's
CompileOptions. Before them verify never compiled a graph compile must refuse: a compiler that dropped
one of these refusals compiled it and verify passed (validate.py ``no_set_sizes`` and the unknown-pass
check were never reached). Each bug installed below now fails its case."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks import models
from zcspec.checks.frontend_case import FrontendCase
from zcspec.checks.frontend_cases import frontend_cases
from zcspec.impl.compiler import compile as compile_module
from zcspec.impl.compiler import options as options_module
from zcspec.impl.compiler import passes
from zcspec.impl.compiler.memory import continuous_groups, lifetimes
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.validate import no_set_sizes

from tests.helpers.frontend_cases import run_cases

COMPILE_CASES = tuple(c.name for c in frontend_cases() if c.at == "compile")


def test_the_compile_cases_cover_set_sizes_options_and_the_planner():
    by_name = {c.name: c for c in frontend_cases() if c.at == "compile"}
    assert {"graph_json_set_size_compiled", "graph_json_unknown_soc", "graph_json_unknown_strategy",
            "graph_json_unknown_disabled_pass", "graph_json_negative_workspace",
            "graph_json_weight_in_continuous_inputs", "graph_json_continuous_output_into_concat"} <= set(by_name)
    assert {c.refused for c in by_name.values()} == {"GraphError", "UnknownSocError", "OptionError", "PlanError"}
    assert all(isinstance(c.model, str) and c.culprits for c in by_name.values())


def test_the_real_compiler_refuses_each_as_expected(monkeypatch):
    out = run_cases(monkeypatch, *COMPILE_CASES)
    assert out.errors == {} and out.findings == {}


def test_a_compile_that_takes_set_sizes_fails_the_set_size_case(monkeypatch):
    """The planted bug: compile without validate.py's no_set_sizes (the name compile_stages calls)."""
    monkeypatch.setattr(compile_module, "no_set_sizes", lambda graph: graph)
    out = run_cases(monkeypatch, *COMPILE_CASES)
    assert out.errors.keys() == {"front-end case graph_json_set_size_compiled"}
    assert out.caught("graph_json_set_size_compiled").startswith(
        "compiles with soc='ascend910b'; expected a GraphError naming 'y', set size 64 bytes, no set sizes")


def test_a_compile_that_ignores_unknown_passes_to_disable_fails(monkeypatch):
    monkeypatch.setattr(passes, "check_disabled_passes", lambda names: None)
    out = run_cases(monkeypatch, *COMPILE_CASES)
    assert out.errors.keys() == {"front-end case graph_json_unknown_disabled_pass"}
    assert "compiles with soc='ascend910b', disabled_passes=frozenset({'fold_everything'}); expected a OptionError" \
        in out.caught("graph_json_unknown_disabled_pass")


def test_a_compile_that_falls_back_to_the_default_soc_fails(monkeypatch):
    real = options_module.get_soc
    monkeypatch.setattr(options_module, "get_soc", lambda name=None: real(name if name in ("legacy", "nozc",
                                                                                            "ascend310p") else None))
    assert "compiles with soc='ascend999'" in run_cases(monkeypatch, "graph_json_unknown_soc").caught(
        "graph_json_unknown_soc")


def test_a_planner_that_skips_negative_workspaces_fails(monkeypatch):
    def skipping(graph, order):   # lifetimes._workspaces without its check: a negative size gets no block
        return tuple(lifetimes.Workspace(f"{name}#ws{i}", name, i, nbytes, s) for s, name in enumerate(order)
                     for i, nbytes in enumerate(graph.node[name].attr("_workspace_bytes", ())) if nbytes > 0)

    monkeypatch.setattr(lifetimes, "_workspaces", skipping)
    assert "compiles with soc='ascend910b'; expected a PlanError" in run_cases(
        monkeypatch, "graph_json_negative_workspace").caught("graph_json_negative_workspace")


def test_a_planner_that_puts_weights_in_continuous_blocks_fails(monkeypatch):
    monkeypatch.setattr(continuous_groups, "_planned_root", lambda graph, lt, name, t: lt.root[t])
    caught = run_cases(monkeypatch, "graph_json_weight_in_continuous_inputs").caught(
        "graph_json_weight_in_continuous_inputs")
    # the planner then crashes looking the weight up among its blocks: a CRASH of the case, not its refusal
    assert caught.startswith("compiling with soc='ascend910b', disabled_passes=frozenset({'mem_layout_conflict'}): ")


def test_a_file_refused_at_import_fails_a_compile_case(monkeypatch):
    """The refusal must come from compile: a reader refusing set sizes would refuse what `zcspec plan` takes."""
    real = models.validate
    monkeypatch.setattr(models, "validate", lambda graph: no_set_sizes(real(graph)))
    caught = run_cases(monkeypatch, "graph_json_set_size_compiled").caught("graph_json_set_size_compiled")
    assert caught.startswith("refused at import (GraphError: ") and "must import and be refused when compiled" in caught


def test_a_compile_crash_is_a_crash_of_the_case(monkeypatch):
    def crash(graph, options):
        raise KeyError("boom")

    monkeypatch.setattr(compile_module, "run_passes", crash)
    out = run_cases(monkeypatch, "graph_json_unknown_strategy")
    assert out.caught("graph_json_unknown_strategy") == \
        "compiling with soc='ascend910b', strategy='fastest': KeyError: 'boom'"


def test_a_wrong_refusal_class_or_culprit_fails(monkeypatch):
    (case,) = [c for c in frontend_cases() if c.name == "graph_json_unknown_strategy"]
    wrong = (attrs.evolve(case, refused="UnknownSocError"), attrs.evolve(case, culprits=("'slowest'",)))
    monkeypatch.setattr("zcspec.checks.verify_onnx_cases.frontend_cases", lambda: wrong)
    from zcspec.checks.verify import VerifyConfig, VerifyResult
    from zcspec.checks.verify_onnx_cases import check_frontend_cases
    result = VerifyResult()
    check_frontend_cases(result, VerifyConfig(models=()).soc)
    (class_, culprit) = (why for _, why in result.errors)
    assert "expected a UnknownSocError" in class_ and "does not name 'slowest'" in culprit


@pytest.mark.parametrize("fields, error", [
    ({"at": "link", "refused": "GraphError"}, ValueError),
    ({"at": "compile"}, ValueError),                                   # nothing to refuse: that is an import case
    ({"options": CompileOptions()}, ValueError),                       # options for an import
    ({"at": "compile", "refused": "GraphError", "options": {"soc": "nozc"}}, TypeError),
    ({"refused": "GraphError", "culprits": ["'y'"]}, TypeError),
    ({"refused": ""}, ValueError),
])
def test_the_case_type_refuses_what_it_cannot_mean(fields, error):
    with pytest.raises(error):
        FrontendCase("c", "{}", **fields)


def test_the_case_type_is_frozen():
    case = FrontendCase("c", "{}", "GraphError", at="compile", options=CompileOptions(soc="nozc"))
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        case.at = "import"
