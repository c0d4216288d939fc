"""The catalogue: every invariant, in document order, by concern.

Concern modules are listed here explicitly (no import-time registration
magic), so the order of the spec document is the order of this tuple and of
each module's ``INVARIANTS``.
"""
from __future__ import annotations

import functools

from zcspec.spec.errors import DuplicateInvariantError, UnknownInvariantError
from zcspec.spec.invariant import Invariant
from zcspec.spec.invariants import (allocator_active, allocator_blocks, allocator_threads, api_calls, blocks, calls_refused, device_kernels, device_memory, execution,
                                    input_file, layout, layout_dataflow, layout_paths, layout_refs, layout_tight, model_file, passes, runtime_v1,
                                    runtime_v2, trace_form)

# (concern, module, one-line description used as the section intro)
CONCERNS = (
    ("input_file", input_file, "What a front end must refuse, judged from the input file itself."),
    ("layout", layout, "Where tensors sit in the model's memory."),
    ("layout_dataflow", layout_dataflow, "What a read of reused memory sees: the bytes written for the tensor it reads."),
    ("layout_paths", layout_paths, "Where tensors sit along one execution path: their memory exists on it first."),
    ("layout_tight", layout_tight, "Where GE's rules fix a number: the work memory packed from offset 0, no spare bytes."),
    ("layout_refs", layout_refs, "Where GE's rules decide sharing: a ref output or an in-place pair GE keeps is computed in its input's memory, a pair it refuses is not."),
    ("blocks", blocks, "Which tensors may share a planner block."),
    ("passes", passes, "Graph passes that exist for zero copy."),
    ("model_file", model_file, "What a compiled model file must satisfy to load."),
    ("runtime_v1", runtime_v1, "DavinciModel-style static runtime: address refresh and copy-only I/O."),
    ("runtime_v2", runtime_v2, "Lowered (gert-style) runtime: output zero copy and always_zero_copy."),
    ("allocator_threads", allocator_threads,
     "The runtimes' allocators under threads: v1's keep exact accounts, v2's has one caller inside at a time."),
    ("allocator_active", allocator_active,
     "Where runtime v1's active-memory allocator gets device memory: GE's blocks for each call, merged and rounded."),
    ("allocator_blocks", allocator_blocks,
     "Where runtime v2's caching allocator puts its blocks: on GE's 512-byte grain, inside the spans it holds."),
    ("execution", execution, "What every execution must guarantee, whichever runtime ran it."),
    ("trace_form", trace_form, "The traces the other claims read: events numbered in order, no negative address."),
    ("calls_refused", calls_refused, "A call with invalid buffers: refused with GE's error before it does anything."),
    ("api_calls", api_calls, "A call that misuses the API: refused with GE's error, naming the misuse, changing nothing."),
    ("device_memory", device_memory,
     "The emulated device the other claims trust: it refuses exactly the illegal accesses, mallocs and frees."),
    ("device_kernels", device_kernels,
     "The emulated device's kernels and collectives: they compute what ONNX and HCCL define, and the device "
     "refuses exactly the kernels whose operands do not fit."),
)


@functools.lru_cache(maxsize=None)
def all_invariants() -> tuple[Invariant, ...]:
    """Every invariant of the catalogue, in document order; ids are unique."""
    out: list[Invariant] = []
    seen: set[str] = set()
    for concern, module, _ in CONCERNS:
        for inv in module.INVARIANTS:
            if inv.id in seen:
                raise DuplicateInvariantError(inv.id)
            if inv.concern != concern:
                raise ValueError(f"invariant {inv.id} says concern={inv.concern!r} but lives in spec.invariants.{concern}")
            seen.add(inv.id)
            out.append(inv)
    return tuple(out)


def get(invariant_id: str) -> Invariant:
    """The invariant with this id; UnknownInvariantError otherwise."""
    for inv in all_invariants():
        if inv.id == invariant_id:
            return inv
    raise UnknownInvariantError(invariant_id, tuple(i.id for i in all_invariants()))


def ids() -> tuple[str, ...]:
    return tuple(i.id for i in all_invariants())
