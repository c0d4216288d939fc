"""PASS-MEMCPY-ADDR-ASYNC's single-op rule on a real file: a single-op build (GE's ATTR_SINGLE_OP_SCENE,
``CompileOptions(single_op=True)``) copies a Data feeding the NetOutput, as an offline build does.

Before, the observer never set the build fact (the compiler had no single-op build), so the rule was judged
only on hand-made observations. Now the model file records the option, the observer transcribes it, and
verify compiles builtin:single_op as a single-op build; a pass that forgets the rule fails there."""
from __future__ import annotations

import importlib

import pytest

from zcspec.checks.scenario import observe
from zcspec.checks.verify import VerifyConfig
from zcspec.checks.verify_cases import zoo_cases
from zcspec.checks.zoo import load
from zcspec.impl.compiler.compile import compile
from zcspec.impl.compiler.observe import observe_model_file
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.check import check

CLAIM = "PASS-MEMCPY-ADDR-ASYNC"
# the module (the package re-exports the pass function under the module's name)
pass_module = importlib.import_module("zcspec.impl.compiler.passes.memcpy_addr_async")
MODEL = "builtin:single_op"


def _single_op_case(kind: str):
    config = VerifyConfig(models=(MODEL,), kinds=(kind,), strategies=("ge",))
    return next(s for label, s in zoo_cases(config) if label == f"{MODEL} [{kind}, single-op build]")


@pytest.mark.parametrize("single_op, offline", [(True, False), (False, True), (False, False)])
def test_the_observer_transcribes_the_build_from_the_file(single_op, offline):
    data = compile(load(MODEL), CompileOptions(single_op=single_op, offline=offline))
    build = observe_model_file(data).build
    assert (build.single_op, build.offline) == (single_op, offline)
    assert not build.feature_base_refreshable


def test_the_single_op_build_holds_and_exercises_the_rule():
    (mf,) = observe(_single_op_case("model_file"))
    report = check(mf)
    assert report.ok, str(report)
    assert mf.build.single_op and CLAIM in report.exercised
    assert [n.type for n in mf.nodes] == ["Data", "MemcpyAddrAsync", "NetOutput"]


def test_a_pass_that_forgets_the_single_op_rule_fails_verify_through_the_claim(monkeypatch):
    original = pass_module._outputs_needing_copy
    monkeypatch.setattr(pass_module, "_outputs_needing_copy", lambda graph, offline: original(graph, False))
    (mf,) = observe(_single_op_case("model_file"))
    report = check(mf)
    assert report.violated() == (CLAIM,), str(report)
    (v,) = report.violations
    assert v.culprit == "edge 'x' -> 'NetOutput'" and "single-op" in v.values["reason"]
