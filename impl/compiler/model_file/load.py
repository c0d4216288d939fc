"""Loading ``.zcm`` bytes: validate everything, allocate nothing, return a CompiledModel.

The file may come from an untrusted party, so every field is checked before a
runtime allocates anything: header, version, checksum, JSON shape, known task
kinds and kernels, every argument slot inside its region, sizes consistent with
shapes and dtypes, offsets aligned, the zero-copy table pointing at real slots
and I/O, weights inside the blob and the weight region. Any problem is a
``ModelFormatError`` naming the field; no other exception escapes.
"""
from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.model_file import schema
from zcspec.impl.compiler.errors import ArtefactFormatError
from zcspec.impl.compiler.memory.plan_types import MemoryPlan
from zcspec.impl.compiler.model_file.consistency import MAX_SIZE, check_consistency, check_regions
from zcspec.impl.compiler.options import CompileOptions, options_from_json
from zcspec.impl.compiler.model_file.encode import HEADER, MAGIC, VERSION
from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.model_file.model import CompiledModel, WeightEntry
from zcspec.impl.compiler.tasks.tasklist import TaskList
from zcspec.impl.platform import dtypes
from zcspec.impl.platform.errors import SizeOverflowError, UnknownDTypeError
from zcspec.impl.platform.kernel_ops import KERNEL_OPS

MAX_STREAMS = 2**16  # a stream id is a small non-negative number (GE's stream_num is a u32 count)


def _header(data: bytes) -> tuple[int, int]:
    if len(data) < HEADER.size:
        raise ModelFormatError("header", f"file is {len(data)} bytes, shorter than the {HEADER.size}-byte header")
    magic, version, header_len, meta_len, blob_len, digest = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise ModelFormatError("magic", f"{magic!r} is not {MAGIC!r}: not a zcspec model")
    if version != VERSION:
        raise ModelFormatError("version", f"format version {version} is not supported (this zcspec reads {VERSION})")
    if header_len != HEADER.size:
        raise ModelFormatError("header length", f"{header_len}, expected {HEADER.size}")
    if HEADER.size + meta_len + blob_len != len(data):
        raise ModelFormatError(
            "lengths", f"header says {HEADER.size} + {meta_len} + {blob_len} bytes, file has {len(data)}")
    if hashlib.sha256(data[HEADER.size:]).digest() != digest:
        raise ModelFormatError("checksum", "SHA-256 of the body does not match the header (file corrupted?)")
    return meta_len, blob_len


def _json(raw: bytes) -> dict:
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ModelFormatError("metadata", f"not UTF-8 JSON: {e}") from None
    if not isinstance(meta, dict):
        raise ModelFormatError("metadata", "top level is not an object")
    return meta


def _check_slot(slot, where: str, regions: dict) -> None:
    try:
        nbytes = dtypes.nbytes(slot.shape, slot.dtype, tensor=slot.tensor)
    except (UnknownDTypeError, SizeOverflowError) as e:
        raise ModelFormatError(where, str(e)) from None
    if any(not isinstance(d, int) or d < 0 for d in slot.shape):
        raise ModelFormatError(where, f"shape {slot.shape!r} must be non-negative integers")
    if slot.nbytes != nbytes:
        raise ModelFormatError(where, f"nbytes={slot.nbytes} but {slot.shape}x{slot.dtype} is {nbytes} bytes")
    if slot.region not in regions:
        raise ModelFormatError(where, f"region {slot.region!r} is not in the model")
    schema.count(slot.offset, f"{where}.offset", MAX_SIZE)
    if slot.offset + slot.nbytes > regions[slot.region]:
        raise ModelFormatError(
            where, f"[{slot.offset}, {slot.offset + slot.nbytes}) lies outside region {slot.region!r} "
                   f"of {regions[slot.region]} bytes")
    item = dtypes.get(slot.dtype).bits // 8
    if item and slot.offset % item:
        raise ModelFormatError(where, f"offset {slot.offset} is not aligned to its {item}-byte elements")


