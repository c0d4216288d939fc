"""kernel_steps_refused: one malformed oracle step per kernel argument check that onnxruntime refuses too, in every
probe program verify runs. Each drawn step must be refused by onnxruntime and by the kernel's own check (not by
numpy inside it), and a check the mutation run weakened (Pad's, its ``or``s turned ``and``s: verify passed with
every artefact identical) must now fail DEVICE-KERNEL-ORACLE."""
from __future__ import annotations

import random

import pytest

from zcspec.checks.device_probe_run import run_probe
from zcspec.checks.strategies import device_probes
from zcspec.checks.strategies.kernel_steps_refused import CHECKS, refused_steps
from zcspec.impl.device.kernels import indexing
from zcspec.impl.device.kernels.common import fail, ints
from zcspec.spec.observables.device import DeviceObservation
from zcspec.spec.registry import get
from tests.helpers.device_probes import violations_of

CLAIM = "DEVICE-KERNEL-ORACLE"
SEEDS = (0, 1, 2)


def _runs(seed: int):
    pytest.importorskip("onnxruntime")
    return run_probe(refused_steps(random.Random(seed))).oracle_runs


@pytest.mark.parametrize("seed", SEEDS)
def test_every_drawn_step_is_refused_by_onnxruntime_and_by_the_kernels_own_check(seed):
    runs = _runs(seed)
    assert len(runs) == len(CHECKS)
    for name, r in zip(CHECKS, runs):
        differs = [o.shape for o in r.oracle] != [s.shape for s in r.outs]
        assert "ONNXRuntimeError" in r.oracle_error or (not r.oracle_error and differs), (name, r.oracle_error)
        assert r.refused == "KernelError" and r.task in r.message, (name, r.refused, r.message)
        assert "Error:" not in r.message, f"{name}: refused by numpy inside the kernel, not its check: {r.message}"
        assert r.after == r.before
    assert not get(CLAIM).violations(DeviceObservation("probe", (), oracle_runs=runs))


def test_the_refused_steps_leave_every_other_draw_of_a_seed_as_it_was(monkeypatch):
    with_them = device_probes.fixed_programs(2)
    monkeypatch.setattr(device_probes, "refused_steps", lambda rng: [])
    for program, without in zip(with_them, device_probes.fixed_programs(2)):
        i = next(k for k, (a, b) in enumerate(zip(program, without)) if a != b)
        assert program[:i] == without[:i] and program[i + len(CHECKS):] == without[i:]
        assert {s["op"] for s in program[i:i + len(CHECKS)]} == {"oracle"}


def _full_pads_joined_by_and(task, rank: int):
    """indexing._full_pads as the mutation run left it, its check's ``or``s turned ``and``s: given pads of any
    length pass, read as begins then ends."""
    pads = ints(task, "pads")
    axes = ints(task, "axes")
    axes = tuple(range(rank)) if axes is None else tuple(a % rank if -rank <= a < rank else rank for a in axes)
    if pads is None and len(pads) != 2 * len(axes) and any(a >= rank for a in axes):
        raise fail(task, f"pads={pads} and axes={axes} do not describe begins and ends for rank {rank}")
    full = [(0, 0)] * rank
    for i, a in enumerate(axes):
        full[a] = (pads[i], pads[i + len(axes)])
    return full


def test_a_pad_check_joined_by_and_fails_the_claim(monkeypatch):
    pytest.importorskip("onnxruntime")
    monkeypatch.setattr(indexing, "_full_pads", _full_pads_joined_by_and)
    pad = list(CHECKS).index("Pad pads length")
    for seed in SEEDS:
        runs = run_probe(refused_steps(random.Random(seed))).oracle_runs
        found = get(CLAIM).violations(DeviceObservation("probe", (), oracle_runs=runs))
        assert found and {v.culprit for v in found} == {f"oracle step {pad} (task 'probe {pad} Pad', Pad)"}
        assert any("ran, although onnxruntime refuses the node" in v.message for v in found)
    # and in a program verify runs (its device cases are fixed_programs)
    found = violations_of(CLAIM, device_probes.fixed_programs(1))
    assert found and all("Pad" in v.culprit for v in found) and any("must refuse it" in v.message for v in found)
