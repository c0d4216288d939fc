"""Runtime v2 with the caller's inputs in host memory (checks/verify_cases.py HOST_INPUT_RUNS): v2 stages them
to the device itself (MakeSureTensorAtDevice); verify's cases pass on the real runtime, and a staging that
copies nothing or keeps its block fails them."""
from __future__ import annotations

import pytest

from zcspec.checks import verify_cases as C
from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import v2 as run_v2
from zcspec.impl.runtime.v2.kernels import KERNELS, io
from tests.helpers.verify_cases import checked, failed_notes


def _result():
    return checked(C.HOST_INPUT_MODELS, "input_placement=host")


def _violated(result) -> set[str]:
    return {f.violation.invariant_id for f in result.findings}


def test_host_inputs_are_staged_and_every_claim_holds():
    result = _result()
    assert not result.findings and not result.errors, (result.findings, result.errors)
    assert not failed_notes(result)
    assert result.tally.exercised["EXEC-ORACLE"] >= 4 and result.tally.exercised["EXEC-NO-LEAK"] >= 4


def test_a_staging_that_copies_nothing_fails(monkeypatch):
    def uncopied(frame, node, args):
        td, allocator = args
        if td.placement == "device":
            return (td,)
        block = allocator.malloc(node.attr("nbytes"), tag="input on device", io=f"input:{node.attr('index')}")
        frame.hold(block)
        return (io.TensorData(block.addr, block.size, "device", block),)
    monkeypatch.setitem(KERNELS, "MakeSureTensorAtDevice", uncopied)
    assert {"EXEC-ORACLE", "EXEC-READ-WRITTEN"} & _violated(_result())


def test_a_staging_that_keeps_its_block_leaks(monkeypatch):
    def kept(frame, node, args):
        td, allocator = args
        if td.placement == "device":
            return (td,)
        block = allocator.malloc(node.attr("nbytes"), tag="input on device", io=f"input:{node.attr('index')}")
        frame.device.launch(io.MemcpyTask(node.name, block.addr, td.addr, node.attr("nbytes"), "h2d"))
        return (io.TensorData(block.addr, block.size, "device"),)   # not held: never given back
    monkeypatch.setitem(KERNELS, "MakeSureTensorAtDevice", kept)
    assert "EXEC-NO-LEAK" in _violated(_result())


@pytest.mark.parametrize("key", ["input_placement", "output_placement"])
def test_a_placement_other_than_device_or_host_is_refused(key):
    with pytest.raises(ScenarioError) as e:
        run_v2.options_of({"runtime": "v2", key: "hbm"})
    assert e.value.key == key
