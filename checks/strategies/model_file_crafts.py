"""Model-file crafts: targeted, re-signed edits of a built ``.zcm`` file, one per refusal of the loader.

``apply_craft(data, at)`` applies the craft ``at`` picks (``at`` modulo ``len(CRAFTS)``, the next one that
applies when the file has nothing it could edit; ``at // len(CRAFTS)`` which part of the file it edits) and
returns its name, the bytes and the JSON path it changed; ``crafted_mutations(data, seed)`` gives one
``{"op": "craft", "at": N}`` per craft that applies to ``data``: what verify runs. Why they exist and how a
mutation is checked and applied: checks/strategies/model_files.py, whose ``craft`` op this is.
"""
from __future__ import annotations

import copy
import hashlib
import json
import struct
from typing import Callable

from zcspec.impl.compiler import ops
from zcspec.impl.compiler.model_file.consistency import MAX_SIZE
from zcspec.impl.compiler.model_file.encode import HEADER, MAGIC, VERSION, pack
from zcspec.impl.platform import dtypes
from zcspec.impl.platform.kernel_ops import KERNEL_OPS
from zcspec.spec.invariants.model_file import is_free

CRAFT = "craft"   # the op of a craft mutation: checked like model_files.OPS, never drawn by mutations()


def split(data: bytes) -> tuple[int, dict, bytes]:
    """A file's format version, decoded metadata and weight blob."""
    _, version, header_len, meta_len, _, _ = HEADER.unpack_from(data)
    return version, json.loads(data[header_len:header_len + meta_len]), data[header_len + meta_len:]


# Each takes the file (``data``, its decoded metadata ``meta`` and weight ``blob``) and ``k``, which part of
# the file to edit, and returns the new bytes and the JSON path changed (``()``: the metadata as a whole;
# None: no metadata changed), or None when the file has nothing it could edit. The comment names the check
# each is aimed at (impl/compiler/model_file/: load.py, schema.py, consistency.py; artefact_json.py).

_CRAFTS: dict[str, Callable] = {}


def _craft(fn):
    _CRAFTS[fn.__name__.lstrip("_")] = fn
    return fn


def _sign(raw: bytes, blob: bytes) -> bytes:
    """Metadata bytes ``raw`` and ``blob`` behind a well-formed header with a valid checksum."""
    return HEADER.pack(MAGIC, VERSION, HEADER.size, len(raw), len(blob), hashlib.sha256(raw + blob).digest()) + raw + blob


def _pick(seq, k: int):
    return seq[k % len(seq)] if seq else None


def _tasks(meta) -> list:
    return meta["tasks"]["tasks"]


def _objects(meta) -> list[tuple]:
    """The paths of every object the loader's schema reads field by field (schema.py: tasks, slots, I/O,
    zero-copy references, weights), determined ones only."""
    out = []
    for i, t in enumerate(_tasks(meta)):
        out.append(("tasks", "tasks", i))
        out += [("tasks", "tasks", i, "slots", j) for j in range(len(t["slots"]))]
    for role in ("inputs", "outputs", "zero_copy"):
        out += [("tasks", role, i) for i in range(len(meta["tasks"][role]))]
    return out + [("weights", i) for i in range(len(meta["weights"]))]


def _artefacts(meta) -> list[tuple]:
    """The paths of the objects artefact_json reads (the options, the plan and the objects inside it)."""
    plan = meta["plan"]
    return ([("options",), ("plan",), ("plan", "options"), ("plan", "attributes")]
            + [("plan", "tensors", i) for i in range(len(plan["tensors"]))]
            + [("plan", "blocks", i) for i in range(len(plan["blocks"]))]
            + [("plan", "attributes", r, i) for r in ("inputs", "outputs") for i in range(len(plan["attributes"][r]))])


def _at(meta, path):
    node = meta
    for key in path:
        node = node[key]
    return node


def _set(meta, path, value):
    _at(meta, path[:-1])[path[-1]] = value


