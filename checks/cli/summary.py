"""``zcspec summary MODEL``: what is in a model, at a glance.

It also lists the ONNX file's stale shape annotations (value_info entries and declared outputs the
graph contradicts), which the import ignored for the inferred shapes: the user sees that the file
says one thing and the model another rather than finding out from a shape they did not expect."""
from __future__ import annotations

import json
from collections import Counter

from zcspec.checks.cli.arguments import add_model_arguments
from zcspec.checks.models import load_imported
from zcspec.impl.compiler import ops


def configure(parser) -> None:
    add_model_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def summarize(graph, stale=()) -> dict:
    """The summary of ``graph``; ``stale``: the import's ``StaleAnnotation`` s."""
    weights = set(graph.weight)
    activations = [t for t in graph.tensors if t.name not in weights]
    views = sum(1 for n in graph.nodes if ops.is_view(n))
    return {
        "name": graph.name,
        "nodes": len(graph.nodes),
        "ops": dict(sorted(Counter(n.op_type for n in graph.nodes).items(), key=lambda kv: (-kv[1], kv[0]))),
        "view_nodes": views,
        "inputs": {t: list(graph.desc[t].shape) for t in graph.inputs},
        "outputs": {t: list(graph.desc[t].shape) for t in graph.outputs},
        "tensors": len(graph.tensors),
        "weights": len(graph.weights),
        "weight_bytes": graph.weight_bytes(),
        "activation_bytes": sum(t.nbytes for t in activations),
        "stale_annotations": [{"tensor": s.tensor, "role": s.role, "declared": list(s.declared),
                               "inferred": None if s.inferred is None else list(s.inferred)} for s in stale],
    }


def run(args) -> int:
    imported = load_imported(args.model, args.shape, args.value)
    info = summarize(imported.graph, imported.stale)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"model {info['name']!r}: {info['nodes']} nodes ({info['view_nodes']} views, no task), {info['tensors']} tensors")
    for kind in ("inputs", "outputs"):
        for name, shape in info[kind].items():
            print(f"  {kind[:-1]:6} {name}  {'x'.join(map(str, shape))}")
    print(f"  weights      {info['weights']:>6} tensors  {info['weight_bytes']:>14,} bytes")
    print(f"  activations  {info['tensors'] - info['weights']:>6} tensors  {info['activation_bytes']:>14,} bytes")
    print("  nodes by op type:")
    for op, count in info["ops"].items():
        print(f"    {op:<20} {count:>6}")
    if imported.stale:
        n = len(imported.stale)
        print(f"  {n} stale shape annotation{'s' * (n > 1)} ignored (the graph's own shapes are used):")
        for s in imported.stale:
            print(f"    {s}")
    return 0
