"""The fault catalogue: every variant installs and uninstalls cleanly, fast variants are hunted
down by the checker, the real code passes the same hunts, and a counterexample found on a variant
replays (and its exported pytest file fails under the variant, passes on the real code)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from zcspec.checks.counterexample import Counterexample
from zcspec.checks.faults import registry
from zcspec.checks.errors import UnknownVariant
from zcspec.checks.faults.hunt import hunt
from zcspec.checks.faults.variant import AREAS, preload
from zcspec.checks.replay import export_pytest, replay
from zcspec.impl.compiler.memory.plan import plan_memory

from zcspec.checks.cases.ge.graph import GE_SIZES, GeGraph

FAST = ("zc-align-32", "lifetime-half-open", "v1-size-slack-sign", "v2-azc-fallback")


def test_catalogue_has_twelve_detectable_variants_with_unique_names_in_every_area():
    vs = registry.variants()
    assert len({v.name for v in vs}) == len(vs)
    assert sum(1 for v in vs if not v.known_gap) >= 12
    assert {v.area for v in vs} == set(AREAS)
    assert all(v.bug and v.expected for v in vs)


def test_unknown_variant_names_the_known_ones():
    with pytest.raises(UnknownVariant, match="zc-align-32"):
        registry.get("no-such-bug")


def _bound_objects():
    import importlib

    preload()
    mods = ["zcspec.impl.compiler.memory.offsets", "zcspec.impl.compiler.memory.compact", "zcspec.impl.compiler.memory.lifetimes",
            "zcspec.impl.compiler.aliases",
            "zcspec.impl.compiler.memory.units", "zcspec.impl.compiler.memory.plan", "zcspec.impl.compiler.memory.ge_blocks",
            "zcspec.impl.compiler.memory.ge_level2", "zcspec.impl.compiler.memory.memory_block",
            "zcspec.impl.compiler.memory.sizes", "zcspec.impl.compiler.memory.bounds", "zcspec.impl.compiler.memory.rules",
            "zcspec.impl.compiler.passes", "zcspec.impl.runtime.v1.refresh", "zcspec.impl.runtime.v1.execute", "zcspec.impl.runtime.v1.bind",
            "zcspec.impl.runtime.v1.zero_copy", "zcspec.impl.runtime.v2.passes", "zcspec.impl.runtime.v2.kernels.outputs",
            "zcspec.impl.runtime.v2.kernels"]
    # Tables (kernel registries) are patched in place: snapshot their contents.
    return {(m, k): dict(v) if isinstance(v, dict) else v
            for m in mods for k, v in vars(importlib.import_module(m)).items() if not k.startswith("__")}


@pytest.mark.parametrize("name", registry.names())
def test_each_variant_changes_impl_and_is_removed_afterwards(name):
    before = _bound_objects()
    with registry.active(name):
        during = _bound_objects()
    assert during != before, f"{name} patched nothing"
    after = _bound_objects()
    assert all(after[k] is v or (isinstance(v, dict) and after[k] == v) for k, v in before.items()), \
        f"{name} left a patch behind"


def test_a_function_imported_by_name_is_patched_too():
    from zcspec.impl.compiler.memory import compact, offsets

    real = offsets.place_zero_copy
    with registry.active("zc-align-32"):
        assert compact.place_zero_copy is offsets.place_zero_copy is not real
    assert compact.place_zero_copy is offsets.place_zero_copy is real


def _interval_chain():
    """N0 -> ... -> N6 on one stream, sized so that level 2's interval reuse splits a block (the graph of
    tests/memory/test_interval_reuse.py): every planner function a variant replaces runs on it."""
    g = GeGraph("interval_chain")
    for name, size in [("N0", 1024), ("N1", 512), ("N2", 2048), ("N3", 512), ("N4", 1024), ("N5", 512), ("N6", 512)]:
        g.node(name, outs=(size,))
    for a, b in zip(["N0", "N1", "N2", "N3", "N4", "N5"], ["N1", "N2", "N3", "N4", "N5", "N6"]):
        g.edge(a, 0, b, 0)
    return g


@pytest.mark.parametrize("name", [v.name for v in registry.variants() if v.area == "planner"])
def test_a_planner_variant_plans_without_crashing(name):
    """A variant that crashes is not the bug it describes: the hunt counts a crash as no detection. The
    interval-touching variant called level 2's ``_crossing`` with the signature it had before that took
    timelines, and raised TypeError on every interval-reuse offer, unnoticed."""
    g = _interval_chain()
    with registry.active(name):
        plan_memory(g.build(), GE_SIZES, order=g.order())


@pytest.mark.parametrize("name", FAST)
def test_fast_variants_are_detected_by_the_spec_with_small_counterexamples(name):
    d = hunt(registry.get(name), seed=0, budget=30)
    assert d.detected, f"{name} not detected in {d.seconds:.1f} s over {d.cases} cases"
    assert d.seconds < 10 and d.nodes <= 6
    assert d.counterexample.found_with == name
    assert d.invariant in {i for v in registry.variants() for i in v.expected} | {"EXEC-NO-FAULT"}


@pytest.mark.parametrize("name", ["zc-block-merged", "v1-slot-not-refreshed", "v2-azc-size-unchecked",
                                  "v2-padded-size-required", "memcpy-addr-async-skipped", "v1-refresh-base-granule"])
def test_the_real_code_passes_the_same_hunt(name):
    d = hunt(registry.get(name), seed=0, budget=3, installed=False)
    assert d.cases > 0
    assert not d.detected, d.counterexample and d.counterexample.to_json()


def test_every_variant_is_counted_no_known_gap():
    """Issue 13: plain explore finds every variant, the proof-only ones through the campaign's proofs."""
    assert [v.name for v in registry.variants() if v.known_gap] == []


