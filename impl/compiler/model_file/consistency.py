"""Cross-checks between the parts of a model file: the plan must agree with the tasks,
the I/O table, the weights and the regions, and its figures must be recomputable.

A crafted file that changes a size or offset in one place but not in the others
is rejected here, with the field named. Fields with no redundancy at all (a
tensor's lifetime, say) cannot be checked by any loader; the checksum covers
accidental damage there (docs/model-format.md).
"""
from __future__ import annotations

from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.tasks.io_offsets import contract_root


def _fail(where: str, why: str):
    raise ModelFormatError(where, why)


def _canonical(plan: dict) -> None:
    from zcspec.impl.compiler.memory.plan_types import MemoryPlan

    try:
        again = MemoryPlan.from_contract(plan).to_contract()
    except Exception as e:  # the planner's own parser: any failure means a malformed plan
        raise ModelFormatError("plan", f"does not parse as a MemoryPlan: {type(e).__name__}: {e}") from None
    if again != plan:
        diff = sorted(k for k in set(plan) | set(again) if plan.get(k) != again.get(k))
        _fail("plan", f"not in canonical form (fields {diff} differ when re-read)")


def _tensors(plan: dict, regions: dict, block_align: int) -> dict:
    order = plan["order"]
    if not all(isinstance(n, str) for n in order) or len(set(order)) != len(order):
        _fail("plan.order", "node names must be unique strings")
    tensors, blocks = {}, {b["id"]: b for b in plan["blocks"]}
    for i, t in enumerate(plan["tensors"]):
        where = f"plan.tensors[{i}] ({t['name']!r})"
        if t["name"] in tensors:
            _fail(where, "duplicate tensor")
        if not (0 <= t["first"] <= t["last"] < len(order)):
            _fail(where, f"lifetime [{t['first']}, {t['last']}] outside the {len(order)} steps")
        if not (0 < t["size"] <= t["aligned_size"] < t["size"] + block_align) or t["aligned_size"] % block_align:
            _fail(where, f"size {t['size']} / aligned_size {t['aligned_size']} inconsistent with {block_align}-byte blocks")
        b = blocks.get(t["block"])
        if b is None or b["region"] != t["region"]:
            _fail(where, f"block {t['block']!r} missing or in another region")
        if t["alias_of"] is not None and t["alias_of"] not in {x["name"] for x in plan["tensors"]}:
            _fail(where, f"alias_of {t['alias_of']!r} is not a planned tensor")
        tensors[t["name"]] = t
    for b in plan["blocks"]:
        if b["offset"] < 0 or b["offset"] + b["size"] > regions.get(b["region"], -1):
            _fail(f"plan.blocks[{b['id']}]", f"[{b['offset']}, {b['offset'] + b['size']}) outside region {b['region']!r}")
    return tensors


def _figures(plan: dict, tensors: dict) -> None:
    roots = [t for t in tensors.values() if t["region"] == "feature_map" and t["alias_of"] is None]
    events = sorted([(t["first"], t["aligned_size"]) for t in roots] + [(t["last"] + 1, -t["aligned_size"]) for t in roots])
    live = peak = 0
    for _, delta in events:
        live += delta
        peak = max(peak, live)
    if plan["lower_bound"] != peak:
        _fail("plan.lower_bound", f"{plan['lower_bound']} but the tensors' peak live bytes are {peak}")
    if plan["naive"] != sum(t["aligned_size"] for t in roots):
        _fail("plan.naive", f"{plan['naive']} is not the sum of the feature-map tensors' aligned sizes")


def _attributes(plan: dict, tasks, regions: dict) -> None:
    a = plan.get("attributes")
    if a is None:
        return
    if a["zero_copy_memory_size"] != regions["zero_copy"] or a["memory_size"] != regions["feature_map"] + regions["zero_copy"]:
        _fail("plan.attributes", "memory_size / zero_copy_memory_size disagree with the regions (ge-facts.md 3.2.6)")
    for role, table in (("inputs", tasks.inputs), ("outputs", tasks.outputs)):
        if len(a[role]) != len(table):
            _fail(f"plan.attributes.{role}", f"{len(a[role])} entries for {len(table)} model {role}")
        for attr, io in zip(a[role], table):
            base = regions["feature_map"] if io.region == "zero_copy" else 0
            if (attr["tensor"], attr["basic_offset"], attr["is_zero_copy_block"]) != (io.tensor, base + io.offset, io.zero_copy):
                _fail(f"plan.attributes.{role}[{io.index}]", f"disagrees with the I/O table entry for {io.tensor!r}")


def check_consistency(plan: dict, tasks, weights, regions: dict, block_align: int) -> None:
    _canonical(plan)
    tensors = _tensors(plan, regions, block_align)
    _figures(plan, tensors)
    _attributes(plan, tasks, regions)
    steps = set(plan["order"])
    for task in tasks.tasks:
        if task.node not in steps:
            _fail(f"tasks[{task.index}]", f"node {task.node!r} is not in the plan's order")
        for j, s in enumerate(task.slots):
            t = tensors.get(s.tensor)
            if t is None or (t["region"], t["offset"]) != (s.region, s.offset) or s.nbytes > t["size"]:
                _fail(f"tasks[{task.index}].slots[{j}] ({s.tensor!r})", "disagrees with the plan's placement")
    model_inputs = {io.tensor for io in tasks.inputs}
    for io in tasks.inputs + tasks.outputs:
        t = tensors.get(io.tensor)
        opts = plan.get("options") or {}
        own = -(-io.nbytes // opts.get("size_align", 32)) * opts.get("size_align", 32) + opts.get("size_padding", 32)
        through = io.role == "output" and t is not None and contract_root(tensors, io.tensor) in model_inputs
        if (t is None or (t["region"], t["offset"], t["zero_copy"] and not through) != (io.region, io.offset, io.zero_copy)
                or io.size != min(t["size"], own)):
            _fail(f"{io.role}s[{io.index}] ({io.tensor!r})", "disagrees with the plan's placement")
    for w in weights:
        t = tensors.get(w.name)
        if t is None or (t["region"], t["offset"]) != ("weight", w.offset):
            _fail(f"weight {w.name!r}", "offset disagrees with the plan's placement")