def _steps(meta) -> dict:
    return {n: i for i, n in enumerate(meta["plan"]["order"])}


# header (load._header): judged by MF-WELL-FORMED

@_craft
def _header_cut(data, meta, blob, k):        # load: "file is N bytes, shorter than the header"
    return data[:k % HEADER.size], None


@_craft
def _header_length(data, meta, blob, k):     # load: "header length"
    if len(data) < HEADER.size:
        return None
    return data[:12] + (HEADER.size + 8 * (1 + k % 4)).to_bytes(4, "little") + data[16:], None


# the metadata's JSON (load._json, load._top)

@_craft
def _not_json(data, meta, blob, k):          # load: "not UTF-8 JSON"
    raw = json.dumps(meta).encode()
    return _sign([b"\xff" + raw, raw[:-1], b""][k % 3], blob), ()


@_craft
def _not_object(data, meta, blob, k):        # load: "top level is not an object"
    return _sign(json.dumps([[meta], "model", None][k % 3]).encode(), blob), ()


@_craft
def _top_keys(data, meta, blob, k):          # load._top: a top-level key missing or unknown
    keys = sorted(meta)
    if k % (len(keys) + 1) == len(keys):
        meta["crafted"] = 0
    else:
        del meta[keys[k % (len(keys) + 1)]]
    return pack(meta, blob), ()


# the schema of tasks, I/O, the zero-copy table and the weights (schema.py)

@_craft
def _top_type(data, meta, blob, k):          # schema.field: "tasks" / "weights" of another JSON type
    key = ("tasks", "weights")[k % 2]
    meta[key] = [] if key == "tasks" else {}
    return pack(meta, blob), (key,)


@_craft
def _schema_not_object(data, meta, blob, k):  # schema.obj: "expected an object"
    path = _pick(_objects(meta), k)
    if path is None:
        return None
    _set(meta, path, sorted(_at(meta, path)))
    return pack(meta, blob), path


