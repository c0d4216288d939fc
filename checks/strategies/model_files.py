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
- ``bad_region``: the same slot's region renamed to one the model does not have (checksum valid).

Only ``bad_offset`` and ``bad_region`` leave the header well-formed; the loader must refuse them
too (MF-SLOT-IN-REGION judges any it lets through). ``mutations()`` draws them, ``fixed_mutations()``
gives a deterministic set for ``zcspec verify``.
"""
from __future__ import annotations

import json

from hypothesis import strategies as st

from zcspec.checks.errors import ScenarioError
from zcspec.impl.compiler.model_file.encode import HEADER, pack

OPS = ("truncate", "flip", "bad_magic", "bad_version", "bad_digest", "extend", "bad_offset", "bad_region")
_DIGEST_AT = HEADER.size - 32   # the SHA-256 is the header's last field


def check_mutation(mutation) -> dict:
    """``mutation`` validated: ScenarioError naming the key for anything but ``{"op": OP, "at": N >= 0}``."""
    if not isinstance(mutation, dict) or set(mutation) != {"op", "at"}:
        raise ScenarioError(f"runtime.mutation must be an object with keys 'op' and 'at', got {mutation!r}",
                            key="runtime.mutation")
    if mutation["op"] not in OPS:
        raise ScenarioError(f"runtime.mutation.op {mutation['op']!r} is not one of {OPS}", key="runtime.mutation.op")
    at = mutation["at"]
    if not isinstance(at, int) or isinstance(at, bool) or at < 0:
        raise ScenarioError(f"runtime.mutation.at must be a non-negative int, got {at!r}", key="runtime.mutation.at")
    return mutation


def mutate(data: bytes, mutation: dict) -> bytes:
    """``data`` with ``mutation`` applied (see the module doc)."""
    op, at = check_mutation(mutation)["op"], mutation["at"]
    if op == "truncate":
        return data[:at % max(len(data), 1)]
    if op == "flip":
        i = at % len(data)
        return data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]
    if op == "bad_magic":
        return b"ONNXMDL\0" + data[8:]
    if op == "bad_version":
        return data[:8] + (3 + 1 + at % 7).to_bytes(4, "little") + data[12:]
    if op == "bad_digest":
        i = _DIGEST_AT + at % 32
        return data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:]
    if op == "extend":
        return data + b"\0" * (at % 64 + 1)
    return _edit_slot(data, at, op)


def _edit_slot(data: bytes, at: int, op: str) -> bytes:
    """Slot ``at`` (over all tasks' slots) moved out of its region, re-packed with a valid checksum."""
    _, version, header_len, meta_len, _, _ = HEADER.unpack_from(data)
    meta = json.loads(data[header_len:header_len + meta_len])
    blob = data[header_len + meta_len:]
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
    """Two of each op at spread positions (deterministic per ``seed``): what verify runs."""
    return tuple({"op": op, "at": (seed * 7919 + k * 104729 + i * 31) % (1 << 16)}
                 for i, op in enumerate(OPS) for k in (1, 2))
