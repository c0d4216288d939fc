"""Writing a CompiledModel as ``.zcm`` bytes (format in docs/model-format.md).

    offset  size  field
    0       8     magic b"ZCSPECM\\0"
    8       4     format version (little-endian u32), currently 5
    12      4     header length (u32), 64
    16      8     metadata length M (u64)
    24      8     weight blob length W (u64)
    32      32    SHA-256 of the M + W bytes that follow
    64      M     metadata: UTF-8 JSON (plan, tasks, I/O, zero-copy table, weight table)
    64+M    W     weight blob: each weight's bytes, at the blob offset its entry names
"""
from __future__ import annotations

import hashlib
import json
import struct

from zcspec.impl.compiler.artefact_json import to_json
from zcspec.impl.compiler.model_file.model import CompiledModel

MAGIC = b"ZCSPECM\0"
# 2: typed options and plan (tensor batch labels), no separate soc/regions fields.
# 3: every task carries ``batch``, its dynamic-batch branch, so a runtime launches only the chosen branch;
#    a version-2 reader would run every branch, and their memory overlaps.
# 4: every task carries ``after``, the tasks its node's control edges order it after; a version-3
#    reader would put no event on a control edge between streams.
# 5: every I/O entry carries ``name``, the caller's name for it, which differs from its ``tensor`` for a graph
#    input returned through a copy; a version-4 reader would name that output after the copy.
VERSION = 5
HEADER = struct.Struct("<8sIIQQ32s")


def metadata(model: CompiledModel) -> tuple[dict, bytes]:
    blob = bytearray()
    table = []
    for w in model.weights:
        table.append({"name": w.name, "offset": w.offset, "shape": list(w.shape), "dtype": w.dtype,
                      "splat": w.splat, "blob_offset": len(blob), "blob_nbytes": len(w.data)})
        blob += w.data
    meta = {"name": model.name, "options": to_json(model.options), "plan": model.plan.to_json(),
            "tasks": model.tasks.to_dict(), "weights": table}
    return meta, bytes(blob)


def pack(meta: dict, blob: bytes, *, version: int = VERSION) -> bytes:
    body = json.dumps(meta, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")
    digest = hashlib.sha256(body + blob).digest()
    return HEADER.pack(MAGIC, version, HEADER.size, len(body), len(blob), digest) + body + blob


def encode(model: CompiledModel) -> bytes:
    meta, blob = metadata(model)
    return pack(meta, blob)
