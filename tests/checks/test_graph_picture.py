"""checks/graph_picture.py: a graph drawn as a layered DAG in SVG."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from zcspec.checks.graph_picture import graph_svg, layers
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.errors import CycleError
from zcspec.impl.compiler.ir import Graph, Node, TensorDesc

SVG = "{http://www.w3.org/2000/svg}"


def _diamond_with_skip() -> Graph:
    """x -> a -> b -> add(b, x'), x -> c; a weight read by b (weights add no box)."""
    g = GraphBuilder("diamond")
    x = g.input("x", (2, 4))
    a = g.op("Relu", [x], name="a")
    b = g.op("Add", [a, g.weight("w", np.ones((2, 4), np.float32))], name="b")
    c = g.op("Neg", [x], name="c")
    g.output(g.op("Add", [b, x], name="d"), c)
    return g.build()


def test_layers_put_a_node_one_below_its_deepest_producer():
    assert layers(_diamond_with_skip()) == [["x"], ["a", "c"], ["b"], ["d"], ["NetOutput"]]


def test_one_labelled_box_per_node_and_one_arrow_per_producer_consumer_pair():
    graph = _diamond_with_skip()
    root = ET.fromstring(graph_svg(graph))   # well-formed XML
    boxes = root.findall(f"{SVG}g")
    assert [b.find(f"{SVG}text").text for b in boxes] == [f"{n.name}: {n.op_type}" for n in graph.nodes]
    kinds = {b.find(f"{SVG}text").text: b.get("class") for b in boxes}
    assert kinds["x: Data"] == "node input" and kinds["NetOutput: NetOutput"] == "node output"
    assert kinds["a: Relu"] == "node op"
    arrows = {p.find(f"{SVG}title").text for p in root.findall(f"{SVG}path") if p.get("marker-end")}
    # x feeds a, c and d; c and d feed NetOutput; the weight w adds no arrow
    assert arrows == {"x", "a:0", "b:0", "c:0", "d:0"} and len(root.findall(f"{SVG}path")) == 1 + 6


def test_nodes_that_write_a_graph_output_have_a_thick_border():
    root = ET.fromstring(graph_svg(_diamond_with_skip()))
    width = {b.find(f"{SVG}text").text: b.find(f"{SVG}rect").get("stroke-width") for b in root.findall(f"{SVG}g")}
    assert width["d: Add"] == width["c: Neg"] == "2.5"
    assert width["a: Relu"] == width["b: Add"] == width["x: Data"] == "1"


def test_boxes_of_a_layer_do_not_overlap_and_layers_go_down():
    root = ET.fromstring(graph_svg(_diamond_with_skip()))
    rects = {b.find(f"{SVG}text").text.split(":")[0]: b.find(f"{SVG}rect") for b in root.findall(f"{SVG}g")}
    x = {k: (float(r.get("x")), float(r.get("x")) + float(r.get("width")), float(r.get("y"))) for k, r in rects.items()}
    assert x["a"][1] < x["c"][0] and x["a"][2] == x["c"][2]
    assert x["x"][2] < x["a"][2] < x["b"][2] < x["d"][2] < x["NetOutput"][2]
    assert all(0 <= lo and hi <= float(root.get("width")) for lo, hi, _ in x.values())


def test_names_are_escaped_and_the_drawing_is_deterministic():
    g = GraphBuilder("g<&>")
    x = g.input("in<1>", (2,))
    g.output(g.op("Relu", [x], name='r"&<script>'))
    graph = g.build()
    text = graph_svg(graph)
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert ET.fromstring(text) is not None and graph_svg(graph) == text


def test_a_cycle_is_refused_naming_its_nodes():
    t = [TensorDesc(n, (2,)) for n in ("p", "q")]
    cyclic = Graph("loop", [Node("A", "Relu", ["q"], ["p"]), Node("B", "Relu", ["p"], ["q"])], t)
    with pytest.raises(CycleError, match=r"'A'.*'B'|'B'.*'A'"):
        graph_svg(cyclic)


def test_the_arrowhead_id_is_the_graphs_own():
    a, b = (re.findall(r'marker id="([^"]+)"', graph_svg(_named(n))) for n in ("one", "two"))
    assert a and b and a != b


def _named(name: str) -> Graph:
    g = GraphBuilder(name)
    g.output(g.op("Relu", [g.input("x", (2,))]))
    return g.build()
