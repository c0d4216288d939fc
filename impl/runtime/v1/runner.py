"""``run(model, device, inputs, outputs, *, zero_copy)``: load, execute once, unload (the shape both runtimes share)."""
from __future__ import annotations

from zcspec.impl.runtime.v1.config import LoadOptions
from zcspec.impl.runtime.v1.load import load


def run(model, device, inputs: list, outputs: list, *, zero_copy: bool) -> None:
    """Execute ``model`` once on ``device`` with the user's buffers (model order); the model is
    unloaded afterwards even when the call fails. Raises RuntimeV1Error on bad input."""
    lm = load(device, model, LoadOptions(zero_copy=zero_copy))
    try:
        lm.execute(inputs, outputs)
    finally:
        lm.unload()
