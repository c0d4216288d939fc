"""Graph JSON is lossless (property) and rejects malformed documents clearly."""
import json
import math

import pytest
from hypothesis import given

from zcspec.checks.strategies.ir_graphs import ir_graphs
from zcspec.impl.compiler.errors import GraphFormatError
from zcspec.impl.compiler.graph_json import from_json, to_json
from zcspec.impl.compiler.validate import validate


def _same(a, b) -> bool:
    # NaN != NaN, so compare attribute values through their repr (bit patterns of
    # floats survive JSON exactly; repr distinguishes 1 from 1.0 and True from 1).
    return repr(a) == repr(b)


@given(ir_graphs())
def test_round_trip_is_identical(graph):
    validate(graph)
    back = from_json(to_json(graph))
    assert _same(back, graph)
    if not any(isinstance(v, float) and math.isnan(v) for n in graph.nodes for _, v in n.attrs):
        assert back == graph


@given(ir_graphs())
def test_json_text_is_strict(graph):
    # No bare NaN/Infinity tokens: other tools must be able to read the files.
    json.loads(to_json(graph), parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))


def test_types_survive():
    from zcspec.impl.compiler.builder import GraphBuilder

    b = GraphBuilder("t")
    x = b.input("x", (2,))
    y = b.op("Relu", [x], one=1, one_f=1.0, yes=True, ints=(1, 2), floats=(0.5, -0.0), inf=float("inf"), s="a")
    b.output(y)
    g = b.build()
    attrs = dict(from_json(to_json(g)).node["relu_1"].attrs)
    assert type(attrs["one"]) is int and type(attrs["one_f"]) is float and attrs["yes"] is True
    assert attrs["ints"] == (1, 2) and math.copysign(1, attrs["floats"][1]) == -1 and attrs["inf"] == math.inf


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("{", "does not parse"),
        ('{"format": "other"}', "not a zcspec graph"),
        ('{"format": "zcspec-graph", "version": 99}', "version 99"),
        ('{"format": "zcspec-graph", "version": 1, "name": "g"}', "malformed"),
    ],
)
def test_malformed_documents(text, fragment):
    with pytest.raises(GraphFormatError, match=fragment):
        from_json(text)


_GOOD = {"format": "zcspec-graph", "version": 1, "name": "g",
         "nodes": [{"name": "x", "op_type": "Data", "inputs": [], "outputs": ["x"], "attrs": {"index": 0}, "stream": 0},
                   {"name": "NetOutput", "op_type": "NetOutput", "inputs": ["x"], "outputs": [], "attrs": {},
                    "stream": 0}],
         "tensors": [{"name": "x", "shape": [2], "dtype": "float32", "format": "ND"}], "weights": []}


@pytest.mark.parametrize("change, fragment", [
    (lambda d: d["nodes"][0].__setitem__("attrs", []), "node 'x': \"attrs\" must be an object"),   # was a crash
    (lambda d: d.pop("name"), "KeyError: 'name'"),                          # was a KeyError crash
])
def test_malformed_fields_are_format_errors_not_crashes(change, fragment):
    """A graph JSON field of the wrong kind is a GraphFormatError (exit 2 naming it), never a crash
    (checks/graph_json_cases.py found both crashing ``zcspec plan graph.json``)."""
    doc = json.loads(json.dumps(_GOOD))
    validate(from_json(json.dumps(doc)))
    change(doc)
    with pytest.raises(GraphFormatError, match=fragment):
        from_json(json.dumps(doc))


def test_a_dtype_that_is_not_a_name_is_an_unknown_dtype():
    """"dtype": ["f"] raised TypeError (unhashable) from the dtype table; it is an UnknownDTypeError naming the tensor."""
    from zcspec.impl.platform.errors import UnknownDTypeError
    doc = json.loads(json.dumps(_GOOD))
    doc["tensors"][0]["dtype"] = ["f"]
    with pytest.raises(UnknownDTypeError, match="'x'"):
        validate(from_json(json.dumps(doc)))