def _check_task(task, i: int, regions: dict) -> None:
    where = f"tasks[{i}] ({task.node!r})"
    if task.index != i:
        raise ModelFormatError(where, f"index {task.index} out of sequence")
    schema.count(task.stream, f"{where}.stream", MAX_STREAMS)
    info = ops.info(task.op_type)
    if task.kind == "memset":
        if task.op_type != "AtomicAddrClean" or task.attrs != (("value", 0),):
            raise ModelFormatError(where, f"a memset task is GE's AtomicAddrClean to 0, not {task.op_type!r} "
                                          f"{dict(task.attrs)!r}")
    elif info is None or (task.kind == "hccl") != (info.kind == "hccl"):
        raise ModelFormatError(where, f"op {task.op_type!r} is not a known {task.kind} op")
    elif task.kind != "hccl" and task.op_type not in KERNEL_OPS:
        raise ModelFormatError(where, f"no kernel {task.op_type!r} in the device library")
    if task.kind != "memset":  # the op fixes its task's kind (ops.task_kinds, the rule's one home)
        attrs = dict(task.attrs)
        kinds = ops.task_kinds(SimpleNamespace(op_type=task.op_type, attr=lambda k, d=None: attrs.get(k, d)))
        if task.kind not in kinds or task.kind == "memset":
            raise ModelFormatError(f"{where}.kind", f"{task.kind!r}, but a {task.op_type} node's tasks are {kinds}")
    if info is not None and task.kind != "memset":  # validate.py's arity, which every node keeps
        for role, (lo, hi) in (("in", info.inputs), ("out", info.outputs)):
            n = sum(s.role == role for s in task.slots)
            if n < lo or (hi is not None and n > hi):
                raise ModelFormatError(f"{where}.slots", f"{n} {role} slots; a {task.op_type} has "
                                                         f"{lo}..{'any' if hi is None else hi}")
    if task.kind == "hccl":   # GE's HcclTaskInfo::InitZeroCopyInfos: each list has one flag per buffer of its role
        for role, flags in (("in", task.zero_copy_in), ("out", task.zero_copy_out)):
            n = sum(s.role == role for s in task.slots)
            if len(flags) != n:
                raise ModelFormatError(f"{where}.zero_copy_{role}",
                                       f"{len(flags)} zero-copy flags for {n} {role} buffers: each list has one "
                                       f"flag per buffer (GE's HcclTaskInfo::InitZeroCopyInfos)")
    for j, slot in enumerate(task.slots):
        if slot.role not in ("in", "out"):
            raise ModelFormatError(f"{where}.slots[{j}]", f"role {slot.role!r} is not in/out")
        _check_slot(slot, f"{where}.slots[{j}] ({slot.tensor!r})", regions)


def _check_branches(tasks: TaskList, plan: MemoryPlan) -> None:
    """The plan's ``branches`` name nodes of its order; every task runs in the branch the plan gives its
    node ("" outside any); every tensor's ``batch`` and every Merge's ``labels`` are branch labels of the
    model (a runtime chooses among exactly those, runtime/branches.py)."""
    order = set(plan.order)
    for node, label in plan.branches.items():
        if node not in order or not label:
            raise ModelFormatError(f"plan.branches.{node}", f"{label!r}: not a labelled node of the plan's order")
    known = set(plan.branches.values())
    for i, t in enumerate(plan.tensors):
        if t.batch is not None and t.batch not in known:
            raise ModelFormatError(f"plan.tensors[{i}] ({t.name!r}).batch", f"{t.batch!r} is not a branch of the "
                                                                           f"model (known: {sorted(known)})")
    for i, task in enumerate(tasks.tasks):
        where = f"tasks[{i}] ({task.node!r})"
        if task.batch != plan.branches.get(task.node, ""):
            raise ModelFormatError(f"{where}.batch", f"{task.batch!r}, but the plan puts node {task.node!r} in "
                                                     f"branch {plan.branches.get(task.node, '')!r}")
        if task.op_type == "Merge":
            labels = dict(task.attrs).get("labels")
            if not isinstance(labels, tuple) or not labels or not all(x in known for x in labels):
                raise ModelFormatError(f"{where}.attrs.labels", f"{labels!r} must list batch labels of the model "
                                                                f"(known: {sorted(known)})")


