"""Dynamic-batch branches at execution: which tasks one call launches, for both runtimes.

A dynamic-batch model has branches (tasks whose ``TaskDef.batch`` is a label such as
"b1"); the memory planner lets branches of different labels overlap because only one
runs per execution (GE: multi_batch_pass.cc ``MultiBatchPass::SetCaseLabel``). The caller picks the branch per
execution, as GE's
``aclmdlSetDynamicBatchSize`` does: ``GeExecutor::SetDynamicBatchSize`` (ge_executor.cc)
refuses a batch that matches none of the model's gears (``IsDynamicBatchSizeMatchModel``,
ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID) and writes the chosen one to the input the graph's
Case / StreamSwitchN switches on, so only that branch's streams run and the Merge after
them forwards its output. Here a call launches the tasks of the chosen label and the
unlabelled ones, and the Merge tasks joining the branches learn the choice
(``impl/device/kernels/merge.py``).

- :func:`labels` lists a model's branch labels (empty for a model without branches);
- :func:`problem` says what is wrong with a choice (None when it is fine): a model with
  branches needs one of its labels, a model without takes none;
- :func:`launches` says whether a task runs under a choice;
- :func:`for_branch` gives the device task to launch (a Merge with the choice attached).

Each runtime raises its own bad-input error with :func:`problem`'s message.
"""
from __future__ import annotations

import attrs

from zcspec.impl.device.kernels.merge import SELECTED


def labels(tasks) -> tuple[str, ...]:
    """The branch labels of TaskList ``tasks``, sorted ("" excluded)."""
    return tuple(sorted({t.batch for t in tasks.tasks if t.batch}))


def problem(model: str, known: tuple[str, ...], batch: str | None) -> str | None:
    """Why ``batch`` is not a valid choice for model ``model`` with branch labels ``known``, or None."""
    if not known:
        if batch is None:
            return None
        return f"model {model!r} has no dynamic-batch branches, the call chose batch={batch!r}; pass no batch"
    if batch is None:
        return (f"model {model!r} has dynamic-batch branches {list(known)}: choose one per execution "
                f"(batch=...)")
    if batch not in known:
        return f"batch={batch!r} is not a branch of model {model!r}; its branches are {list(known)}"
    return None


def launches(task, batch: str | None) -> bool:
    """Whether TaskDef ``task`` runs when branch ``batch`` is chosen: unlabelled tasks always do."""
    return not task.batch or task.batch == batch


def for_branch(device_task, batch: str | None):
    """The device task to launch: a Merge carries the chosen label (``SELECTED``), any other task is as loaded."""
    if device_task.op_type != "Merge":
        return device_task
    return attrs.evolve(device_task, attrs=tuple(device_task.attrs) + ((SELECTED, batch),))
