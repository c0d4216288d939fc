"""API-MISUSE-REFUSED and API-MISUSE-CHANGES-NOTHING: a call that misuses a runtime's API is refused with GE's
caller error naming the misuse, and changes nothing.

The claims decide a misuse from the observation alone (the model file's counts and labels, the caller's own
unload, the spec's option domains), so the first tests hand them small observations; the planted bugs then
run the real runtimes through checks/execution/api_misuse.py with one of their checks dropped: a v2 executor
that runs after its unload (impl/runtime/v2/executor.py), a LoweringOptions that takes an int, a v1 model
that forgets it was unloaded. Each passed verify before these claims: no verify case made such a call."""
from __future__ import annotations

import pytest

from zcspec.checks.execution import api_misuse
from zcspec.checks.zoo import load
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.runtime.v1 import loaded as v1_loaded
from zcspec.impl.runtime.v2 import executor as v2_executor
from zcspec.impl.runtime.v2 import options as v2_options
from zcspec.spec.invariants.api_calls import misuses
from zcspec.spec.observables.api_call import ApiCallObservation, CallOutcome, OptionArgument
from zcspec.spec.registry import get

REFUSED, UNCHANGED = get("API-MISUSE-REFUSED"), get("API-MISUSE-CHANGES-NOTHING")
PARAM = CallOutcome(False, ("ApiMisuseError",), "PARAM_INVALID", "model 'net' was unloaded")


def _call(outcome=PARAM, **fields) -> ApiCallObservation:
    base = dict(model="net", model_inputs=1, model_outputs=1, input_buffers=1, output_buffers=1)
    return ApiCallObservation("call", "v2", "execute", outcome, **{**base, **fields})


@pytest.mark.parametrize("fields, culprit", [
    ({"unloaded": True}, "model"), ({"output_buffers": 0}, "buffers"), ({"input_buffers": 2}, "buffers"),
    ({"batch": "b1"}, "batch"), ({"branch_labels": ("b1", "b2")}, "batch"),
    ({"branch_labels": ("b1",), "batch": "b9"}, "batch"),
])
def test_each_misuse_is_found_from_the_observation(fields, culprit):
    assert set(misuses(_call(**fields))) == {culprit}


def test_a_well_formed_call_is_no_misuse_and_not_judged():
    obs = _call(CallOutcome(True), branch_labels=("b1",), batch="b1")
    assert not misuses(obs) and not REFUSED.exercised(obs) and not REFUSED.violations(obs)


@pytest.mark.parametrize("runtime, arg, misused", [
    ("v2", OptionArgument("always_zero_copy", "int", "1"), True),
    ("v2", OptionArgument("always_zero_copy", "bool", "True"), False),
    ("v1", OptionArgument("reuse_zero_copy_memory", "int", "2"), True),
    ("v1", OptionArgument("reuse_zero_copy_memory", "int", "1"), False),
    ("v1", OptionArgument("reuse_zero_copy_memory", "bool", "True"), True),   # a bool is not GE's 0 or 1
    ("v1", OptionArgument("session", "Session", "Session()"), False),   # not in the table: not judged
])
def test_option_domains(runtime, arg, misused):
    obs = ApiCallObservation("options", runtime, "options", CallOutcome(True), options=(arg,))
    assert bool(misuses(obs)) is misused
    assert bool(REFUSED.violations(obs)) is misused


def test_refusal_must_carry_ges_code_and_name_the_misuse():
    assert not REFUSED.violations(_call(unloaded=True))
    wrong_code = CallOutcome(False, ("DeviceFault",), "", "device 0: unmapped read of 4 bytes")
    [v] = REFUSED.violations(_call(wrong_code, unloaded=True))
    assert "not GE's caller error PARAM_INVALID" in v.message
    silent = CallOutcome(False, ("ApiMisuseError",), "PARAM_INVALID", "bad call")
    [v] = REFUSED.violations(_call(silent, output_buffers=0))
    assert "names none of the misuses" in v.message
    [v] = REFUSED.violations(_call(CallOutcome(True), unloaded=True))
    assert v.culprit == "v2 execute call" and "returned although it misuses the API" in v.message


def test_a_refused_misuse_that_touched_the_device_or_a_buffer():
    from zcspec.spec.examples.build import events
    obs = _call(unloaded=True, events=events({"kind": "alloc", "address": 4096, "size": 64, "owner": "runtime"}),
                buffers_changed=("y",))
    messages = [v.message for v in UNCHANGED.violations(obs)]
    assert len(messages) == 2 and "the first a alloc" in messages[0] and "holds other bytes" in messages[1]