def _check_io(tasks: TaskList, regions: dict) -> None:
    for role, table in (("input", tasks.inputs), ("output", tasks.outputs)):
        for i, io in enumerate(table):
            where = f"{role}s[{i}] ({io.tensor!r})"
            if io.index != i or io.role != role:
                raise ModelFormatError(where, "index or role out of sequence")
            try:
                nbytes = dtypes.nbytes(io.shape, io.dtype, tensor=io.tensor)
            except (UnknownDTypeError, SizeOverflowError) as e:
                raise ModelFormatError(where, str(e)) from None
            if io.size < io.nbytes or io.nbytes != nbytes:
                raise ModelFormatError(where, f"size {io.size} / nbytes {io.nbytes} inconsistent with its shape")
            if io.region not in regions or io.offset < 0 or io.offset + io.size > regions[io.region]:
                raise ModelFormatError(where, f"[{io.offset}, {io.offset + io.size}) outside region {io.region!r}")
    io = {("input", d.index): d for d in tasks.inputs} | {("output", d.index): d for d in tasks.outputs}
    for k, ref in enumerate(tasks.zero_copy):
        where = f"zero_copy[{k}]"
        if not 0 <= ref.task < len(tasks.tasks) or not 0 <= ref.slot < len(tasks.tasks[ref.task].slots):
            raise ModelFormatError(where, f"task {ref.task} slot {ref.slot} does not exist")
        target = io.get((ref.role, ref.index))
        slot = tasks.tasks[ref.task].slots[ref.slot]
        if target is None or not target.zero_copy:
            raise ModelFormatError(where, f"{ref.role} {ref.index} is not a zero-copy model {ref.role}")
        if slot.region != target.region or slot.offset != target.offset + ref.relative_offset:
            raise ModelFormatError(where, f"slot {slot.tensor!r} at {slot.region}+{slot.offset} is not "
                                          f"{ref.role} {ref.index} + relative offset {ref.relative_offset}")


def _weights(meta: dict, blob: bytes, regions: dict) -> list[WeightEntry]:
    out = []
    end = 0  # the encoder writes the weights' bytes back to back in table order (encode.metadata)
    for i, w in enumerate(schema.field(meta, "weights", list, "metadata")):
        where = f"weights[{i}]"
        entry = schema.weight(w, where)
        start, n = w["blob_offset"], w["blob_nbytes"]
        schema.count(start, f"{where}.blob_offset", MAX_SIZE)
        if start != end:
            raise ModelFormatError(f"{where}.blob_offset", f"{start}, but the weights before it end at blob byte {end}"
                                                          f" (the blob holds each weight's bytes in table order)")
        end = start + n
        if start + n > len(blob):
            raise ModelFormatError(where, f"blob range [{start}, {start + n}) past the {len(blob)}-byte blob")
        try:
            full = dtypes.nbytes(entry.shape, entry.dtype, tensor=entry.name)
            item = (dtypes.get(entry.dtype).bits + 7) // 8
        except (UnknownDTypeError, SizeOverflowError) as e:
            raise ModelFormatError(where, str(e)) from None
        if n != (item if entry.splat else full):
            raise ModelFormatError(where, f"{n} bytes of data for {entry.shape}x{entry.dtype} (splat={entry.splat})")
        if entry.offset + full > regions.get("weight", 0):
            raise ModelFormatError(where, f"weight {entry.name!r} ends past the weight region")
        out.append(WeightEntry(entry.name, entry.offset, entry.shape, entry.dtype, entry.splat, blob[start:start + n]))
    if end != len(blob):
        raise ModelFormatError("weights", f"the weight table covers {end} bytes of the {len(blob)}-byte blob")
    return out


_TOP = ("name", "options", "plan", "tasks", "weights")


def _top(meta: dict) -> None:
    missing = [k for k in _TOP if k not in meta]
    unknown = sorted(k for k in meta if k not in _TOP)
    if missing or unknown:
        raise ModelFormatError("metadata", f"fields missing {missing} / unexpected {unknown}")


def _artefacts(meta: dict) -> tuple[CompileOptions, MemoryPlan]:
    """The options and the plan, through the artefacts' one JSON parser."""
    try:
        options = options_from_json(meta["options"], "options")
        plan = MemoryPlan.from_json(meta["plan"], "plan")
    except ArtefactFormatError as e:
        raise ModelFormatError(e.path, e.why) from None
    except ValueError as e:  # a well-typed but illegal value: the class's own validator names it
        raise ModelFormatError("options" if "plan option" not in str(e) else "plan.options", str(e)) from None
    return options, plan


def load_model(data: bytes, *, file: str = "") -> CompiledModel:
    """The CompiledModel in ``data``; ModelFormatError (naming ``file``) on anything malformed."""
    try:
        meta_len, _ = _header(data)
        meta = _json(data[HEADER.size:HEADER.size + meta_len])
        blob = data[HEADER.size + meta_len:]
        _top(meta)
        name = schema.field(meta, "name", str, "metadata")
        options, plan = _artefacts(meta)
        regions = plan.regions
        check_regions(plan)
        tasks = schema.tasklist(schema.field(meta, "tasks", dict, "metadata"))
        for i, task in enumerate(tasks.tasks):
            _check_task(task, i, regions)
        _check_branches(tasks, plan)
        _check_io(tasks, regions)
        weights = _weights(meta, blob, regions)
        check_consistency(plan, options, tasks, weights)
        return CompiledModel(name, options, plan, tasks, weights)
    except ModelFormatError as e:
        raise (e.in_file(file) if file else e) from None
