"""Model file: what a compiled model file must satisfy to be loaded (applies to model files)."""
from __future__ import annotations

from zcspec.spec.invariant import Invariant, violation
from zcspec.spec.observables.model_file import ModelFileObservation


# -- MF-WELL-FORMED ---------------------------------------------------------------------------

def _well_formed(mf: ModelFileObservation):
    problems = mf.header.problems()
    if mf.load is not None and mf.load.accepted and problems:
        yield violation("model file header", "the loader accepted a malformed file: " + "; ".join(problems),
                        problems=list(problems))


WELL_FORMED = Invariant(
    id="MF-WELL-FORMED",
    title="Only well-formed model files load",
    statement="A model file is accepted by the loader only if its magic is the expected one, its version is "
              "supported, its declared length is its real length and its stored checksum equals the checksum "
              "recomputed from its bytes.",
    rationale="A truncated or corrupted file loaded anyway gives tasks whose argument slots point anywhere; "
              "the device would fault (or silently compute garbage) far from the cause. GE validates the om "
              "header and partition table at load (a static om with one partition is rejected, E10055).",
    ge_source="runtime/v1/graph/load/model_manager/model_manager.cc (ModelManager::GetModelMemAndWeightSize)",
    applies_to="model_file", concern="model_file", predicate=_well_formed,
    # Only a malformed file can tell a loader that checks from one that does not.
    precondition=lambda mf: mf.load is not None and bool(mf.header.problems()),
)


# -- MF-SLOT-IN-REGION ------------------------------------------------------------------------

def _slot_in_region(mf: ModelFileObservation):
    for task in mf.tasks:
        for s in task.slots:
            size = mf.regions.get(s.region)
            if size is None or s.offset < 0 or s.offset + s.size > size or (s.size == 0 and s.offset > size):
                yield violation(f"task {task.id} slot {s.index}", f"references {s.region}+{s.offset} "
                                f"({s.size} bytes), outside region {s.region!r} of size {size}",
                                region=s.region, offset=s.offset, size=s.size, region_size=size)
    slots = {(t.id, s.index) for t in mf.tasks for s in t.slots}
    for e in mf.zero_copy_table:
        if (e.task, e.slot) not in slots:
            yield violation(f"task {e.task} slot {e.slot}", f"is in the zero-copy table for {e.io!r} but the "
                            f"task has no such argument slot", io=e.io)


SLOT_IN_REGION = Invariant(
    id="MF-SLOT-IN-REGION",
    title="Every argument slot lies inside its region",
    statement="Every task argument slot references an address range (region + offset, size bytes) that lies "
              "inside a region of the model file, and every entry of the zero-copy offset table names an "
              "existing task argument slot.",
    rationale="At load the runtime turns region + offset into a device address and, for zero-copy entries, "
              "rewrites the slot with the user's buffer each execution; a slot outside its region is an "
              "out-of-bounds access waiting to happen, a table entry naming no slot is a refresh that "
              "silently does nothing.",
    ge_source="runtime/v1/graph/load/model_manager/task_info/args_io_addrs_updater.cc; "
              "[legacy] 910/ge/graph/load/model_manager/zero_copy_task.cc (offset + 8 <= args size)",
    applies_to="model_file", concern="model_file", predicate=_slot_in_region,
    precondition=lambda mf: any(t.slots for t in mf.tasks),
)

INVARIANTS = (WELL_FORMED, SLOT_IN_REGION)
