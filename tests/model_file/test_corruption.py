"""A crafted or damaged model file loads to the identical model or raises ModelFormatError: nothing else.

1,000 seeded cases over five kinds of damage: byte flips and truncation (caught
by the header and checksum), and, re-signed with a valid checksum so the
semantic checks must catch them, inflated sizes, argument offsets pointed
outside their region, and arbitrary JSON leaves replaced by values of any type (every leaf a
loader can check against another part of the file: see ``redundant``).
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


def redundant(path) -> bool:
    """Whether the loader can tell a changed value at ``path`` from the original. A kernel's attributes
    and whether its task sits in a loop (``tasks.tasks[i].attrs``, ``.in_loop``) are the node's own
    semantics with no second copy in the file: only the checksum, which these cases re-sign, guards
    them (docs/model-format.md)."""
    return not (len(path) >= 4 and path[:2] == ("tasks", "tasks") and path[3] in ("attrs", "in_loop"))


def any_leaf(rng):
    path = rng.choice([p for p in leaves(META) if redundant(p)])
    value = rng.choice([None, True, 0, -3, 1.5, "x", [], {}, [1, "a"], {"tuple": [1]}, {"float": "nan"}, 2**70])
    return pack(replaced(META, path, value), BLOB)


KINDS = (flip, truncate, inflate, outside, any_leaf)


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
