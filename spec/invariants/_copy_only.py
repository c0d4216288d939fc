"""Which model I/O runtime v1 must copy, computed by the spec from the loaded model's raw facts.

The runtime's own copy decision is never consulted. From the load observation (options, each
I/O's region, offset and size, the model file's tasks with their kinds, loop flags and slots, the
HCCL zero-copy flags) and the spec's SoC table (spec/capabilities.py), ``reasons(load)`` gives, per
I/O, every rule that makes it copied; an I/O with none is *eligible*: its tasks must be pointed at
the user's buffer and nothing may copy or stage it.

GE's execute path (``runtime/v1/graph/load/model_manager/davinci_model.cc``: ``NnExecute`` copies
what ``GenMemAllocations`` did not make a refreshable allocation), the default:

- zero copy is off for the load (zcspec's switch);
- the I/O lives in the feature map (or the weight or fixed region): ``GenInputMemAllocations`` /
  ``GenOutputMemAllocations`` find its address inside an allocation of the model;
- its address (its first byte, ``GetMemAllocationByLogicAddr``) lies inside the allocation of an
  earlier I/O (inputs first, then outputs; an I/O that is itself copied has none): a Data feeding
  NetOutput, an output listed twice. It is copied once, into (an input) or out of (an output) where
  that I/O is in the call, and the earlier I/O keeps zero copy (``copy_source``);
- a task pointing into it cannot have its arguments refreshed on this SoC. GE fixes such a task's
  address instead (``task_args_refresh_type_classifier.cc``, ``FixedAddrInferrer``), which refuses
  the load unless the peer is an Identity; zcspec copies, a deliberate difference (docs/ge-deviations.md).

An input no task reads and an output no task writes are refreshable allocations no slot uses: they
are eligible, and nothing is copied for them.

GE's legacy paths (``legacy_copy_only_addrs`` on the load): the set ``copy_only_addrs_``, which only
``CopyOutputDataLegacy`` and the queue paths (``BindOutputQueue``, ``CpuInputCopyProcess``) read. The
rules above, an output held in an earlier I/O only when all its bytes are, and also:

- its bytes overlap another I/O's otherwise (``DisableZeroCopy`` from ``InitNetOutput``);
- no task argument points into it (``SetCopyOnlyOutput``);
- ``reuseZeroCopyMemory`` is on and its block is not a zero-copy block (``InitInputZeroCopy``,
  ``DisableZeroCopyInReuseMemoryMode``);
- an HCCL task points into it through a buffer whose zero-copy flag is off
  (``hccl_task_info.cc`` ``HcclTaskInfo::InitZeroCopyInfos``, then ``DisableZeroCopy``).
"""
from __future__ import annotations

import functools

from zcspec.spec.capabilities import TABLE, capabilities
from zcspec.spec.observables.load import IoTensor, LoadObservation

HCCL = ("an HCCL task has no zero-copy support for it (hccl_task_info.cc HcclTaskInfo::InitZeroCopyInfos, then "
        "davinci_model.cc DisableZeroCopy: a legacy copy-only address)")
ZERO_COPY_OFF = "zero copy is off for this load"


def users(load: LoadObservation, t: IoTensor):
    """(task, slot) for every argument slot whose logical address lies inside ``t``'s bytes."""
    end = t.offset + max(t.size, 1)
    for task in load.tasks:
        for s in task.slots:
            if s.region == t.region and t.offset <= s.offset < end:
                yield task, s


def _own(load: LoadObservation, t: IoTensor) -> list[str]:
    """The rules that need no other I/O: zero copy off, a region other than zero copy, an unrefreshable task."""
    caps = capabilities(load.soc)
    why = [ZERO_COPY_OFF] if not load.options.zero_copy else []
    if t.region != "zero_copy":
        why.append(f"it lives in the {t.region} region, inside an allocation of the model (davinci_model.cc "
                   "GenInputMemAllocations / GenOutputMemAllocations)")
        return why
    for task, _s in users(load, t):
        if not caps.can_refresh(task.kind, in_loop=task.in_loop):
            why.append(f"task {task.id} ({task.kind}{', in a loop' if task.in_loop else ''}) cannot have its "
                       f"arguments refreshed on {caps.name}; GE would fix its address (task_args_refresh_type_"
                       "classifier.cc), zcspec copies")
    return why


@functools.lru_cache(maxsize=256)
def _sources(load: LoadObservation) -> dict[str, tuple[IoTensor, int]]:
    """I/O name -> (the earlier I/O holding it, byte offset), by the load's path (module docstring)."""
    out = {}
    if load.options.legacy_copy_only_addrs:
        for i, t in enumerate(load.io):
            if t.role != "output" or t.region != "zero_copy":
                continue
            for o in load.io[:i]:
                if o.region == t.region and o.offset <= t.offset and t.offset + t.size <= o.offset + o.size:
                    out[t.name] = (o, t.offset - o.offset)
                    break
        return out
    built: list[IoTensor] = []   # the refreshable allocations so far, in GE's order
    for t in load.io:
        if t.region != "zero_copy":
            continue
        hit = next(((o, t.offset - o.offset) for o in built if o.offset <= t.offset < o.offset + o.size), None)
        if hit is not None:
            out[t.name] = hit
        elif not set(_own(load, t)) - {ZERO_COPY_OFF}:
            built.append(t)   # zero copy off: laid out as if on, so a held output is still copied once
    return out


def copy_source(load: LoadObservation, t: IoTensor) -> tuple[IoTensor, int] | None:
    """For I/O held in an earlier I/O's allocation, that I/O and the byte offset in it; None otherwise."""
    return _sources(load).get(t.name)


def _shared(load: LoadObservation, t: IoTensor) -> list[str]:
    """Legacy rule: the other I/O ``t``'s bytes overlap, leaving out its copy source and the outputs it
    is the source of."""
    out = []
    for o in load.io:
        held = (copy_source(load, t) or (None,))[0] is o or (copy_source(load, o) or (None,))[0] is t
        if (o is not t and not held and o.region == t.region and o.offset < t.offset + t.size
                and t.offset < o.offset + o.size):
            out.append(f"{o.role} {o.name!r}")
    return out


def _legacy(load: LoadObservation, t: IoTensor) -> list[str]:
    """The legacy paths' further rules (copy_only_addrs_)."""
    why = []
    if shared := _shared(load, t):
        why.append(f"its bytes are shared with {', '.join(shared)} (davinci_model.cc DisableZeroCopy)")
    pointing = list(users(load, t))
    if t.region == "zero_copy" and not pointing:
        why.append("no task argument points into it (davinci_model.cc SetCopyOnlyOutput)")
    if load.options.reuse_zero_copy_memory and not t.zero_copy_block:
        why.append("reuseZeroCopyMemory is on and its block is not a zero-copy block (davinci_model.cc "
                   "InitInputZeroCopy)")
    if any(task.kind == "hccl" and s.zero_copy is False for task, s in pointing):
        why.append(HCCL)
    return why


@functools.lru_cache(maxsize=256)
def reasons(load: LoadObservation) -> dict[str, tuple[str, ...]]:
    """I/O name -> why it must be copied (empty: it is eligible for zero copy). Needs ``load.soc``."""
    out = {}
    for t in load.io:
        why = _own(load, t)
        if source := copy_source(load, t):
            how = "into" if t.role == "input" else "out of"
            why.append(f"its address lies inside {source[0].role} {source[0].name!r}'s allocation, at byte "
                       f"{source[1]}: copied once {how} it (davinci_model.cc GenMemAllocations)")
        if load.options.legacy_copy_only_addrs:
            why += _legacy(load, t)
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
