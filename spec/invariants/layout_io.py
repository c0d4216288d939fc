"""LAYOUT-IO-ATTRIBUTES: the model attributes the runtime reads, judged against GE's rules for the graph's I/O.

The runtime never sees the planner's blocks or flags. It reads ``memory_size`` and
``zero_copy_memory_size`` (the I/O region is the last ``zero_copy_memory_size`` bytes of the work
memory), each I/O's ``_zero_copy_basic_offset`` (where it finds the I/O), and a graph input's
``_is_zero_copy_block`` (whether reuseZeroCopyMemory must copy it). This claim holds those
attributes to two things the planner did not write into them: where the tensors sit in the
transcribed plan, and which graph I/O GE's rules make zero copy, as the spec computes it from the
graph and its capability table (``expected_zero_copy``, the expectation of MEM-ZC-IO) rather than
from the plan's own ``zero_copy`` flags.
"""
from __future__ import annotations

from typing import Iterator

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.invariants._util import GE_MEM
from zcspec.spec.invariants.blocks import _zc_io_facts, expected_zero_copy
from zcspec.spec.observables.plan import PlanObservation

V1_MODEL = "runtime/v1/graph/load/model_manager/davinci_model.cc"


def _sizes(plan: PlanObservation, io_start: int) -> Iterator:
    """The work memory the runtime backs holds the feature map; the I/O region holds the zero-copy tensors."""
    a = plan.attributes
    for t in plan.tensors:
        if t.region == "feature_map" and t.end > io_start:
            yield violation(f"tensor {t.name!r}", f"ends at feature_map+{t.end}, past memory_size - "
                            f"zero_copy_memory_size = {io_start}: the runtime backs only that much work memory",
                            end=t.end, backed=io_start)
        if t.region == "zero_copy" and t.end > a.zero_copy_memory_size:
            yield violation(f"tensor {t.name!r}", f"ends at zero_copy+{t.end}, past zero_copy_memory_size="
                            f"{a.zero_copy_memory_size}", end=t.end, zero_copy_memory_size=a.zero_copy_memory_size)


def _basic_offsets(plan: PlanObservation, io_start: int) -> Iterator:
    """Each recorded basic offset is the I/O's address in the work memory, the I/O region starting where
    the attributes say (memory_size - zero_copy_memory_size), not where the planner's regions end."""
    base = {"feature_map": 0, "zero_copy": io_start}
    for name, basic in sorted(plan.attributes.basic_offsets.items()):
        t = plan.tensor.get(name)
        if t is not None and t.region in base and basic != base[t.region] + t.offset:
            yield violation(f"tensor {name!r}", f"its basic offset attribute is {basic}, but it sits at "
                            f"{t.region}+{t.offset} = {base[t.region] + t.offset} of the work memory",
                            basic_offset=basic, expected=base[t.region] + t.offset)


def _io_names(plan: PlanObservation) -> list[tuple[str, str]]:
    """(role, tensor) of every graph I/O the runtime looks up by attribute: the root Data outputs, then the
    root NetOutput's inputs."""
    outputs = plan.netoutput_inputs or plan.graph_outputs
    return [("input", n) for n in plan.graph_inputs] + [("output", n) for n in dict.fromkeys(outputs)]


def _as_ge_decides(plan: PlanObservation, io_start: int) -> Iterator:
    """The attributes say of each graph I/O what GE's zero-copy rules say of it: a graph input GE makes zero
    copy carries _is_zero_copy_block=true and only such an input does; a recorded basic offset of I/O GE
    makes zero copy lies in the I/O region, one of I/O GE does not make zero copy in the feature map."""
    a = plan.attributes
    expected = expected_zero_copy(plan)
    for role, name in _io_names(plan):
        if plan.root(name) not in expected:
            continue
        zero_copy = expected[plan.root(name)] is not None
        if role == "input" and a.is_zero_copy_block.get(name, False) != zero_copy:
            yield violation(f"tensor {name!r}", f"_is_zero_copy_block={a.is_zero_copy_block.get(name)}, but GE's "
                            f"rules make this graph input {'' if zero_copy else 'not '}zero copy: under "
                            f"reuseZeroCopyMemory the runtime would {'copy it' if zero_copy else 'bind it'}",
                            attribute=a.is_zero_copy_block.get(name), expected=zero_copy)
        basic = a.basic_offsets.get(name)
        if basic is not None and (basic >= io_start) != zero_copy:
            where = f"in the I/O region [{io_start}, {a.memory_size})" if basic >= io_start else \
                f"in the feature map [0, {io_start})"
            yield violation(f"tensor {name!r}", f"its basic offset {basic} lies {where}, but GE's rules make this "
                            f"graph {role} {'' if zero_copy else 'not '}zero copy", basic_offset=basic,
                            expected=zero_copy)


def _io_attributes(plan: PlanObservation):
    a = plan.attributes
    if a is None:
        return
    io_start = a.memory_size - a.zero_copy_memory_size
    if io_start < 0:
        yield violation("attribute zero_copy_memory_size", f"is {a.zero_copy_memory_size}, more than memory_size="
                        f"{a.memory_size}, which includes it", memory_size=a.memory_size)
        return
    yield from _sizes(plan, io_start)
    yield from _basic_offsets(plan, io_start)
    if _zc_io_facts(plan):
        yield from _as_ge_decides(plan, io_start)


IO_ATTRIBUTES = Invariant(
    id="LAYOUT-IO-ATTRIBUTES",
    title="The model attributes the runtime reads agree with the placements and with GE's zero-copy rules",
    statement="With memory_size and zero_copy_memory_size the model attributes (the I/O region being the last "
              "zero_copy_memory_size bytes of memory_size): every feature-map tensor ends before the I/O region "
              "and every zero-copy tensor within it; every graph I/O's basic offset attribute is where it sits in "
              "the work memory; and, where the plan gives the graph, the attributes say of each graph I/O what "
              "GE's zero-copy rules say of it (the spec's decision, not the plan's flags): a graph input carries "
              "_is_zero_copy_block=true exactly when GE makes it zero copy, and a basic offset lies in the I/O "
              "region exactly for I/O GE makes zero copy.",
    rationale="The runtime never sees the planner's blocks: it backs memory_size - zero_copy_memory_size bytes of "
              "work memory, treats every address past it as model I/O (an input is refreshable when its address "
              "lies in no earlier allocation), finds each I/O at its basic offset, and under reuseZeroCopyMemory "
              "copies every input whose _is_zero_copy_block is not true. Comparing the attributes with the "
              "planner's own flags proves only that the planner agrees with itself: an input the planner wrongly "
              "keeps out of the I/O region, with a flag and attributes to match, is copied on every call where GE "
              "binds the caller's buffer. The expectation here comes from the graph and GE's rules.",
    ge_source=GE_MEM + "block_mem_assigner.cc (IsZeroCopyBlock, MarkZeroCopyBlockAttr); " + GE_MEM +
              "graph_mem_assigner.cc (GraphMemoryAssigner::AssignZeroCopyMemory); compiler/graph/build/"
              "model_builder.cc (BuildModelDefForMem); compiler/graph/passes/memory_conflict/"
              "set_input_output_offset_pass.cc (SetInputOutputOffsetPass::Run); " + V1_MODEL +
              " (InitFeatureMapAndP2PMem, GenInputMemAllocations, InitInputZeroCopy)",
    applies_to="plan", concern="layout", predicate=_io_attributes,
    precondition=lambda plan: plan.attributes is not None and any(t.region in ("feature_map", "zero_copy")
                                                                   for t in plan.tensors),
    ge_only=True,
)
