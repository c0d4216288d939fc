"""MF-ATOMIC-CLEAN: an atomic node's outputs are cleaned by an earlier memset of the node on its stream, judged
by the spec's op table (spec/op_facts.py), never by the compiler's.

The planted bug of issue 35: ReduceSum's atomic flag dropped from impl's op table. The compiler then emits no
clean and plans the output as any other; before the observer read atomic facts from the spec, only the output
oracle noticed and MEM-ATOMIC-NOREUSE went unexercised. Now the model-file case verify runs on the zoo's
atomic graph reports it through this claim."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks.scenario import observe
from zcspec.checks.verify import VerifyConfig
from zcspec.checks.verify_cases import zoo_cases
from zcspec.impl.compiler import ops
from zcspec.spec.check import check
from zcspec.spec.examples.build import model_file, node
from zcspec.spec.observables.model_file import ArgSlot, Task
from zcspec.spec.registry import get

CLAIM = "MF-ATOMIC-CLEAN"
_OUT = ArgSlot(1, "feature_map", 512, 32, "out", "s")
_KERNEL = Task(1, "kernel", (ArgSlot(0, "feature_map", 0, 64, "in", "x"), _OUT), node="sum")
_CLEAN = Task(0, "memset", (attrs.evolve(_OUT, index=0),), node="sum")


def _violations(tasks, op_type="ReduceSum"):
    nodes = (node("x", "Data"), node("sum", op_type, "x"), node("out", "NetOutput", "sum"))
    return get(CLAIM).violations(model_file(nodes=nodes, tasks=tuple(tasks), regions={"feature_map": 1024}))


def test_a_clean_before_the_kernel_on_its_stream_satisfies_it():
    assert _violations([_CLEAN, _KERNEL]) == ()
    wider = attrs.evolve(_CLEAN, slots=(ArgSlot(0, "feature_map", 0, 1024, "out", "s"),))
    assert _violations([wider, _KERNEL]) == ()


@pytest.mark.parametrize("tasks, why", [
    ([attrs.evolve(_KERNEL, id=0)], "no clean at all"),
    ([attrs.evolve(_CLEAN, stream=1), _KERNEL], "the clean runs on another stream, unordered with the kernel"),
    ([attrs.evolve(_CLEAN, slots=(ArgSlot(0, "feature_map", 512, 16, "out", "s"),)), _KERNEL],
     "the clean covers half the output"),
    ([attrs.evolve(_CLEAN, slots=(ArgSlot(0, "zero_copy", 512, 32, "out", "s"),)), _KERNEL],
     "the clean covers the same offsets of another region"),
    ([attrs.evolve(_CLEAN, node="other"), _KERNEL], "the clean belongs to another node"),
])
def test_an_output_left_uncleaned_is_reported(tasks, why):
    kernel = tasks[-1]
    (v,) = _violations(tasks)
    assert v.culprit == f"task {kernel.id} slot 1" and v.values["tensor"] == "s", why


def test_a_clean_of_a_node_that_accumulates_nothing_is_reported():
    (v,) = _violations([_CLEAN, _KERNEL], op_type="Relu")
    assert v.culprit == "task 0" and "not atomic" in v.message


def _zoo_model_file_case(model: str):
    """The first model-file case ``zcspec verify`` builds for ``model`` (ge strategy, default SoC)."""
    config = VerifyConfig(models=(model,), kinds=("model_file",), strategies=("ge",))
    return next(s for label, s in zoo_cases(config) if label == f"{model} [model_file, ge]")


@pytest.mark.parametrize("model", ["builtin:atomic_clean", "builtin:atomic_output"])
def test_the_dropped_atomic_flag_fails_verify_through_this_claim(model, monkeypatch):
    """Issue 35's planted bug: ReduceSum's atomic flag dropped from impl's op table (so from its planner,
    task generator and loader alike). The zoo's model-file case of verify reports MF-ATOMIC-CLEAN."""
    (before,) = observe(_zoo_model_file_case(model))
    assert check(before).ok and CLAIM in check(before).exercised
    monkeypatch.setitem(ops.OPS, "ReduceSum", attrs.evolve(ops.OPS["ReduceSum"], atomic=False))
    (after,) = observe(_zoo_model_file_case(model))
    report = check(after)
    assert report.violated() == (CLAIM,), str(report)
    assert {v.values["node"] for v in report.violations} == {n.name for n in after.nodes if n.type == "ReduceSum"}
