"""A crafted or damaged model file loads to the identical model or raises ModelFormatError: nothing else.

1,000 seeded cases over four kinds of damage: byte flips and truncation (caught
by the header and checksum), and, re-signed with a valid checksum so the
semantic checks must catch them, inflated sizes and argument offsets pointed
outside their region. Then every JSON leaf that another part of the file
determines (all but ``FREE``), each replaced by values of every JSON type: an
exhaustive sweep, so no change of the sample model can move it off a gap.
"""
import json
import random

import numpy as np
import pytest

from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.model_file.encode import HEADER, encode, metadata, pack
from zcspec.impl.compiler.model_file.errors import ModelFormatError
from zcspec.impl.compiler.model_file.load import load_model
from zcspec.impl.compiler.options import CompileOptions
from zcspec.spec.invariants.model_file import FREE_FIELDS

CASES = 1000


def sample_model():
    b = GraphBuilder("sample")
    x = b.input("x", (4, 3))
    h = b.input("h", (3,))
    a, c = b.op("Split", [x], outputs=[((1, 3), "float32"), ((3, 3), "float32")], axis=0, split=(1, 3))
    s = b.op("Add", [c, b.weight("w", np.arange(9, dtype=np.float32).reshape(3, 3))])
    r = b.op("ReduceSum", [s], shape=(3, 1), axes=(1,), keepdims=1)
    ar = b.op("HcomAllReduce", [h])
    b.output(b.op("Relu", [a]), r, ar, b.weight("c", np.float32([1, 2])))
    return build_model(b.build(), CompileOptions(soc="ascend310p"))


MODEL = sample_model()
DATA = encode(MODEL)
META, BLOB = metadata(MODEL)


