"""Examples for the API-misuse claims: a call after the caller's unload."""
from __future__ import annotations

from zcspec.spec.examples.build import Example, events
from zcspec.spec.observables.api_call import ApiCallObservation, CallOutcome

_UNLOADED = CallOutcome(False, ("ModelUnloadedError", "ParamInvalid", "RuntimeV1Error"), "145000",
                        "model 'net' was unloaded; load it again before executing")


def _after_unload(outcome: CallOutcome, *effects: dict) -> ApiCallObservation:
    """A v1 execute call on model 'net' (1 input, 1 output), made after the caller unloaded it."""
    return ApiCallObservation("execute after unload", "v1", "execute", outcome, model="net", model_inputs=1,
                              model_outputs=1, unloaded=True, input_buffers=1, output_buffers=1,
                              events=events(*effects))


EXAMPLES = (
    Example("API-MISUSE-REFUSED", _after_unload(_UNLOADED), _after_unload(CallOutcome(True)),
            culprit="v1 execute call", why="the call after the caller unloaded model 'net' returned as if it ran"),
    Example("API-MISUSE-CHANGES-NOTHING", _after_unload(_UNLOADED),
            _after_unload(_UNLOADED, {"kind": "launch", "task": 0, "op": "Relu"}),
            culprit="v1 execute call", why="the refused call after the unload launched a kernel first"),
)
