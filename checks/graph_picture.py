"""A picture of a graph: a layered DAG as SVG text (pure text, no layout engine).

``graph_svg(graph)`` draws one box per node labelled ``name: OpType``, in layers
(networkx's topological generations of the dependency graph: a node sits one
layer below the deepest node it reads from), and one arrow per producer ->
consumer pair, its tooltip naming the tensors it carries. Graph inputs (the
Data nodes) and the NetOutput node are filled in their own colours, and a node
that writes a graph output has a thick border. Weights add no boxes (a weight
has no producer). The same graph gives the same bytes; every name is escaped.
"""
from __future__ import annotations

import hashlib
from html import escape

import networkx as nx

from zcspec.impl.compiler.errors import CycleError
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.compiler.topology import dependency_graph

CHAR_W, BOX_H, PAD_X, GAP_X, GAP_Y, MARGIN = 7.0, 24, 8, 18, 34, 12
FILL = {"input": "#d4ecd0", "output": "#fbe0c4", "op": "#e4ecf6"}
STROKE = "#445"
LEGEND = "green: graph input (Data); orange: NetOutput; thick border: writes a graph output"


def layers(graph: Graph) -> list[list[str]]:
    """Node names per layer, top first, each layer in the graph's node order. CycleError (naming the
    nodes of one cycle) if the graph is not a DAG."""
    dg = dependency_graph(graph)
    index = {n.name: i for i, n in enumerate(graph.nodes)}
    try:
        return [sorted(layer, key=index.__getitem__) for layer in nx.topological_generations(dg)]
    except nx.NetworkXUnfeasible:
        raise CycleError(tuple(edge[0] for edge in nx.find_cycle(dg))) from None


def graph_svg(graph: Graph, *, title: str | None = None) -> str:
    """The SVG text of ``graph`` drawn as a layered DAG (see the module doc)."""
    rows = layers(graph)
    width = {n.name: PAD_X * 2 + CHAR_W * len(_label(n)) for n in graph.nodes}
    row_w = [sum(width[n] for n in row) + GAP_X * (len(row) - 1) for row in rows]
    heading = title or f"graph {graph.name}: {len(graph.nodes)} nodes"
    total_w = MARGIN * 2 + max(row_w + [CHAR_W * len(LEGEND), CHAR_W * 1.2 * len(heading)])
    top = MARGIN + 22
    total_h = top + len(rows) * (BOX_H + GAP_Y) - GAP_Y + MARGIN + 18
    box = {}   # node name -> (x, y, width)
    for r, row in enumerate(rows):
        x = (total_w - row_w[r]) / 2
        for name in row:
            box[name] = (x, top + r * (BOX_H + GAP_Y), width[name])
            x += width[name] + GAP_X
    # A page may hold several pictures: the arrowhead's id is the graph's own, so ids do not clash.
    marker = "arrow-" + hashlib.sha1(graph.name.encode()).hexdigest()[:10]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{total_w:.0f}" height="{total_h:.0f}" '
             f'viewBox="0 0 {total_w:.0f} {total_h:.0f}" font-family="Menlo, Consolas, monospace" font-size="11">',
             f'<defs><marker id="{marker}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             f'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="{STROKE}"/></marker></defs>',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="{MARGIN}" y="{MARGIN + 10}" font-size="13" font-weight="bold">{escape(heading)}</text>']
    parts += _edges(graph, box, marker)
    parts += _boxes(graph, box)
    parts.append(f'<text x="{MARGIN}" y="{total_h - MARGIN + 4:.0f}" fill="#555">{LEGEND}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _label(node) -> str:
    return f"{node.name}: {node.op_type}"


def _kind(node) -> str:
    return "input" if node.op_type == "Data" else "output" if node.op_type == "NetOutput" else "op"


def _edges(graph: Graph, box: dict, marker: str) -> list[str]:
    """One arrow per producer -> consumer pair, bottom centre to top centre."""
    carried: dict[tuple[str, str], list[str]] = {}
    for n in graph.nodes:
        for t in dict.fromkeys(n.inputs):
            if (src := graph.producer.get(t)) is not None:
                carried.setdefault((src, n.name), []).append(t)
    out = []
    for (src, dst), tensors in carried.items():
        (x0, y0, w0), (x1, y1, w1) = box[src], box[dst]
        ax, ay, bx, by = x0 + w0 / 2, y0 + BOX_H, x1 + w1 / 2, y1
        bend = (by - ay) / 2
        out.append(f'<path d="M {ax:.1f} {ay:.1f} C {ax:.1f} {ay + bend:.1f} {bx:.1f} {by - bend:.1f} {bx:.1f} '
                   f'{by:.1f}" fill="none" stroke="{STROKE}" stroke-width="1.2" marker-end="url(#{marker})">'
                   f'<title>{escape(", ".join(tensors))}</title></path>')
    return out


def _boxes(graph: Graph, box: dict) -> list[str]:
    outputs = set(graph.outputs)
    out = []
    for n in graph.nodes:
        x, y, w = box[n.name]
        writes_output = n.op_type != "Data" and bool(outputs & set(n.outputs))
        tip = (f"{n.name} ({n.op_type}): reads {', '.join(n.inputs) or 'nothing'}; "
               f"writes {', '.join(n.outputs) or 'nothing'}")
        out.append(f'<g class="node {_kind(n)}"><title>{escape(tip)}</title>'
                   f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{BOX_H}" rx="4" fill="{FILL[_kind(n)]}" '
                   f'stroke="{STROKE}" stroke-width="{2.5 if writes_output else 1}"/>'
                   f'<text x="{x + PAD_X:.1f}" y="{y + BOX_H / 2 + 4:.1f}">{escape(_label(n))}</text></g>')
    return out
