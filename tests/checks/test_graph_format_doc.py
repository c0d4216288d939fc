"""docs/graph-format.md's example document is a graph JSON file the reader imports, validation accepts and
the writer writes back to the same graph: the format's reference stays true to the reader."""
from __future__ import annotations

import json
import re
from pathlib import Path

from zcspec.impl.compiler import graph_json
from zcspec.impl.compiler.validate import validate

DOC = Path(__file__).resolve().parents[2] / "docs" / "graph-format.md"


def _example() -> str:
    [block] = re.findall(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    return block


def test_the_documented_example_imports_validates_and_round_trips():
    graph = validate(graph_json.from_json(_example()))
    assert [n.op_type for n in graph.nodes] == ["Data", "Mul", "Relu", "NetOutput"]
    assert graph_json.from_json(graph_json.to_json(graph)) == graph
    assert json.loads(graph_json.to_json(graph)) == json.loads(_example())


def test_every_top_level_key_the_writer_writes_is_documented():
    text = DOC.read_text(encoding="utf-8")
    doc = json.loads(_example())
    for key in list(doc) + list(doc["nodes"][0]) + list(doc["tensors"][0]) + list(doc["weights"][0]):
        assert f"`{key}`" in text, key