def test_the_proof_only_variant_is_found_by_plain_explores_campaign_and_not_on_the_real_code():
    from zcspec.checks.faults.hunt import hunt_plain

    d = hunt_plain(registry.get("v1-refresh-base-granule"), seed=0, budget=60)
    assert d.detected and d.invariant == "PROOF-V1-REFRESH", d.crashes
    assert not replay(d.counterexample).still_fails


@pytest.fixture(scope="module")
def merged_counterexample():
    d = hunt(registry.get("zc-block-merged"), seed=0, budget=30)
    assert d.detected
    return d.counterexample


def test_saved_counterexample_replays_under_the_variant_and_passes_on_the_real_code(merged_counterexample, tmp_path):
    path = tmp_path / "cx.json"
    merged_counterexample.save(str(path))
    cx = Counterexample.load(str(path))
    assert cx.found_with == "zc-block-merged"
    with registry.active(cx.found_with):
        assert replay(cx).still_fails
    assert not replay(cx).still_fails


def _run_exported(path, fault: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != registry.ENV}
    if fault:
        env[registry.ENV] = fault
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                           "zcspec.checks.faults.pytest_plugin", f"--rootdir={path.parent}", str(path)],
                          env=env, capture_output=True, text=True, timeout=120)


def test_exported_pytest_file_fails_under_the_variant_and_passes_on_the_real_code(merged_counterexample, tmp_path):
    path = tmp_path / "test_exported_cx.py"
    export_pytest(merged_counterexample, str(path))
    faulty = _run_exported(path, "zc-block-merged")
    assert faulty.returncode == 1, faulty.stdout + faulty.stderr
    real = _run_exported(path, None)
    assert real.returncode == 0, real.stdout + real.stderr


@pytest.mark.slow
def test_full_benchmark_meets_the_targets():
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
    import fault_detection

    assert fault_detection.main([]) == 0


def test_cli_lists_hunts_and_replays(tmp_path, capsys):
    from zcspec.checks.cli.main import main

    assert main(["faults"]) == 0
    assert "v2-azc-fallback" in capsys.readouterr().out
    assert main(["faults", "no-such-bug"]) == 2
    assert main(["faults", "zc-align-32", "--save", str(tmp_path), "--budget", "30"]) == 0
    assert "targets met" in capsys.readouterr().out
    assert main(["faults", "--replay", str(tmp_path / "zc-align-32.json")]) == 0
    assert "passes now" in capsys.readouterr().out
