"""verify's random campaign executes what it draws, judges it against an oracle chosen by content,
counts what it could not judge, and holds every claim to a floor of distinct cases.

The bug tests install a bug for the duration of one verify run restricted to the random campaign
(no zoo, no proofs, no corpus), so a detection is the campaign's own: before issue 13 the
campaign executed nothing and all three passed it.
"""
from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.unseeded_bugs import installed
from zcspec.checks.campaign import Tally, explore, run_campaign
from zcspec.checks.execution import judge
from zcspec.checks.execution.judge import Note
from zcspec.checks.faults.registry import active
from zcspec.checks.oracle import oracle_outputs
from zcspec.checks.scenario import Scenario, observe
from zcspec.checks.strategies.graphs import graphs
from zcspec.checks.strategies.runs import runs
from zcspec.checks.strategies.scenarios import scenarios
from zcspec.checks.verify import VerifyConfig, VerifyResult, verify
from zcspec.checks.verify_result import MIN_DISTINCT
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.check import check
from zcspec.impl.runtime.v1 import execute
from zcspec.impl.runtime.v1.errors import ParamInvalid
from zcspec.spec.check import check

# verify's default campaign (its size and seed: Hypothesis's draws depend on both), alone
CAMPAIGN = VerifyConfig(models=(), examples=attrs.fields(VerifyConfig).examples.default, proofs=False, corpus=False,
                        acl_refusals=False,   # the campaign alone: the ACL refusals catch some of these bugs first
                        ge_cases=False,       # and so do GE's ported unit tests
                        fail_fast=True, onnx_node_tests=False)


