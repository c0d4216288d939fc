"""Dynamic-batch graphs through the compiler: Merge's rules, each task's branch label in the model file."""
from __future__ import annotations

import copy

import pytest

from zcspec.checks.zoo import dynamic_batch_graph
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.errors import GraphError
from zcspec.impl.compiler.model_file.encode import VERSION, encode, metadata, pack
from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.compiler.validate import validate


def test_every_task_carries_its_branch_and_the_file_keeps_it():
    m = build_model(dynamic_batch_graph())
    assert {t.node: t.batch for t in m.tasks.tasks} == {
        "b1_0": "b1", "b1_1": "b1", "b1_2": "b1", "b2_0": "b2", "b2_1": "b2", "b2_2": "b2", "merge": "", "out": ""}
    assert VERSION >= 3  # since version 3 every task carries its branch
    assert load_model(encode(m)) == m


def _meta_with(edit):
    meta, blob = metadata(build_model(dynamic_batch_graph()))
    meta = copy.deepcopy(meta)
    edit(meta["tasks"]["tasks"])
    return pack(meta, blob)


def _task(tasks, node):
    return next(t for t in tasks if t["node"] == node)


def test_the_loader_refuses_a_batch_that_is_not_a_string():
    data = _meta_with(lambda tasks: _task(tasks, "b2_1").update(batch=2))
    with pytest.raises(ModelFormatError, match=r"batch: expected str"):
        load_model(data)


def test_the_loader_refuses_a_merge_naming_an_unknown_branch():
    def edit(tasks):
        merge = _task(tasks, "merge")
        merge["attrs"] = [[k, {"tuple": ["b1", "zz"]} if k == "labels" else v] for k, v in merge["attrs"]]
    with pytest.raises(ModelFormatError, match=r"labels"):
        load_model(_meta_with(edit))


def _merge_graph(labels=("b1", "b2"), producer_labels=("b1", "b2"), merge_label="", shapes=((2, 4), (2, 4))):
    b = GraphBuilder("m")
    x = b.input("x", (2, 4))
    ends = [b.op("Relu", [x], name=f"r{i}", shape=s, _batch_label=lab)
            for i, (lab, s) in enumerate(zip(producer_labels, shapes))]
    extra = {"_batch_label": merge_label} if merge_label else {}
    b.output(b.op("Merge", ends, name="merge", shape=(2, 4), labels=labels, **extra))
    return b.build()


@pytest.mark.parametrize("kwargs, match", [
    ({"labels": ("b1",)}, "one distinct non-empty branch label per input"),
    ({"labels": ("b1", "b1")}, "one distinct non-empty branch label per input"),
    ({"labels": ("b1", "b3")}, r"listed for branch 'b3', but it is produced in branch 'b2'"),
    ({"merge_label": "b1"}, "takes no branch label"),
    ({"shapes": ((2, 4), (4, 2))}, "every branch must give the same tensor"),
])
def test_validation_names_a_malformed_merge(kwargs, match):
    with pytest.raises(GraphError, match=match):
        validate(_merge_graph(**kwargs))


def test_a_well_formed_merge_validates():
    assert validate(_merge_graph()) is not None
