"""Model-file mutations: the malformed and the subtly wrong files a loader must refuse.

A mutation is data, ``{"op": OP, "at": N}`` (``N`` any non-negative int, taken
modulo what the op ranges over), so a scenario carries it in its ``runtime``
dict (``{"mutation": {...}}``) and replays exactly. ``mutate(data, mutation)``
applies one to ``.zcm`` bytes:

- ``truncate``: the file cut after byte N (the header, or the body, is short);
- ``flip``: byte N inverted (a header field or the body, so the checksum or a field breaks);
- ``bad_magic`` / ``bad_version``: the magic, or the format version, changed;
- ``bad_digest``: one byte of the stored checksum changed;
- ``extend``: N + 1 bytes appended (the declared lengths no longer match);
- ``bad_offset``: the metadata edited, argument slot N (counted over all tasks) moved past the end
  of its region, and the file re-packed with a valid checksum: well-formed bytes, impossible content;
- ``bad_region``: the same slot's region renamed to one the model does not have (checksum valid);
- ``field``: one metadata field that another part of the file determines (``determined_fields``: every
  scalar leaf outside the spec's FREE_FIELDS), number N modulo their count, changed to a near value of
  its own type (N // count picks which: an int +1, -1, +512 or 0; a bool negated; a string suffixed),
  and the file re-packed with a valid checksum: the loader must refuse it or load the identical model
  (MF-DETERMINED).

Only ``bad_offset``, ``bad_region`` and ``field`` leave the header well-formed; the loader must refuse them
too (MF-SLOT-IN-REGION judges any it lets through). ``mutations()`` draws them, ``fixed_mutations()``
gives a deterministic set for ``zcspec verify``.

A further op, ``craft`` (not drawn by ``mutations()``), applies one of the ``CRAFTS`` of
checks/strategies/model_file_crafts.py: targeted edits that each
put one of the loader's refusals to the test, which neither random bytes (the checksum fails first) nor a
near value of a field's own type (``field``) reach: the header cut short or its length field changed, the
metadata not JSON or not an object, a key missing, unknown or of another JSON type, a duplicate name, an
unknown or missing region, an alias of itself or outside its root, a lifetime or a task order the plan's
order cannot hold, a weight table that disagrees with its blob... ``N`` modulo their count picks the edit
(the next one that applies, if the file has nothing it could edit) and ``N // count`` which part of the file
it edits. Every edit but the header's is re-signed, so only the loader's checks stand between it and a
runtime; the loader must refuse it with a ModelFormatError naming the field (``attr_nonfinite`` alone is
a legal file: a non-finite float attribute, as the compiler writes one). ``edit`` gives the JSON path
it changed (``()`` for the metadata as a whole; None for the header and the blob, which MF-WELL-FORMED and
nothing respectively judge), so MF-DETERMINED judges an accepted file that is not the one built.
``crafted_mutations(data, seed)`` (there) gives one ``craft`` per edit that applies to ``data``: what verify runs;
``craft_name(data, mutation)`` says which edit a ``craft`` mutation makes.
"""
from __future__ import annotations

from hypothesis import strategies as st

from zcspec.checks.errors import ScenarioError
from zcspec.checks.strategies.model_file_crafts import CRAFT, apply_craft, split as _split
from zcspec.impl.compiler.model_file.encode import HEADER, VERSION, pack
from zcspec.spec.invariants.model_file import is_free

OPS = ("truncate", "flip", "bad_magic", "bad_version", "bad_digest", "extend", "bad_offset", "bad_region", "field")
_DIGEST_AT = HEADER.size - 32   # the SHA-256 is the header's last field


def check_mutation(mutation) -> dict:
    """``mutation`` validated: ScenarioError naming the key for anything but ``{"op": OP, "at": N >= 0}``."""
    if not isinstance(mutation, dict) or set(mutation) != {"op", "at"}:
        raise ScenarioError(f"runtime.mutation must be an object with keys 'op' and 'at', got {mutation!r}",
                            key="runtime.mutation")
    if mutation["op"] not in OPS + (CRAFT,):
        raise ScenarioError(f"runtime.mutation.op {mutation['op']!r} is not one of {OPS + (CRAFT,)}",
                            key="runtime.mutation.op")
    at = mutation["at"]
    if not isinstance(at, int) or isinstance(at, bool) or at < 0:
        raise ScenarioError(f"runtime.mutation.at must be a non-negative int, got {at!r}", key="runtime.mutation.at")
    return mutation