def leaves(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from leaves(v, path + (i,))
    yield path


def replaced(meta, path, value):
    meta = json.loads(json.dumps(meta))
    if not path:
        return value
    node = meta
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return meta


def flip(rng):
    data = bytearray(DATA)
    i = rng.randrange(len(data))
    data[i] ^= 1 << rng.randrange(8)
    return bytes(data)


def truncate(rng):
    return DATA[: rng.randrange(len(DATA))]


def inflate(rng):
    paths = [p for p in leaves(META) if p and p[-1] in ("nbytes", "size", "blob_nbytes", "feature_map", "weight",
                                                       "zero_copy", "offset", "relative_offset")]
    path = rng.choice(paths)
    value = rng.choice([2**62, 2**63, 2**64 + 7, -1, 10**30, rng.randrange(1, 10**6)])
    return pack(replaced(META, path, value), BLOB)


def outside(rng):
    t = rng.randrange(len(META["tasks"]["tasks"]))
    slots = META["tasks"]["tasks"][t]["slots"]
    if not slots:
        return DATA
    j = rng.randrange(len(slots))
    region = META["plan"]["regions"][slots[j]["region"]]
    offset = rng.choice([region, region - 4, region + 512, -8, 2**40])
    return pack(replaced(META, ("tasks", "tasks", t, "slots", j, "offset"), offset), BLOB)


# Leaves the loader cannot tell from another value of the right type: nothing else in the file repeats them,
# only the checksum (which these cases re-sign) guards them (docs/model-format.md, "What the loader checks").
# Their one home is the spec's MF-DETERMINED, which judges every other field changed alone.
FREE = FREE_FIELDS


def _matches(pattern, path) -> bool:
    return len(path) >= len(pattern) and all(p in ("*", k) for p, k in zip(pattern, path))


def redundant(path) -> bool:
    """Whether another part of the file determines the value at ``path``, so that the loader can tell a
    changed value from the original: every leaf but those in FREE. (An object holding a free leaf stays:
    replaced by a value of another type or an empty one it is rejected.)"""
    return not any(_matches(pattern, path) for pattern in FREE)


VALUES = (None, True, 0, -3, 1.5, "x", [], {}, {"tuple": [1]}, 2**70)
REDUNDANT = [p for p in leaves(META) if redundant(p)]
SECTIONS = sorted({p[:2] for p in REDUNDANT})


KINDS = (flip, truncate, inflate, outside)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_damaged_files_load_identically_or_raise_the_format_error(kind):
    outcomes = {"identical": 0, "rejected": 0}
    for seed in range(CASES // len(KINDS)):
        data = kind(random.Random(f"{kind.__name__}-{seed}"))
        try:
            loaded = load_model(data)
        except ModelFormatError:
            outcomes["rejected"] += 1
            continue
        assert loaded == MODEL, f"seed {seed}: a damaged file loaded to a different model"
        outcomes["identical"] += 1
    assert outcomes["rejected"] > 0


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: ".".join(map(str, s)) or "root")
def test_every_redundant_leaf_replaced_loads_identically_or_raises(section):
    """Every leaf another part of the file determines, each replaced by values of every JSON type:
    no sample-dependent random pick can miss one."""
    different, rejected = [], 0
    for path in (p for p in REDUNDANT if p[:2] == section):
        for value in VALUES:
            try:
                loaded = load_model(pack(replaced(META, path, value), BLOB))
            except ModelFormatError:
                rejected += 1
                continue
            if loaded != MODEL:
                different.append((path, value))
    assert not different, f"damaged leaves loaded to a different model: {different[:10]}"
    assert rejected > 0


def test_free_patterns_each_match_a_leaf():
    """A FREE entry that matches nothing (a renamed field) would silently exclude nothing or hide a typo."""
    for pattern in FREE:
        assert any(_matches(pattern, p) for p in leaves(META)), pattern


def test_errors_name_what_is_wrong():
    bad = replaced(META, ("tasks", "tasks", 0, "slots", 0, "offset"), META["plan"]["regions"]["weight"] + 512)
    with pytest.raises(ModelFormatError, match=r"tasks\[0\].*slots\[0\].*outside region 'weight'"):
        load_model(pack(bad, BLOB))
    with pytest.raises(ModelFormatError, match="checksum"):
        load_model(DATA[:HEADER.size] + b"!" + DATA[HEADER.size + 1:])
    with pytest.raises(ModelFormatError, match="version 9"):
        load_model(pack(META, BLOB, version=9))
    with pytest.raises(ModelFormatError, match="m.zcm: model file: header"):
        load_model(b"ZCS", file="m.zcm")


# Each cross-check fires on the damage it is for and names the field (the sweep above shows no determined
# leaf slips through; these pin which check catches which disagreement and what its message says).
A, T = ("plan", "attributes"), ("tasks", "tasks")
NAMED = [
    (A + ("inputs", 1, "region"), "feature_map", r"plan\.attributes\.inputs\[1\]\.region.*places 'h' in 'zero_copy'"),
    (A + ("outputs", 0, "relative_offsets", 0), 4, r"plan\.attributes\.outputs\[0\]\.relative_offsets.*start at 0"),
    (A + ("outputs", 0, "relative_offsets"), [0, 8], r"outputs\[0\]\.relative_offsets.*piece at \+8"),
    (A + ("inputs", 1, "index"), 0, r"plan\.attributes\.inputs\[1\]\.index.*input 1"),
    (A + ("inputs", 1, "node"), "x", r"plan\.attributes\.inputs\[1\]\.node.*earlier input"),
    (A + ("outputs", 0, "node"), "x", r"plan\.attributes\.outputs.*one NetOutput"),
    (("weights", 1, "blob_offset"), 0, r"weights\[1\]\.blob_offset.*end at blob byte 36"),
    (T + (3, "stream"), -1, r"tasks\[3\].*\.stream"),
    (T + (1, "kind"), "memcpy", r"tasks\[1\].*\.kind.*'memcpy', but a Add node's tasks are \('kernel',\)"),
    (T + (3, "slots"), [], r"tasks\[3\].*\.slots.*0 in slots; a ReduceSum has 1"),
    (T + (2, "slots"), [], r"tasks\[2\]\.slots.*memset"),
    (T + (5, "node"), "add_2", r"tasks\[5\]\.node.*comes before task 4's node"),
    (T + (5, "zero_copy_in", 0), False, r"tasks\[5\]\.zero_copy_in.*\[True\]"),
    (("tasks", "zero_copy"), [], r"zero_copy.*missing \[ZeroCopyRef"),
    (("plan", "tensors", 0, "zero_copy"), True, r"plan\.tensors\[0\] \('w'\)\.zero_copy.*region 'weight'"),
    (("plan", "tensors", 3, "alias_of"), "x", r"plan\.tensors\[3\] \('x'\)\.alias_of.*itself"),
    (("plan", "blocks", 1, "offset"), 0, r"plan\.tensors\[8\].*outside its block 1"),
    (("plan", "blocks", 2, "size"), 1024, r"plan\.blocks\[2\]\.size.*holds 64 bytes from its offset"),
    (("plan", "tensors", 7, "size"), 97, r"plan\.tensors\[7\] \('add_2:0'\)\.size.*access 36 bytes.*GE sizes 96"),
    (("plan", "blocks", 0, "zero_copy"), True, r"plan\.blocks\[0\]\.zero_copy"),
    (("plan", "blocks", 1, "parent"), 0, r"plan\.blocks\[1\]\.parent.*outside its parent 0"),
]


@pytest.mark.parametrize("path, value, message", NAMED, ids=lambda x: ".".join(map(str, x)) if isinstance(x, tuple)
                         else None)
def test_each_disagreement_is_named(path, value, message):
    with pytest.raises(ModelFormatError, match=message):
        load_model(pack(replaced(META, path, value), BLOB))


def test_blob_bytes_no_weight_claims_are_rejected():
    with pytest.raises(ModelFormatError, match=r"weights.*covers 44 bytes of the 48-byte blob"):
        load_model(pack(META, BLOB + b"\0" * 4))
