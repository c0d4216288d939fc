"""Which model I/O runtime v1 must copy, computed by the spec from the loaded model's raw facts.

The runtime's own copy-only set is never consulted. From the load observation
(options, each I/O's region, offset and size, the model file's tasks with their
kinds, loop flags and slots, the HCCL zero-copy flags) and the spec's SoC table
(spec/capabilities.py), ``reasons(load)`` gives, per I/O, every GE rule that
forbids binding it zero copy; an I/O with none is *eligible*: its tasks must be
pointed at the user's buffer and nothing may copy or stage it.

The rules (GE's DavinciModel, ``runtime/v1/graph/load/model_manager/davinci_model.cc``):

- zero copy is off for the load;
- the I/O lives in the feature map, inside the feature-map allocation (``GenMemAllocations``, 6.5.2-6.5.3);
- it is an output whose bytes lie inside an earlier I/O's (a Data feeding NetOutput, an output listed
  twice; the model's inputs come before its outputs): ``GenOutputMemAllocations`` finds its address
  inside that allocation and copies it once after the run, from that allocation's active base
  (6.5.3, 6.5.7); the earlier I/O keeps zero copy (``copy_source``);
- its bytes overlap another I/O's otherwise (a partial overlap, ``DisableZeroCopy``, 6.4.4-6.4.5);
- no task argument points into it (``SetCopyOnlyOutput``, 6.4.6);
- ``reuseZeroCopyMemory`` is on and its block is not a zero-copy block (``InitInputZeroCopy``, 6.4.3);
- a task pointing into it cannot have its arguments refreshed on this SoC (a fixed address,
  ``task_args_refresh_type_classifier.cc``, 6.7.4; a raw ``MemcpyAsync``, 6.8.5);
- an HCCL task points into it through a buffer whose zero-copy flag is off
  (``HcclTaskInfo::InitZeroCopyInfos``, 6.8.2-6.8.3).
"""
from __future__ import annotations

import functools

from zcspec.spec.capabilities import TABLE, capabilities
from zcspec.spec.observables.load import IoTensor, LoadObservation

HCCL = "an HCCL task has no zero-copy support for it (hccl_task_info.cc HcclTaskInfo::InitZeroCopyInfos)"


def _users(load: LoadObservation, t: IoTensor):
    """(task, slot) for every argument slot whose logical address lies inside ``t``'s bytes."""
    end = t.offset + max(t.size, 1)
    for task in load.tasks:
        for s in task.slots:
            if s.region == t.region and t.offset <= s.offset < end:
                yield task, s


def copy_source(load: LoadObservation, t: IoTensor) -> tuple[IoTensor, int] | None:
    """For an output whose bytes lie inside an earlier I/O's (in GE's allocation order: inputs, then outputs),
    the first such I/O and the byte offset in it; None otherwise."""
    if t.role != "output" or t.region != "zero_copy":
        return None
    for o in load.io:
        if o is t:
            return None
        if o.region == t.region and o.offset <= t.offset and t.offset + t.size <= o.offset + o.size:
            return o, t.offset - o.offset
    return None


def _shared(load: LoadObservation, t: IoTensor) -> list[str]:
    """The other I/O ``t``'s bytes overlap, leaving out its copy source and the outputs it is the source of."""
    out = []
    for o in load.io:
        held = (copy_source(load, t) or (None,))[0] is o or (copy_source(load, o) or (None,))[0] is t
        if (o is not t and not held and o.region == t.region and o.offset < t.offset + t.size
                and t.offset < o.offset + o.size):
            out.append(f"{o.role} {o.name!r}")
    return out


@functools.lru_cache(maxsize=256)
def reasons(load: LoadObservation) -> dict[str, tuple[str, ...]]:
    """I/O name -> why it must be copied (empty: it is eligible for zero copy). Needs ``load.soc``."""
    caps = capabilities(load.soc)
    out = {}
    for t in load.io:
        why = []
        if not load.options.zero_copy:
            why.append("zero copy is off for this load")
        if t.region != "zero_copy":
            why.append(f"it lives in the {t.region} region, inside the feature-map allocation (davinci_model.cc GenMemAllocations)")
        if source := copy_source(load, t):
            why.append(f"its bytes lie inside {source[0].role} {source[0].name!r}'s, from where it is copied once "
                       f"after the run (GenOutputMemAllocations, 6.5.7)")
        if shared := _shared(load, t):
            why.append(f"its bytes are shared with {', '.join(shared)} (DisableZeroCopy, 6.4.4)")
        users = list(_users(load, t))
        if t.region == "zero_copy" and not users:
            why.append("no task argument points into it (SetCopyOnlyOutput, 6.4.6)")
        if load.options.reuse_zero_copy_memory and not t.zero_copy_block:
            why.append("reuseZeroCopyMemory is on and its block is not a zero-copy block (6.4.3)")
        for task, s in users:
            if not caps.can_refresh(task.kind, in_loop=task.in_loop):
                why.append(f"task {task.id} ({task.kind}{', in a loop' if task.in_loop else ''}) cannot have "
                           f"its arguments refreshed on {caps.name} (6.7.4)")
            if task.kind == "hccl" and s.zero_copy is False:
                why.append(HCCL)
        out[t.name] = tuple(dict.fromkeys(why))
    return out


def judged(load: LoadObservation) -> bool:
    """Whether the spec can say which I/O must be copied: a v1 load that names its tasks and a SoC of
    the capability table (a SoC the table does not know leaves these claims unexercised, never passed)."""
    return load.options.runtime == "v1" and load.soc in TABLE and bool(load.tasks)


def copy_only(load: LoadObservation) -> frozenset[str]:
    """The I/O the spec says must be copied (empty when the load cannot be judged)."""
    return frozenset(n for n, why in reasons(load).items() if why) if judged(load) else frozenset()


def eligible(load: LoadObservation) -> frozenset[str]:
    """The I/O the spec says must be zero copy (empty when the load cannot be judged)."""
    return frozenset(n for n, why in reasons(load).items() if not why) if judged(load) else frozenset()
