"""Graph JSON files whose nodes have too few or too many inputs for their op: each must be refused at
import, naming the node and the count.

The expected counts are ONNX's (``onnx.defs``: each op's schema at its latest version), not the op
table's, so a table that let a Reshape take no input, or a Sub three, is caught by a file it lets
through. Per op of the op table with an ONNX schema: a node with no input where the schema wants at
least one, and a node with one input more than the schema's maximum. The IR deviates in one place,
listed: its views (Flatten, Identity) may carry their shape operand as a second input
(impl/compiler/ops.py), so their maximum is not ONNX's.
"""
from __future__ import annotations

import json

from onnx import defs

from zcspec.checks.frontend_case import FrontendCase
from zcspec.impl.compiler import ops

# The IR's views take an optional shape operand (ops.py ``_VIEWS``, inputs (1, 2)): not ONNX's maximum.
VIEW_SHAPE_OPERAND = ("Flatten", "Identity")
_MAX_SWEPT = 16   # variadic ops (Concat, Sum, ...) have no maximum to exceed


def _doc(op: str, n_inputs: int) -> str:
    names = [f"i{k}" for k in range(n_inputs)]
    nodes = [{"name": n, "op_type": "Data", "inputs": [], "outputs": [n], "attrs": {"index": k}, "stream": 0,
              "control_inputs": []} for k, n in enumerate(names)]
    nodes.append({"name": "arity", "op_type": op, "inputs": names, "outputs": ["y"], "attrs": {}, "stream": 0,
                  "control_inputs": []})
    outputs = ["y"] if names else ["x", "y"]
    if not names:   # a graph needs an input: one Data node the NetOutput reads beside the node under test
        nodes.insert(0, {"name": "x", "op_type": "Data", "inputs": [], "outputs": ["x"], "attrs": {"index": 0},
                         "stream": 0, "control_inputs": []})
    nodes.append({"name": "NetOutput", "op_type": "NetOutput", "inputs": outputs, "outputs": [], "attrs": {},
                  "stream": 0, "control_inputs": []})
    tensors = [{"name": t, "shape": [2, 3], "dtype": "float32", "format": "ND"}
               for t in ([] if names else ["x"]) + names + ["y"]]
    return json.dumps({"format": "zcspec-graph", "version": 2, "name": f"arity_{op}", "nodes": nodes,
                       "tensors": tensors, "weights": []})


def arity_cases() -> tuple[FrontendCase, ...]:
    out = []
    for op in sorted(ops.OPS):
        if not defs.has(op):
            continue
        schema = defs.get_schema(op)
        if schema.min_input >= 1:
            out.append(FrontendCase(f"graph_json_{op}_no_input", _doc(op, 0), "GraphError", ("'arity'", "has 0 inputs"),
                                    why=f"ONNX's {op} takes at least {schema.min_input} input(s)"))
        if schema.max_input < _MAX_SWEPT and op not in VIEW_SHAPE_OPERAND:
            n = schema.max_input + 1
            out.append(FrontendCase(f"graph_json_{op}_{n}_inputs", _doc(op, n), "GraphError",
                                    ("'arity'", f"has {n} inputs"), why=f"ONNX's {op} takes at most {n - 1} input(s)"))
    return tuple(out)
