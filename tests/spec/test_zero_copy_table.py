"""MF-ZERO-COPY-TABLE: the zero-copy table lists exactly the slots that point into the I/O region, each entry
names an I/O of its role, one I/O's entries agree on its start, an HCCL slot is listed iff it is zero-copy.

The planted bug: the offsets of model I/O (impl/compiler/tasks/io_offsets.py, GE's SetInputOutputOffsetPass)
forget the tensors that live inside an I/O (views, in-place outputs). Task generation and the loader's
consistency check share that rule, so the loader accepts the file, and V1-SLOT-REFRESH, which takes the table
as given, has nothing to say about a slot the table never lists."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks.scenario import observe
from zcspec.checks.verify import VerifyConfig
from zcspec.checks.verify_cases import zoo_cases
from zcspec.impl.compiler.model_file import consistency
from zcspec.impl.compiler.tasks import io_offsets, taskgen
from zcspec.spec.check import check
from zcspec.spec.examples.build import model_file
from zcspec.spec.observables.model_file import ArgSlot, NodeInfo, Task, ZeroCopyEntry
from zcspec.spec.registry import get

CLAIM = "MF-ZERO-COPY-TABLE"
NODES = (NodeInfo("x", "Data", out_tensors=("x",)), NodeInfo("f", "Split", ("x",), in_tensors=("x",),
                                                              out_tensors=("a", "b")),
         NodeInfo("out", "NetOutput", ("f",), in_tensors=("a",)))
# x occupies zero_copy 512..1024; a is its view at x+0 (the output), b a view at x+256 read by task 1
TASKS = (Task(0, "kernel", (ArgSlot(0, "zero_copy", 512, 256, "in", "x"), ArgSlot(1, "zero_copy", 0, 256, "out", "a")),
              node="f"),
         Task(1, "kernel", (ArgSlot(0, "zero_copy", 768, 256, "in", "b"), ArgSlot(1, "feature_map", 0, 64, "out", "c")),
              node="g"))
TABLE = (ZeroCopyEntry(0, 0, "x", "input"), ZeroCopyEntry(0, 1, "a", "output"),
         ZeroCopyEntry(1, 0, "x", "input", 256))


def _violations(tasks=TASKS, table=TABLE, nodes=NODES):
    return get(CLAIM).violations(model_file(nodes=nodes, tasks=tuple(tasks), zero_copy_table=tuple(table),
                                            regions={"zero_copy": 1024, "feature_map": 512}))


def test_a_table_that_lists_every_io_slot_satisfies_it():
    assert _violations() == ()
    assert _violations(nodes=()) == ()   # no nodes recorded: the roles are not judged


@pytest.mark.parametrize("table, culprit, words", [
    (TABLE[:2], "task 1 slot 0", "not in the zero-copy table"),
    (TABLE + (ZeroCopyEntry(1, 1, "x", "input"),), "task 1 slot 1", "not the I/O region"),
    (TABLE[:2] + (ZeroCopyEntry(1, 0, "x", "input", 128),), "I/O 'x'", "disagree on where it starts"),
    ((ZeroCopyEntry(0, 0, "x", "output"),) + TABLE[1:], "task 0 slot 0", "the model's input"),
    (TABLE[:2] + (ZeroCopyEntry(1, 0, "b", "input", 0),), "task 1 slot 0", "no Data output"),
])
def test_a_table_that_misses_or_misplaces_a_slot_is_reported(table, culprit, words):
    (v,) = _violations(table=table)
    assert v.culprit == culprit and words in v.message, v


def test_an_hccl_slot_is_listed_exactly_when_it_is_zero_copy():
    hccl = Task(2, "hccl", (ArgSlot(0, "zero_copy", 512, 256, "in", "x", zero_copy=True),), node="ar")
    assert _violations(tasks=TASKS + (hccl,), table=TABLE + (ZeroCopyEntry(2, 0, "x", "input"),)) == ()
    unlisted = _violations(tasks=TASKS + (hccl,))   # in the I/O region, and flagged zero-copy: both said
    assert {v.culprit for v in unlisted} == {"task 2 slot 0"} and len(unlisted) == 2
    fixed = Task(2, "hccl", (ArgSlot(0, "feature_map", 0, 64, "in", "c", zero_copy=False),), node="ar")
    assert _violations(tasks=TASKS + (fixed,)) == ()
    (v,) = _violations(tasks=TASKS + (attrs.evolve(fixed, slots=(attrs.evolve(fixed.slots[0], zero_copy=True),)),))
    assert "records its buffer as zero-copy, but the table does not list" in v.message


def _case(model: str):
    config = VerifyConfig(models=(model,), kinds=("model_file",), strategies=("ge",))
    return next(s for label, s in zoo_cases(config) if label == f"{model} [model_file, ge]")


@pytest.mark.parametrize("model", ["builtin:split_views", "builtin:view_passthrough", "builtin:inplace_passthrough"])
def test_io_offsets_that_forget_views_fail_verify_through_this_claim(model, monkeypatch):
    (before,) = observe(_case(model))
    assert check(before).ok and CLAIM in check(before).exercised
    real = io_offsets.io_offsets

    def forget_views(graph, plan):
        found = real(graph, plan)
        io = set(graph.inputs) | set(graph.outputs)
        return io_offsets.IoOffsets(found.basic, {k: v for k, v in found.owner.items() if k in io})

    monkeypatch.setattr(taskgen, "io_offsets", forget_views)
    monkeypatch.setattr(consistency, "io_offsets", forget_views)
    (after,) = observe(_case(model))
    assert after.load.accepted and check(after).violated() == (CLAIM,), str(check(after))