@_craft
def _schema_fields(data, meta, blob, k):     # schema.obj: "fields missing / unexpected"
    path = _pick(_objects(meta), k)
    if path is None:
        return None
    node = _at(meta, path)
    if k % 2:
        node["crafted"] = 0
    else:
        del node[_pick(sorted(node), k // 2)]
    return pack(meta, blob), path


def _retyped(value):
    """``value`` as another JSON type (an int as a string, a string as an int, a bool as an int, a list as
    an object)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return len(value)
    return {}


@_craft
def _schema_type(data, meta, blob, k):       # schema.obj: a field of another JSON type
    fields = [p + (key,) for p in _objects(meta) for key in sorted(_at(meta, p))
              if not is_free(p + (key,)) and _at(meta, p)[key] is not None]
    path = _pick(fields, k)
    if path is None:
        return None
    _set(meta, path, _retyped(_at(meta, path)))
    return pack(meta, blob), path


@_craft
def _schema_ints(data, meta, blob, k):       # schema.ints: a shape holding a non-integer
    shapes = [p + ("shape",) for p in _objects(meta) if "shape" in _at(meta, p)]
    path = _pick(shapes, k)
    if path is None:
        return None
    shape = _at(meta, path)
    _set(meta, path, [x + 0.5 for x in shape] if shape else ["1"])
    return pack(meta, blob), path


@_craft
def _schema_bools(data, meta, blob, k):      # schema.bools: a zero-copy flag list holding a non-boolean
    task = _pick(_tasks(meta), k)
    if task is None:
        return None
    role = ("zero_copy_in", "zero_copy_out")[k % 2]
    task[role] = task[role] + [0]
    return pack(meta, blob), ("tasks", "tasks", task["index"], role)


@_craft
def _attr_nonfinite(data, meta, blob, k):    # schema.attr_value: a non-finite float, legal (graph_json writes it)
    task = _pick([t for t in _tasks(meta) if t["kind"] != "memset"], k)   # a memset's attributes are fixed
    if task is None:
        return None
    task["attrs"] = task["attrs"] + [["crafted", {"float": ("inf", "-inf", "nan")[k % 3]}]]
    return pack(meta, blob), None     # a legal change of a free field: the file loads, no claim to judge


@_craft
def _attr_value(data, meta, blob, k):        # schema.attr_value: "unsupported attribute value"
    task = _pick(_tasks(meta), k)
    if task is None:
        return None
    task["attrs"] = task["attrs"] + [["crafted", [None, {"float": "1.5"}, {"tuple": 1}][k % 3]]]
    return pack(meta, blob), ("tasks", "tasks", task["index"], "attrs")


@_craft
def _attr_item(data, meta, blob, k):         # schema._attrs: "expected [name, value]"
    task = _pick(_tasks(meta), k)
    if task is None:
        return None
    task["attrs"] = task["attrs"] + [[["crafted"], [0, 0], "crafted"][k % 3]]
    return pack(meta, blob), ("tasks", "tasks", task["index"], "attrs")


# the options and the plan (artefact_json.py)

@_craft
def _artefact_not_object(data, meta, blob, k):   # artefact_json._object: "expected an object"
    path = _pick(_artefacts(meta), k)
    _set(meta, path, sorted(_at(meta, path)))
    return pack(meta, blob), path


@_craft
def _artefact_missing(data, meta, blob, k):  # artefact_json._object: "missing key(s)"
    keys = [p + (key,) for p in _artefacts(meta) for key in sorted(_at(meta, p))
            if p + (key,) != ("options", "feature_base_refreshable")]   # a file older than it leaves it out
    path = _pick(keys, k)
    del _at(meta, path[:-1])[path[-1]]
    return pack(meta, blob), path[:-1]


@_craft
def _artefact_unknown(data, meta, blob, k):  # artefact_json._object: "unknown key(s)"
    path = _pick(_artefacts(meta), k)
    _at(meta, path)["crafted"] = 0
    return pack(meta, blob), path


@_craft
def _artefact_strings(data, meta, blob, k):  # artefact_json._read: a frozenset's list holding a non-string
    path = (("options", "disabled_passes"), ("plan", "options", "no_zero_copy_ops"))[k % 2]
    _set(meta, path, _at(meta, path) + [0])
    return pack(meta, blob), path


@_craft
def _artefact_list(data, meta, blob, k):     # artefact_json._read: a tuple field that is not a list
    paths = [("plan", "order"), ("plan", "tensors"), ("plan", "blocks")] + \
        [("plan", "blocks", i, "tensors") for i in range(len(meta["plan"]["blocks"]))]
    path = _pick(paths, k)
    _set(meta, path, "crafted")
    return pack(meta, blob), path


@_craft
def _artefact_mapping(data, meta, blob, k):  # artefact_json._read: a mapping that is not an object
    path = (("plan", "regions"), ("plan", "branches"))[k % 2]
    _set(meta, path, sorted(_at(meta, path).items()))
    return pack(meta, blob), path


# the regions (consistency.check_regions)

@_craft
def _region_unknown(data, meta, blob, k):    # "unknown region"
    meta["plan"]["regions"]["scratch"] = 512 * (k % 2)
    return pack(meta, blob), ("plan", "regions", "scratch")


@_craft
def _region_size(data, meta, blob, k):       # "is not an integer in [0, MAX_SIZE]"
    name = _pick(sorted(meta["plan"]["regions"]), k)
    meta["plan"]["regions"][name] = (-512, MAX_SIZE + 1)[k % 2]
    return pack(meta, blob), ("plan", "regions", name)


@_craft
def _region_missing(data, meta, blob, k):    # "missing region(s)"
    name = _pick(sorted(meta["plan"]["regions"]), k)
    del meta["plan"]["regions"][name]
    return pack(meta, blob), ("plan", "regions", name)


# the plan against itself (consistency._tensors)

@_craft
def _order_duplicate(data, meta, blob, k):   # "node names must be unique"
    order = meta["plan"]["order"]
    if not order:
        return None
    order.append(_pick(order, k))
    return pack(meta, blob), ("plan", "order")


@_craft
def _tensor_duplicate(data, meta, blob, k):  # "duplicate tensor"
    plan = meta["plan"]
    # outside the feature map (whose tensors' sizes the plan's figures sum), and listed twice by its block too,
    # so that the name is the one thing that tells it from a tensor of its own
    t = _pick([t for t in plan["tensors"] if t["region"] != "feature_map"] or plan["tensors"], k)
    if t is None:
        return None
    plan["tensors"].append(copy.deepcopy(t))
    for b in plan["blocks"]:
        b["tensors"] += [t["name"]] if b["id"] == t["block"] else []
    return pack(meta, blob), ("plan", "tensors")


@_craft
def _lifetime_range(data, meta, blob, k):    # "lifetime outside the N steps"
    tensors = meta["plan"]["tensors"]
    if not tensors:
        return None
    i = k % len(tensors)
    tensors[i]["last"] = len(meta["plan"]["order"]) + k % 3
    return pack(meta, blob), ("plan", "tensors", i, "last")


@_craft
def _alias_self(data, meta, blob, k):        # "a tensor cannot alias itself"
    tensors = meta["plan"]["tensors"]
    if not tensors:
        return None
    i = k % len(tensors)
    tensors[i]["alias_of"] = tensors[i]["name"]
    return pack(meta, blob), ("plan", "tensors", i, "alias_of")


@_craft
def _alias_outside(data, meta, blob, k):     # "lies outside its root": in another region, or before it
    tensors = meta["plan"]["tensors"]
    pairs = [(i, u["name"]) for i, t in enumerate(tensors) if t["alias_of"] is None for u in tensors
             if u["region"] != t["region"] or u["offset"] > t["offset"]]
    pair = _pick(pairs, k)
    if pair is None:
        return None
    tensors[pair[0]]["alias_of"] = pair[1]
    return pack(meta, blob), ("plan", "tensors", pair[0], "alias_of")


@_craft
def _block_duplicate(data, meta, blob, k):   # "block ids must be unique"
    blocks = meta["plan"]["blocks"]
    if not blocks:
        return None
    blocks.append(copy.deepcopy(_pick(blocks, k)))
    return pack(meta, blob), ("plan", "blocks")


# the plan's model attributes against the I/O table (consistency._attributes)

@_craft
def _io_attribute_count(data, meta, blob, k):    # "N entries for M model inputs/outputs"
    role = _pick([r for r in ("inputs", "outputs") if meta["plan"]["attributes"][r]], k)
    if role is None:
        return None
    meta["plan"]["attributes"][role].pop(k % len(meta["plan"]["attributes"][role]))
    return pack(meta, blob), ("plan", "attributes", role)


@_craft
def _relative_offsets(data, meta, blob, k):  # "piece at +r is no tensor the plan places there"
    plan = meta["plan"]
    sized = {t["name"]: t for t in plan["tensors"]}
    cands = []
    for role in ("inputs", "outputs"):
        for i, a in enumerate(plan["attributes"][role]):
            p = sized.get(a["tensor"])
            starts = {t["offset"] for t in plan["tensors"] if p and t["region"] == p["region"]}
            r = next((r for r in range(1, p["size"]) if p["offset"] + r not in starts), None) if p else None
            cands += [(role, i, r)] if r is not None else []
    cand = _pick(cands, k)
    if cand is None:
        return None
    role, i, r = cand
    plan["attributes"][role][i]["relative_offsets"] = [0, r]
    return pack(meta, blob), ("plan", "attributes", role, i, "relative_offsets")


# the tasks against the plan (load._check_task, load._check_branches, consistency.check_consistency)

@_craft
def _no_kernel(data, meta, blob, k):         # load: "no kernel in the device library"
    kernels = [t for t in _tasks(meta) if t["kind"] == "kernel"]
    task = _pick(kernels, k)
    if task is None:
        return None
    task["op_type"] = _pick(sorted(o for o in ops.OPS if o not in KERNEL_OPS and ops.info(o).kind != "hccl"), k)
    return pack(meta, blob), ("tasks", "tasks", task["index"], "op_type")


@_craft
def _negative_dim(data, meta, blob, k):      # load._check_slot: "shape must be non-negative integers"
    slots = [(t["index"], j) for t in _tasks(meta) for j, s in enumerate(t["slots"]) if s["shape"]]
    at = _pick(slots, k)
    if at is None:
        return None
    slot = _tasks(meta)[at[0]]["slots"][at[1]]
    slot["shape"][0] = -slot["shape"][0] or -1
    slot["nbytes"] = dtypes.nbytes(slot["shape"], slot["dtype"])   # as negative: the shape alone is at fault
    return pack(meta, blob), ("tasks", "tasks", at[0], "slots", at[1], "shape", 0)


@_craft
def _task_order(data, meta, blob, k):        # "comes before task k-1's node in the plan's order"
    tasks, steps = _tasks(meta), _steps(meta)
    branch = meta["plan"]["branches"]
    first = min(tasks, key=lambda t: steps.get(t["node"], 0), default=None)
    cands = [j for j in range(1, len(tasks)) if tasks[j - 1]["kind"] != "memset" and tasks[j]["kind"] != "memset"
             and steps.get(tasks[j - 1]["node"], 0) > steps.get(first["node"], 0)
             and branch.get(first["node"], "") == tasks[j]["batch"]]
    j = _pick(cands, k)
    if j is None:
        return None
    tasks[j]["node"] = first["node"]
    return pack(meta, blob), ("tasks", "tasks", j, "node")


@_craft
def _task_after(data, meta, blob, k):        # "must name earlier tasks, ascending, each once"
    task = _pick(_tasks(meta), k)
    if task is None:
        return None
    i = task["index"]
    task["after"] = [[i], [i + 1], [0, 0] if i else [-1]][k % 3]
    return pack(meta, blob), ("tasks", "tasks", i, "after")


@_craft
def _lifetime_miss(data, meta, blob, k):     # "lifetime misses step s, where task t uses it"
    plan, steps = meta["plan"], _steps(meta)
    index = {t["name"]: i for i, t in enumerate(plan["tensors"])}
    cands = []
    for task in _tasks(meta):
        step = steps.get(task["node"])
        for s in task["slots"]:
            i = index.get(s["tensor"])
            t = plan["tensors"][i] if i is not None else None
            if t and step is not None and t["region"] in ("feature_map", "zero_copy") and t["first"] < step:
                cands.append((i, step))
    cand = _pick(sorted(set(cands)), k)
    if cand is None:
        return None
    i, step = cand
    plan["tensors"][i]["last"] = step - 1     # shorter, so the plan's lower bound still holds
    return pack(meta, blob), ("plan", "tensors", i, "last")


@_craft
def _branch_node(data, meta, blob, k):       # load._check_branches: "not a labelled node of the plan's order"
    order = meta["plan"]["order"]
    if k % 2 and order:
        node, label = _pick(order, k // 2), ""
    else:
        node, label = "crafted", "crafted"
    meta["plan"]["branches"][node] = label
    return pack(meta, blob), ("plan", "branches", node)


@_craft
def _tensor_batch(data, meta, blob, k):      # load._check_branches: a tensor's batch is no branch of the model
    tensors = meta["plan"]["tensors"]
    if not tensors:
        return None
    i = k % len(tensors)
    tensors[i]["batch"] = "crafted"
    return pack(meta, blob), ("plan", "tensors", i, "batch")


@_craft
def _merge_labels(data, meta, blob, k):      # load._check_branches: a Merge's labels are no branches of the model
    merges = [t for t in _tasks(meta) if t["op_type"] == "Merge"]
    task = _pick(merges, k)
    if task is None:
        return None
    value = [{"tuple": ["crafted"]}, {"tuple": []}, "crafted"][k % 3]
    task["attrs"] = [[a, value if a == "labels" else v] for a, v in task["attrs"]]
    return pack(meta, blob), ("tasks", "tasks", task["index"], "attrs")


# the weight table against the blob and the plan (load._weights, consistency.check_consistency)

def _weight(meta, k):
    return _pick(list(enumerate(meta["weights"])), k)


@_craft
def _weight_gap(data, meta, blob, k):        # "but the weights before it end at blob byte"
    w = _weight(meta, k)
    if w is None:
        return None
    w[1]["blob_offset"] += 1 + k % 3
    return pack(meta, blob), ("weights", w[0], "blob_offset")


@_craft
def _weight_past_blob(data, meta, blob, k):  # "past the blob"
    w = _weight(meta, k)
    if w is None:
        return None
    w[1]["blob_nbytes"] = len(blob) + 1 - w[1]["blob_offset"]
    return pack(meta, blob), ("weights", w[0], "blob_nbytes")


@_craft
def _weight_dtype(data, meta, blob, k):      # an unknown dtype, or a shape too large for any device
    w = _weight(meta, k)
    if w is None:
        return None
    if k % 2:
        w[1]["shape"] = [1 << 40] * 3
        return pack(meta, blob), ("weights", w[0], "shape")
    w[1]["dtype"] = "crafted"
    return pack(meta, blob), ("weights", w[0], "dtype")


@_craft
def _weight_nbytes(data, meta, blob, k):     # "bytes of data for shape x dtype"
    w = _weight(meta, k)
    if w is None or w[1]["blob_nbytes"] == 0:
        return None
    w[1]["blob_nbytes"] -= 1
    return pack(meta, blob), ("weights", w[0], "blob_nbytes")


@_craft
def _weight_region(data, meta, blob, k):     # "ends past the weight region"
    w = _weight(meta, k)
    if w is None:
        return None
    w[1]["offset"] += meta["plan"]["regions"].get("weight", 0)
    return pack(meta, blob), ("weights", w[0], "offset")


@_craft
def _weight_offset(data, meta, blob, k):     # consistency: "offset disagrees with the plan's placement"
    w = _weight(meta, k)
    if w is None:
        return None
    w[1]["offset"] += -1 if w[1]["offset"] else 1   # inside the weight region (its blocks are aligned)
    return pack(meta, blob), ("weights", w[0], "offset")


@_craft
def _blob_tail(data, meta, blob, k):         # load._weights: "the weight table covers N bytes of the blob"
    return pack(meta, blob + b"\0" * (1 + k % 8)), None    # the metadata unchanged: no field to judge


CRAFTS = tuple(_CRAFTS)
_HEADER_CRAFTS = ("header_cut", "header_length")


def apply_craft(data: bytes, at: int) -> tuple[str, bytes, tuple | None]:
    """The craft ``at`` picks (the next that applies to ``data`` if it does not), the bytes and the path."""
    n = len(CRAFTS)
    try:
        _, meta, blob = split(data)
    except (struct.error, ValueError):   # no metadata to edit (not a file the compiler wrote): the header only
        meta = blob = None
    for step in range(n):
        name = CRAFTS[(at + step) % n]
        if meta is None and name not in _HEADER_CRAFTS:
            continue
        out = _CRAFTS[name](data, copy.deepcopy(meta), blob, at // n)
        if out is not None:
            return (name, *out)
    raise AssertionError("header_cut applies to every file")


def crafted_mutations(data: bytes, seed: int = 0) -> tuple[dict, ...]:
    """One ``craft`` mutation per craft that applies to ``data`` (a built file), each editing the part of
    the file ``seed`` and its position pick: what verify runs for its crafted model files."""
    n, out = len(CRAFTS), []
    for i in range(n):
        m = {"op": CRAFT, "at": i + n * ((seed * 7 + i) % 16)}
        if apply_craft(data, m["at"])[0] == CRAFTS[i]:
            out.append(m)
    return tuple(out)