def mutate(data: bytes, mutation: dict) -> bytes:
    """``data`` with ``mutation`` applied (see the module doc)."""
    return edit(data, mutation)[0]




def _leaves(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, path + (i,))
    else:
        yield path, node


def determined_fields(data: bytes) -> list[tuple]:
    """The JSON paths of the metadata's scalar fields that another part of the file determines."""
    return [p for p, _ in _leaves(_split(data)[1]) if not is_free(p)]


def _near(value, k: int):
    """A value of ``value``'s own type near it, never equal (``k`` picks which)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return [value + 1, value - 1, value + 512, 0 if value else 1][k % 4]
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str):
        return value + "_"
    return 0  # null


def edit(data: bytes, mutation: dict) -> tuple[bytes, tuple | None]:
    """``data`` with ``mutation`` applied, and for ``field`` (and most crafts) the JSON path of the changed field."""
    op, at = check_mutation(mutation)["op"], mutation["at"]
    if op == CRAFT:
        _, out, path = apply_craft(data, at)
        return out, path
    if op == "field":
        version, meta, blob = _split(data)
        fields = [p for p, _ in _leaves(meta) if not is_free(p)]
        path = fields[at % len(fields)]
        node = meta
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = _near(node[path[-1]], at // len(fields))
        return pack(meta, blob, version=version), path
    return _mutate(data, op, at), None


def _mutate(data: bytes, op: str, at: int) -> bytes:
    if op == "truncate":
        return data[:at % max(len(data), 1)]
    if op == "flip":
        i = at % len(data)
        return data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]
    if op == "bad_magic":
        return b"ONNXMDL\0" + data[8:]
    if op == "bad_version":
        return data[:8] + (VERSION + 1 + at % 7).to_bytes(4, "little") + data[12:]
    if op == "bad_digest":
        i = _DIGEST_AT + at % 32
        return data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:]
    if op == "extend":
        return data + b"\0" * (at % 64 + 1)
    return _edit_slot(data, at, op)


def _edit_slot(data: bytes, at: int, op: str) -> bytes:
    """Slot ``at`` (over all tasks' slots) moved out of its region, re-packed with a valid checksum."""
    version, meta, blob = _split(data)
    slots = [s for t in meta["tasks"]["tasks"] for s in t["slots"]]
    if not slots:
        return _edit_region_size(meta, blob, version)
    slot = slots[at % len(slots)]
    if op == "bad_region":
        slot["region"] = "scratch"
    else:
        regions = meta["plan"]["regions"]
        slot["offset"] = regions.get(slot["region"], 0) + 512 * (1 + at % 4)
    return pack(meta, blob, version=version)


def _edit_region_size(meta: dict, blob: bytes, version: int) -> bytes:
    """A model without slots: shrink its feature map to nothing instead (its tensors then lie outside it)."""
    meta["plan"]["regions"]["feature_map"] = 0
    return pack(meta, blob, version=version)


def mutations() -> st.SearchStrategy[dict]:
    """Mutations of every op, shrinking toward ``truncate`` at byte 0."""
    return st.fixed_dictionaries({"op": st.sampled_from(OPS), "at": st.integers(min_value=0, max_value=1 << 16)})


def fixed_mutations(seed: int = 0) -> tuple[dict, ...]:
    """Two of each op but ``field`` at spread positions (deterministic per ``seed``): what verify runs,
    with ``field_sweep`` for each model."""
    return tuple({"op": op, "at": (seed * 7919 + k * 104729 + i * 31) % (1 << 16)}
                 for i, op in enumerate(OPS) if op != "field" for k in (1, 2))


def field_sweep(data: bytes, seed: int = 0) -> tuple[dict, ...]:
    """One ``field`` mutation per determined field of ``data``, each field's change picked by ``seed``
    and its position (so successive seeds try other near values): no field is left to chance."""
    n = len(determined_fields(data))
    return tuple({"op": "field", "at": i + n * ((seed + i) % 4)} for i in range(n))


# -- Crafted edits: one per refusal of the loader ----------------------------------------------------------
#


def craft_name(data: bytes, mutation: dict) -> str:
    """Which craft ``mutation`` (a ``craft``) applies to ``data``."""
    return apply_craft(data, check_mutation(mutation)["at"])[0]
