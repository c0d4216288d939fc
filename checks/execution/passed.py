"""The buffers a caller passed to one execute call, as the caller knows them: never the runtime's record.

A runtime keeps its own account of what it was given (``ExecutionRecord.buffers``); an observation built from
it would let a runtime that misread or misrecorded a buffer describe the call as it saw it, and the buffer
claims would judge that account. The checker made the call, so it writes the buffers itself: each input and
output buffer against the model file's I/O in position order (inputs against its inputs, outputs against its
outputs), named as both runtimes' observers name an I/O (impl/runtime/io_names.py, a naming rule, no decision).
"""
from __future__ import annotations

import attrs

from zcspec.impl.runtime.io_names import io_names
from zcspec.spec.observables.execution import UserBuffer


def passed_buffers(model, inputs, outputs, *, nulls: bool = False) -> tuple[UserBuffer, ...]:
    """``inputs`` and ``outputs`` (objects with ``addr``, ``size`` and ``placement``: UserBuffers or v2
    Tensors) as the observation's buffers. A ``None`` in a position is left out, or, with ``nulls`` (runtime
    v2, where a missing tensor is a null one), a null buffer of 0 bytes; buffers past the model's I/O count
    name no I/O and are left out."""
    names = io_names(model)
    out = []
    for ios, given in ((model.tasks.inputs, inputs), (model.tasks.outputs, outputs)):
        for io, b in zip(ios, given):
            name = names[(io.role, io.index)]
            if b is not None:
                out.append(UserBuffer(name, io.role, b.addr, b.size, b.placement))
            elif nulls:
                out.append(UserBuffer(name, io.role, 0, 0))
    return tuple(out)


def with_buffers(obs, passed: tuple):
    """``obs`` (an ExecutionObservation) with the buffers the caller ``passed``."""
    return attrs.evolve(obs, buffers=passed)
