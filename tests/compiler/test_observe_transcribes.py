"""The compiler's observer transcribes: every zoo artefact observed with impl's deciding functions made to
raise gives the same observation as with them working.

"Deciding" here is every function of impl's op table (ops.py), its planning rules, sizes, alias and
lifetime rules, passes and task generation, the dtype table, and the artefacts' own derived answers
(``MemoryPlan.roots``/``root``/``chain``, ``TensorDesc.nbytes``/``numel``). They raise whenever they are
called outside the model-file loader: the loader is the one impl function the observer calls, it parses
the bytes into the artefact and its refusal is transcribed as the load outcome (its own checks may consult
the op table). tests/test_observe_imports.py checks the same rule in the source."""
from __future__ import annotations

import inspect
import sys
from pathlib import Path

import pytest

from zcspec.checks.zoo import load, zoo_names
from zcspec.impl.compiler import aliases, ops
from zcspec.impl.compiler.compile import compile_stages
from zcspec.impl.compiler.ir import TensorDesc
from zcspec.impl.compiler.memory import lifetimes, plan_types, rules, sizes
from zcspec.impl.compiler.model_file import load as loader
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.observe import observe_model_file, observe_plan
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.compiler.passes import mem_layout_conflict, memcpy_addr_async, outer_axis_views
from zcspec.impl.compiler.tasks import io_offsets, taskgen
from zcspec.impl.platform import dtypes

DECIDING_MODULES = (ops, rules, sizes, lifetimes, aliases, memcpy_addr_async, mem_layout_conflict, outer_axis_views,
                    io_offsets, taskgen, dtypes)
LOADER = str(Path(loader.__file__).resolve())


class AskedImpl(AssertionError):
    """The observer asked impl for a decision."""


def _in_loader() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == LOADER:
            return True
        frame = frame.f_back
    return False


def _refusing(name: str, fn):
    def refuse(*args, **kwargs):
        if not _in_loader():
            raise AskedImpl(f"the observer called {name}, an impl decision")
        return fn(*args, **kwargs)
    return refuse


class _RefusingTable(dict):
    """impl's op table, readable by the loader only."""

    def _check(self):
        if not _in_loader():
            raise AskedImpl("the observer read impl's op table (ops.OPS)")

    def get(self, *a):
        self._check()
        return super().get(*a)

    def __getitem__(self, k):
        self._check()
        return super().__getitem__(k)

    def __contains__(self, k):
        self._check()
        return super().__contains__(k)

    def __iter__(self):
        self._check()
        return super().__iter__()


def _refuse_decisions(monkeypatch) -> None:
    for module in DECIDING_MODULES:
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ == module.__name__:
                monkeypatch.setattr(module, name, _refusing(f"{module.__name__}.{name}", fn))
    monkeypatch.setattr(ops, "OPS", _RefusingTable(ops.OPS))
    for name in ("roots", "root", "chain"):
        monkeypatch.setattr(plan_types.MemoryPlan, name, _refusing(f"MemoryPlan.{name}",
                                                                    getattr(plan_types.MemoryPlan, name)))
    for name in ("nbytes", "numel"):
        monkeypatch.setattr(TensorDesc, name, property(_refusing(f"TensorDesc.{name}", getattr(TensorDesc, name).fget)))


def _artefacts():
    for model in zoo_names():
        options = CompileOptions()
        stages = compile_stages(load(model), options)
        yield model, stages, encode(stages.model), options


def test_every_zoo_artefact_is_observed_without_asking_impl(monkeypatch):
    artefacts = list(_artefacts())
    normal = [(observe_plan(s.graph, s.plan, soc=o.soc), observe_model_file(data, s.graph, o))
              for _, s, data, o in artefacts]
    _refuse_decisions(monkeypatch)
    for (model, s, data, o), (plan, model_file) in zip(artefacts, normal):
        assert observe_plan(s.graph, s.plan, soc=o.soc) == plan, model
        again = observe_model_file(data, s.graph, o)
        assert again.load.accepted, (model, again.load.error)
        assert again == model_file, model


def test_the_refusal_is_real(monkeypatch):
    """The test above can fail: with the refusals in place, asking impl's table or the plan's roots raises."""
    _, stages, _, _ = next(_artefacts())
    _refuse_decisions(monkeypatch)
    with pytest.raises(AskedImpl):
        ops.task_kinds(stages.graph.nodes[0])
    with pytest.raises(AskedImpl):
        ops.OPS.get("ReduceSum")
    with pytest.raises(AskedImpl):
        stages.plan.roots()
    with pytest.raises(AskedImpl):
        stages.graph.desc[stages.graph.inputs[0]].nbytes
    with pytest.raises(AskedImpl):
        rules.atomic(stages.graph.nodes[0])