@contextlib.contextmanager
def _nan_for_input_that_is_an_output():
    """Runtime v1 copies NaN into the buffer of an output that is also a model input (pass-through)."""
    real = execute._copy_output

    def wrong(lm, b):
        real(lm, b)
        if any(z.role == "input" and z.desc.tensor == b.io.desc.tensor for z in lm.io):
            dst, nbytes = b.buffer.addr, b.io.desc.nbytes
            dev = lm.device
            host = dev.host_malloc(nbytes, tag="bug")
            dev.host_write(host, np.full(nbytes // 4, np.nan, np.float32))
            dev.memcpy(dst, host, nbytes)
            dev.host_free(host)

    execute._copy_output = wrong
    try:
        yield
    finally:
        execute._copy_output = real


def _caught(result: VerifyResult) -> set[str]:
    ids = {f.violation.invariant_id for f in result.findings}
    if result.counterexample is not None:
        ids.add(result.counterexample.invariant)
    return ids


@pytest.mark.parametrize("bug, catchers", [
    (_nan_for_input_that_is_an_output, {"EXEC-ORACLE", "EXEC-V1-EQ-V2"}),
    (lambda: installed("refresh-skips-last-slot"), None),
    (lambda: active("v2-azc-fallback"), {"V2-AZC-NO-ALLOC", "V2-AZC-REJECT", "V2-DEFAULT-FALLBACK", "V2-OUT-IS-USER"}),
])
def test_the_random_campaign_catches(bug, catchers):
    with bug():
        result = verify(CAMPAIGN)
    caught = _caught(result)
    assert caught, "the random campaign missed the bug"
    assert result.stopped, "fail_fast stops at the first failure"
    if catchers:
        assert caught & catchers, caught


def test_the_same_campaign_passes_on_the_real_code():
    result = verify(attrs.evolve(CAMPAIGN, fail_fast=False))   # the campaign the bug tests run
    assert not result.failing(), (result.findings[:3], result.counterexample, result.failed_calls[:3], result.errors)
    assert result.tally.judged > 0 and result.tally.distinct_count("EXEC-ORACLE") >= MIN_DISTINCT


def test_the_campaign_runs_both_runtimes_and_the_oracle():
    tally = run_campaign(scenarios(kinds=("execution",)), max_examples=20, seed=1).tally
    for claim in ("EXEC-ORACLE", "EXEC-V1-EQ-V2", "V1-SLOT-REFRESH", "EXEC-NO-LEAK"):
        assert tally.distinct_count(claim) >= MIN_DISTINCT, (claim, tally.distinct_count(claim))


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_every_drawn_run_is_a_valid_scenario(data):
    graph = data.draw(graphs(max_nodes=5))
    runtime = data.draw(runs(graph))
    s = Scenario("execution", graph, CompileOptions(), runtime)
    assert Scenario.from_dict(s.to_dict()) == s


def _passthrough_graph(name: str):
    b = GraphBuilder(name)
    x, k = b.input("x", (4, 4)), b.input("keep", (2, 3))
    b.output(b.op("Relu", [x]), k)
    return b.build()


def test_the_oracle_is_chosen_by_content_not_by_name():
    graph = _passthrough_graph("resnet50")   # a light model's name: its shipped reference must not judge
    arrays = {"x": np.ones((4, 4), np.float32), "keep": np.full((2, 3), 2.0, np.float32)}
    got = judge.choose(graph, {"inputs": "ones"}).outputs(arrays)
    want = oracle_outputs(graph, arrays)
    assert set(got) == set(want) and all(np.array_equal(got[k], want[k]) for k in want)


def test_a_graph_without_an_oracle_is_noted_not_skipped():
    b = GraphBuilder("state")
    x = b.input("x", (2, 2))
    b.output(b.op("Mul", [b.op("Variable", [], shape=(2, 2), dtype="float32"), x]))
    s = Scenario("execution", b.build(), CompileOptions(), {"runtime": "differential"})
    observations = observe(s)
    assert any("no oracle" in n.reason and "Variable" in n.reason for n in observations.notes)
    assert not any(check(o).exercised.count("EXEC-ORACLE") for o in observations)


def test_a_refused_valid_call_is_a_failure_of_verify(monkeypatch):
    def refuse(lm, inputs, outputs, batch=None):
        raise ParamInvalid("refused for the test", buffer="x")
    monkeypatch.setattr(execute, "_run", lambda *a, **k: refuse(None, None, None))
    result = verify(VerifyConfig(models=("builtin:phony_concat",), kinds=("execution",), examples=0,
                                 proofs=False, corpus=False))
    assert result.failed_calls and "refused for the test" in result.failed_calls[0].reason
    assert not result.ok([])


def test_one_case_counted_twice_is_one_distinct_case():
    s = Scenario("execution", _passthrough_graph("g"), CompileOptions(), {"runtime": "v1", "calls": 2, "rebind": False})
    observations = observe(s)
    tally = Tally()
    reports = [check(o) for o in observations]
    from zcspec.checks.campaign import observation_key
    tally.add(reports, [observation_key("case", o) for o in observations])
    tally.add(reports, [observation_key("case", o) for o in observations])   # the same case again
    assert tally.exercised["EXEC-NO-FAULT"] == 4 and tally.distinct_count("EXEC-NO-FAULT") == 1
    rebound = observe(Scenario("execution", s.graph, s.compile, {"runtime": "v1", "calls": 2}))
    keys = {observation_key("case", o) for o in rebound}
    assert len(keys) == 2, "a re-bound call is another case"


def test_below_the_floor_fails_verify():
    result = VerifyResult()
    result.tally.add([check(o) for o in observe(Scenario("plan", _passthrough_graph("g"), CompileOptions()))])
    assert "LAYOUT-NO-OVERLAP" in result.below_floor(["LAYOUT-NO-OVERLAP"])
    assert not result.ok(["LAYOUT-NO-OVERLAP"])


def test_concurrent_calls_from_threads_are_observed_and_judged():
    s = Scenario("execution", _passthrough_graph("g"), CompileOptions(), {"runtime": "v1", "threads": 3})
    observations = observe(s)
    assert len(observations) == 4
    assert all(o.result.ok for o in observations)
    assert all(out.oracle_max_abs_diff == 0.0 for o in observations for out in o.outputs)
    assert not observations.notes


def test_the_call_started_last_carries_the_unload_whichever_finished_last(monkeypatch):
    """Racing calls take the model's lock in any order; the call the scenario started last shows the unload
    (and the allocations of the calls that finished after it) on every run, so a campaign's counts of
    distinct cases do not depend on the threads' schedule. The schedule is forced both ways here: the
    threads' calls finish in start order, then in reverse."""
    s = Scenario("execution", _passthrough_graph("g"), CompileOptions(), {"runtime": "v1", "threads": 2})
    unloaded = []
    for reverse in (False, True):
        gates = [threading.Event(), threading.Event()]
        started = []
        real = ThreadPoolExecutor.submit

        def submit(pool, fn, *args, **kwargs):
            k = len(started)
            started.append(k)

            def gated(*a, **kw):
                if reverse and k == 0:
                    gates[1].wait(5)    # thread 0 waits until thread 1's call is done
                out = fn(*a, **kw)
                gates[k].set()
                return out
            return real(pool, gated, *args, **kwargs)
        monkeypatch.setattr(ThreadPoolExecutor, "submit", submit)
        observations = observe(s)
        monkeypatch.undo()
        with_unload = [i for i, o in enumerate(observations) if any(e.kind == "unload" for e in o.events)]
        unloaded.append((with_unload, observations[-1].buffers))
        report = check(observations[-1])
        assert "EXEC-NO-LEAK" in report.exercised and report.ok, report.violations
    assert unloaded[0] == unloaded[1] and unloaded[0][0] == [2]


def test_explore_records_a_crash_and_goes_on():
    def boom(_):
        raise RuntimeError("crash of the code under test")
    crashes: list = []
    tally, found = explore(st.just(0).map(boom), seconds=0.5, crashes=crashes)
    assert crashes and "crash of the code under test" in crashes[0] and not found


def test_a_note_says_which_run_and_why():
    note = Note("v1 call 0", "no oracle: because")
    assert not note.failed and "because" in note.reason


def test_the_plain_hunt_uses_explores_campaign_and_counts_only_the_variants_failures():
    from zcspec.checks.faults.hunt import hunt_plain
    from zcspec.checks.faults.registry import get
    from zcspec.checks.replay import replay
    d = hunt_plain(get("zc-align-32"), budget=60)
    assert d.detected and d.counterexample.found_with == "zc-align-32"
    assert not replay(d.counterexample).still_fails, "a detection passes on the real code"


def test_the_command_line_takes_fail_fast(capsys):
    from zcspec.checks.cli.main import main
    with _nan_for_input_that_is_an_output():
        code = main(["verify", "builtin:inplace_passthrough", "--examples", "0", "--no-proofs", "--fail-fast",
                     "--quiet"])
    out = capsys.readouterr().out
    assert code == 1 and "stopped at the first failure (--fail-fast)" in out and "EXEC-ORACLE" in out, out


def test_racing_calls_count_as_the_same_distinct_cases_whichever_finished_last():
    """v2's racing calls are recorded, and the unload shown, in the order they finished, which the threads'
    schedule decides: keyed by their buffers' addresses, the calls showing EXEC-NO-LEAK differed from run to
    run, and so did verify's distinct count (2425 against 2426 in two runs of one commit). A racing case's
    calls are keyed without addresses: the same keys whichever call finished last."""
    from zcspec.checks.campaign import observation_key
    from zcspec.checks.execution import races
    s = Scenario("execution", _passthrough_graph("g"), CompileOptions(), {"runtime": "v2", "threads": 2})
    assert races(s) and not races(Scenario("execution", s.graph, s.compile, {"runtime": "v2"}))
    calls = [o for o in observe(s) if getattr(o, "buffers", None)]
    assert len({observation_key("case", o) for o in calls}) == 3                 # by address: one per call
    racing = {observation_key("case", o, racing=True) for o in calls}
    assert len(racing) == 1                                                        # without: one case
    swapped = [attrs.evolve(o, buffers=tuple(reversed(o.buffers))) for o in calls]
    assert {observation_key("case", o, racing=True) for o in swapped} != racing   # names and roles still count