# -- the real runtimes, with one check dropped ---------------------------------------------------------------

def _observations(model_name="builtin:sized_inputs"):
    model = build_model(load(model_name))
    return api_misuse.misuse_observations(model) + api_misuse.option_observations("v1") + \
        api_misuse.option_observations("v2")


def _violated(observations) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for obs in observations:
        for inv in (REFUSED, UNCHANGED):
            for v in inv.violations(obs):
                out.setdefault(obs.name, []).append(f"{inv.id}: {v.message}")
    return out


@pytest.mark.parametrize("model_name", ["builtin:sized_inputs", "builtin:dynamic_batch"])
def test_both_runtimes_refuse_every_misuse(model_name):
    observations = _observations(model_name)
    assert not _violated(observations)
    assert all(REFUSED.exercised(o) for o in observations)
    assert {o.runtime for o in observations} == {"v1", "v2"}


def test_planted_v2_executor_that_answers_a_call_after_its_unload(monkeypatch):
    original = v2_executor.StreamExecutor._execute

    def quiet(self, inputs, outputs, *args):   # `raise ApiMisuseError` turned into "nothing to do"
        return list(outputs) if self.closed else original(self, inputs, outputs, *args)

    monkeypatch.setattr(v2_executor.StreamExecutor, "_execute", quiet)
    bad = _violated(_observations())
    assert list(bad) == ["v2 after unload"], bad
    assert bad["v2 after unload"][0].startswith("API-MISUSE-REFUSED: returned although it misuses the API: the "
                                                "caller unloaded model 'sized_inputs'")


def test_a_v2_executor_without_its_closed_check_is_still_refused_by_its_closed_allocator(monkeypatch):
    """Dropping the executor's own check (the mutation run's executor.py:165) leaves the refusal to the closed
    allocator: still PARAM_INVALID, still naming the unload, nothing touched. By GE's terms the call is
    refused as it must be; the claims accept it."""
    original = v2_executor.StreamExecutor._execute

    def forgetful(self, *args):
        closed, self.closed = self.closed, False
        try:
            return original(self, *args)
        finally:
            self.closed = closed

    monkeypatch.setattr(v2_executor.StreamExecutor, "_execute", forgetful)
    observations = _observations()
    [after] = [o for o in observations if o.name == "v2 after unload"]
    assert after.outcome.code == "PARAM_INVALID" and "AllocatorError" in after.outcome.error
    assert not _violated(observations)


def test_planted_lowering_options_that_take_an_int(monkeypatch):
    monkeypatch.setattr(v2_options.LoweringOptions, "__attrs_post_init__", lambda self: None)
    bad = _violated(api_misuse.option_observations("v2"))
    assert "v2 options always_zero_copy=1" in bad and len(bad) == 6
    assert "returned although it misuses the API: option always_zero_copy is a int (1)" in \
        bad["v2 options always_zero_copy=1"][0]


def test_planted_v1_model_that_forgets_its_unload(monkeypatch):
    original = v1_loaded.LoadedModel.execute

    def forgetful(self, *args, **kwargs):
        gone, self.state.unloaded = self.state.unloaded, False
        try:
            return original(self, *args, **kwargs)
        finally:
            self.state.unloaded = gone

    monkeypatch.setattr(v1_loaded.LoadedModel, "execute", forgetful)
    bad = _violated(_observations())
    assert list(bad) == ["v1 after unload"], bad


def test_another_runtimes_call_is_judged_from_the_command_line(tmp_path, capsys):
    """A call transcribed by someone else's harness, as JSON: `zcspec spec --observation` tells its kind by its
    keys (an api_call has options too, as a load does) and exits 1 on a violation, 0 when it holds."""
    from zcspec.checks.cli.main import main
    from zcspec.spec.observables import codec
    path = tmp_path / "call.json"
    path.write_text(codec.dumps(_call(CallOutcome(True), unloaded=True)))
    assert main(["spec", "--observation", str(path)]) == 1
    assert "API-MISUSE-REFUSED: v2 execute call: returned although" in capsys.readouterr().out
    path.write_text(codec.dumps(_call(unloaded=True)))
    assert main(["spec", "--observation", str(path)]) == 0
