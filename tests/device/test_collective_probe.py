"""DEVICE-COLLECTIVE: a probe's collective steps run over 2 to 4 emulated devices of one communicator, and
the spec recomputes what every rank must hold from the recorded inputs. No verify model runs a collective
over more than one device, so before these steps a device that let a collective run before its peers
arrived, or a reduction that ignored its attribute, passed verify."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.checks.errors import ScenarioError
from zcspec.checks.device_probe_run import observe_probe, run_probe
from zcspec.checks.strategies.device_probes import PROBE_GRAPH, fixed_programs
from zcspec.checks.scenario import Scenario, evaluate
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.device import hccl
from zcspec.impl.device.device import Device
from zcspec.spec.registry import get

CLAIM = "DEVICE-COLLECTIVE"


def step(kernel, ranks=3, shape=(2, 3), reduction="sum", root=0):
    return {"op": "collective", "kernel": kernel, "ranks": ranks, "shape": list(shape), "dtype": "float32",
            "reduction": reduction, "root": root}


def reports(programs_):
    return [evaluate(Scenario("device", PROBE_GRAPH, CompileOptions(), {"program": list(p)}))[0]
            for p in programs_]


def violated(programs_) -> set[str]:
    return {v.invariant_id for r in reports(programs_) for v in r.violations}


def test_every_fixed_program_has_a_collective_over_several_ranks_and_the_real_device_passes():
    rs = reports(fixed_programs(8))
    assert all(r.ok for r in rs), [str(v) for r in rs for v in r.violations]
    assert all(CLAIM in r.exercised for r in rs)
    runs = [c for p in fixed_programs(8) for c in run_probe(p).collective_runs]
    assert {c.op_type for c in runs} == set(hccl.COLLECTIVES) and {c.ranks for c in runs} >= {2, 3}


@pytest.mark.parametrize("kernel, reduction, root", [("HcomAllReduce", "max", 0), ("HcomAllReduce", "prod", 0),
                                                     ("HcomAllGather", "sum", 0), ("HcomBroadcast", "sum", 2)])
def test_each_rank_holds_what_hccl_defines(kernel, reduction, root):
    (run,) = run_probe([step(kernel, reduction=reduction, root=root)]).collective_runs
    ins = [np.frombuffer(bytes.fromhex(x), "<f4").reshape(2, 3) for x in run.inputs]
    outs = [np.frombuffer(bytes.fromhex(x), "<f4").reshape(run.out) for x in run.outputs]
    want = {"HcomAllReduce": {"max": np.maximum, "prod": np.multiply}.get(reduction, np.add).reduce(np.stack(ins)),
            "HcomAllGather": np.concatenate(ins), "HcomBroadcast": ins[root]}[kernel]
    assert run.refused is None and all(np.array_equal(o, want) for o in outs)
    assert len({x for x in run.inputs}) == 3   # every rank's input differs: a rank keeping its own shows


def test_a_device_that_runs_a_two_rank_collective_without_its_peer_is_caught(monkeypatch):
    # impl/device/device.py Device._blocked with "size > 2" for "size > 1"
    monkeypatch.setattr(Device, "_blocked", lambda self, task: (
        lambda e: e is not None and e[0].size > 2)(self.comms.get(task.comm)))
    assert CLAIM in violated([[step(k, ranks=2)] for k in hccl.COLLECTIVES])


def test_an_all_reduce_that_ignores_its_reduction_is_caught(monkeypatch):
    summing = hccl.Collective("HcomAllReduce", lambda tasks, ins, outs: [
        [np.add.reduce(np.stack([r[i] for r in ins])) for i in range(len(ins[0]))] for _ in ins])
    monkeypatch.setitem(hccl.COLLECTIVES, "HcomAllReduce", summing)
    assert violated([[step("HcomAllReduce", reduction="max")]]) == {CLAIM}
    assert violated([[step("HcomAllReduce", reduction="sum")]]) == set()


def test_the_claim_flags_a_refused_collective_and_a_malformed_record():
    (run,) = run_probe([step("HcomAllReduce")]).collective_runs
    from zcspec.spec.observables.device import DeviceObservation
    import attrs

    def obs(r):
        return DeviceObservation("probe", (), None, collective_runs=(r,))
    assert not get(CLAIM).violations(obs(run))
    assert "was refused" in get(CLAIM).violations(obs(attrs.evolve(run, refused="StreamError")))[0].message
    assert "one tensor" in get(CLAIM).violations(obs(attrs.evolve(run, inputs=run.inputs[:1])))[0].message


@pytest.mark.parametrize("bad, why", [({"kernel": "HcomScatter"}, "kernel='HcomScatter'"),
                                      ({"ranks": 0}, "ranks=0"), ({"shape": [4096, 2]}, "within 8 ranks"),
                                      ({"root": "1"}, "root='1' must be an int")])
def test_a_malformed_collective_step_names_itself(bad, why):
    with pytest.raises(ScenarioError, match=rf"device probe step 0: .*{why}"):
        run_probe([{**step("HcomAllReduce"), **bad}])


def test_a_collective_record_travels_in_observation_files():
    """Its attributes hold a string (reduction) and an int (root): the codec once typed them ``object``, which
    it cannot read back, so a device observation with a collective step did not survive its own file."""
    from zcspec.spec.observables import dumps, loads
    from zcspec.spec.observables.device import DeviceObservation

    (obs,) = observe_probe(Scenario("device", PROBE_GRAPH, CompileOptions(),
                                    {"program": [step("HcomBroadcast", root=2)]}))
    assert obs.collective_runs and loads(DeviceObservation, dumps(obs)) == obs
