"""Runtime v2's default mode with null output tensors (checks/verify_cases.py NULL_OUTPUT_RUNS): each output is
handed over in the runtime's own memory, and the outputs so handed are held to the oracle like any other."""
from __future__ import annotations

from zcspec.checks import verify_cases as C
from zcspec.impl.runtime.v2.kernels import outputs
from tests.helpers.verify_cases import checked, failed_notes


def _result():
    return checked(C.NULL_OUTPUT_MODELS, "null outputs")


def test_outputs_handed_over_are_judged_and_every_claim_holds():
    result = _result()
    assert not result.findings and not result.errors, (result.findings, result.errors)
    assert not failed_notes(result)
    # the call hands its memory over in the null tensors' place: the outputs read there meet the oracle
    assert result.tally.exercised["EXEC-ORACLE"] == len(C.NULL_OUTPUT_MODELS) * len(C.NULL_OUTPUT_RUNS)


def test_an_output_handed_over_with_the_wrong_bytes_fails(monkeypatch):
    """The whole block handed over one output too early: the caller's tensor points at another output's bytes."""
    real = outputs._hand_over

    def shifted(frame, node, td, tensor, allocator):
        done = real(frame, node, td, tensor, allocator)
        if tensor.addr and tensor.size >= 8:
            tensor.adopt(tensor.owned, addr=tensor.addr + 4, size=tensor.size - 4)
        return done
    monkeypatch.setattr(outputs, "_hand_over", shifted)
    found = {f.violation.invariant_id for f in _result().findings}
    assert "EXEC-ORACLE" in found, found
