"""MF-TASK-ON-NODE-STREAM: every task of a built model file belongs to a node of the graph and runs on its stream.

The planted bug: task generation puts every kernel on stream 0 (a TaskDef built with a constant where the node's
stream belongs). The loader cannot see it (no stream of a node is in the file; MF-DETERMINED lists the tasks'
streams as free), and on the zoo's two-stream graphs the plan's cross-stream reuse then rests on an order no event
keeps."""
from __future__ import annotations

import attrs
import pytest

from zcspec.checks.scenario import observe
from zcspec.checks.verify import VerifyConfig
from zcspec.checks.verify_cases import zoo_cases
from zcspec.impl.compiler.tasks import taskgen
from zcspec.spec.check import check
from zcspec.spec.examples.build import model_file
from zcspec.spec.observables.model_file import FileEdit, NodeInfo, Task
from zcspec.spec.registry import get

CLAIM = "MF-TASK-ON-NODE-STREAM"
NODES = (NodeInfo("x", "Data"), NodeInfo("a", "Relu", ("x",), stream=0), NodeInfo("b", "Relu", ("x",), stream=1))


def _violations(tasks, **fields):
    return get(CLAIM).violations(model_file(nodes=NODES, tasks=tuple(tasks), **fields))


def test_tasks_on_their_nodes_streams_satisfy_it():
    assert _violations([Task(0, "kernel", node="a"), Task(1, "kernel", node="b", stream=1)]) == ()


def test_a_task_on_another_stream_or_of_no_node_is_reported():
    (v,) = _violations([Task(0, "kernel", node="a"), Task(1, "kernel", node="b", stream=0)])
    assert v.culprit == "task 1" and v.values == {"node": "b", "stream": 0, "node_stream": 1}
    (v,) = _violations([Task(0, "memset", node="ghost")])
    assert v.culprit == "task 0" and "does not hold" in v.message


def test_an_edited_file_or_one_without_its_graph_is_not_judged():
    wrong = [Task(0, "kernel", node="b", stream=0)]
    assert _violations(wrong, edit=FileEdit(("tasks", "tasks", 0, "stream"), identical=False)) == ()
    assert get(CLAIM).violations(model_file(tasks=tuple(wrong))) == ()


def _case(model: str):
    config = VerifyConfig(models=(model,), kinds=("model_file",), strategies=("ge",))
    return next(s for label, s in zoo_cases(config) if label == f"{model} [model_file, ge]")


@pytest.mark.parametrize("model", ["builtin:workspace_streams", "builtin:cross_stream_group"])
def test_kernels_put_on_stream_0_fail_verify_through_this_claim(model, monkeypatch):
    (before,) = observe(_case(model))
    assert check(before).ok and CLAIM in check(before).exercised
    assert len({n.stream for n in before.nodes}) > 1
    real = taskgen._tasks_of

    def on_stream_0(*args, **kwargs):
        return [attrs.evolve(t, stream=0) if t.kind == "kernel" else t for t in real(*args, **kwargs)]

    monkeypatch.setattr(taskgen, "_tasks_of", on_stream_0)
    (after,) = observe(_case(model))
    assert after.load.accepted and CLAIM in check(after).violated(), str(check(after))
