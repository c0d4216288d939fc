"""How a model input or output is named in messages and observations: one rule for both runtimes.

An I/O is named as the caller's graph names it (``IoDesc.name``). When one name is several I/O (a Data
feeding NetOutput directly makes it an input and an output; an output listed twice), each of
them is named ``name:role<index>`` instead (``y:input1``, ``y:output1``), so every name is
unique within the model.
"""
from __future__ import annotations


def io_names(model) -> dict[tuple[str, int], str]:
    """``(role, index) -> name`` for every input and output of compiled ``model``, in model order."""
    ios = model.tasks.inputs + model.tasks.outputs
    names = [d.name for d in ios]
    return {(d.role, d.index): d.name if names.count(d.name) == 1 else f"{d.name}:{d.role}{d.index}"
            for d in ios}
