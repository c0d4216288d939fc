"""The zcspec pytest plugin, run the way a user's suite runs it (pytester)."""
from __future__ import annotations

from importlib import metadata

import pytest

# pytester drops the modules a test imported when it ends, and numpy cannot be imported twice
# in one process: import what the user tests reach here, before pytester's snapshot.
import zcspec.checks.scenario  # noqa: F401
import zcspec.checks.zoo  # noqa: F401
import zcspec.impl.compiler.compile  # noqa: F401
import zcspec.impl.compiler.model_file.encode  # noqa: F401
import zcspec.impl.compiler.observe  # noqa: F401
import zcspec.spec.check  # noqa: F401
import zcspec.spec.examples  # noqa: F401
from zcspec.checks.pytest_plugin import SpecViolation, assert_spec_holds, parse_kinds

pytest_plugins = ["pytester"]


@pytest.fixture
def suite(pytester, monkeypatch):
    """A user's test folder; the plugin is loaded explicitly so the test does not depend on what else
    the environment auto-loads (the entry point itself is tested below)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")

    def run(source: str, *args: str):
        pytester.makepyfile(test_user=source)
        return pytester.runpytest_inprocess("-p", "zcspec.checks.pytest_plugin", *args)

    return run


GOOD = """
from zcspec.impl.compiler.builder import GraphBuilder

def _graph():
    b = GraphBuilder("user_graph")
    x = b.input("x", (2, 8))
    b.output(b.op("Relu", [b.op("Add", [x, x])]))
    return b.build()

def test_my_graph(zcspec_check):
    reports = zcspec_check(_graph())
    assert [r.kind for r in reports] == ["plan", "model_file"]

def test_zoo_graph(zcspec_check):
    zcspec_check("builtin:atomic_clean")
"""

# A plan observation from "another planner": c reuses a's bytes while a is alive (spec/examples).
BAD = """
from zcspec.checks.pytest_plugin import assert_spec_holds
from zcspec.spec.examples import all_examples

def test_foreign_plan(zcspec_check):
    zcspec_check(all_examples()["LAYOUT-NO-OVERLAP"].violates)

def test_without_the_fixture():
    assert_spec_holds(all_examples()["LAYOUT-NO-OVERLAP"].violates)
"""


def test_a_good_graph_passes(suite):
    result = suite(GOOD)
    result.assert_outcomes(passed=2)


def test_a_bad_plan_fails_naming_the_invariant_and_culprit(suite):
    result = suite(BAD)
    result.assert_outcomes(failed=2)
    text = result.stdout.str()
    assert "LAYOUT-NO-OVERLAP" in text
    assert "culprit: tensor 'a' and tensor 'c'" in text
    assert "the spec says:" in text
    assert "the given PlanObservation" in text


def test_kinds_from_option_and_marker(suite):
    source = """
import pytest
from zcspec.impl.compiler.builder import GraphBuilder

def _graph():
    b = GraphBuilder("g")
    b.output(b.op("Relu", [b.input("x", (2, 8))]))
    return b.build()

def test_option(zcspec_check):
    assert [r.kind for r in zcspec_check(_graph())] == ["plan"]

@pytest.mark.zcspec(kinds=("model_file",))
def test_marker(zcspec_check):
    assert [r.kind for r in zcspec_check(_graph())] == ["model_file"]
"""
    suite(source, "--zcspec-kinds", "plan").assert_outcomes(passed=2)


def test_unknown_kind_is_a_usage_error(suite):
    result = suite("def test_x():\n    pass\n", "--zcspec-kinds", "plan,bogus")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "bogus" in result.stderr.str()


def test_the_entry_point_is_registered():
    eps = [ep for ep in metadata.entry_points(group="pytest11") if ep.name == "zcspec"]
    assert [ep.value for ep in eps] == ["zcspec.checks.pytest_plugin"]


def test_assert_spec_holds_reports_and_raises():
    from zcspec.spec.examples import all_examples

    ex = all_examples()["MEM-ZC-NOMERGE"]
    reports = assert_spec_holds(ex.satisfies)
    assert "MEM-ZC-NOMERGE" in reports[0].exercised
    with pytest.raises(SpecViolation) as info:
        assert_spec_holds(ex.violates)
    assert {v.invariant_id for _, v in info.value.violations} == {"MEM-ZC-NOMERGE"}
    assert ex.culprit in str(info.value)


def test_bad_subjects_and_kinds_are_named():
    with pytest.raises(TypeError, match="cannot check a int"):
        assert_spec_holds(3)
    with pytest.raises(ValueError, match="bogus"):
        parse_kinds("plan,bogus")


def test_the_guide_example_runs(suite):
    """docs/checker.md's plugin example, run as a user's test file (examples in docs run as tests)."""
    import pathlib
    import re

    guide = pathlib.Path(__file__).parents[2] / "docs" / "checker.md"
    example = re.search(r"```python\n(.*?)```", guide.read_text(), re.S).group(1)
    suite(example).assert_outcomes(passed=2)


def test_a_failing_plan_observation_is_saved_as_a_plan_file_that_replays(suite, tmp_path):
    from zcspec.checks.cli.main import main

    folder = tmp_path / "kept"
    result = suite(BAD, "--zcspec-save", str(folder))
    result.assert_outcomes(failed=2)
    kept = sorted(folder.glob("*.json"))
    assert kept and "saved for zcspec replay" in result.stdout.str()
    assert main(["replay", str(kept[0])]) == 1      # still violates: replay says so


def test_the_plugin_loads_nothing_heavy_until_a_test_uses_it(pytester, monkeypatch):
    """The plugin is loaded into every pytest run of the environment: a suite that never uses it must
    not pay for onnx or the compiler (a subprocess: this process has them loaded already)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_light="""
import sys

def test_nothing_heavy_is_loaded():
    heavy = [m for m in ("onnx", "numba", "z3", "zcspec.impl.compiler.compile", "zcspec.checks.zoo")
             if m in sys.modules]
    assert heavy == []
""")
    result = pytester.runpytest_subprocess("-p", "zcspec.checks.pytest_plugin")
    result.assert_outcomes(passed=1)


def test_inside_given_the_supported_way_is_assert_plan_ok(pytester, monkeypatch):
    """The docs' way to check inside ``@given``: ``zcspec.assert_plan_ok``, no function-scoped fixture, so
    Hypothesis's health check stays quiet and a failing example shrinks. Imported by name at the top, it
    loads the checker with the test module, not in the first example (Hypothesis's deadline is on)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_given="""
from hypothesis import given, settings, strategies as st
from zcspec import assert_plan_ok

def plan(size):
    t = lambda name, first, last: {"name": name, "region": "a", "offset": 0, "size": size, "aligned_size": size,
                                   "first": first, "last": last, "block": None, "zero_copy": False, "alias_of": None}
    return {"order": ["p", "q"], "arenas": {"a": {"kind": "activations", "alignment": 1}}, "regions": {"a": size},
            "tensors": [t("x", 0, 0), t("y", 1, 1)], "consumers": {}, "writes": {"x": [0], "y": [1]}}

@settings(max_examples=20, database=None)
@given(st.integers(1, 4096))
def test_disjoint_lives_may_share(size):
    assert_plan_ok(plan(size))
""")
    result = pytester.runpytest_subprocess("-p", "zcspec.checks.pytest_plugin")
    result.assert_outcomes(passed=1)
