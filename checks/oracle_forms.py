"""The opset-9 ONNX form of the production-model ops, for the oracle (``checks/oracle.py``).

The oracle exports IR graphs at opset 9, where the IR's attribute forms are mostly ONNX's own:
Clip's ``min``/``max``, Pad's ``pads``/``mode``/``value``, the reductions' ``axes`` and
``keepdims`` are opset-9 attributes. What differs goes back here:

- Expand's ``shape`` and Tile's ``repeats`` are inputs at opset 9 (initializers are added);
- Pad's opset-18 ``axes`` becomes full-rank ``pads`` (zeros on the other axes);
- a reduction's empty ``axes`` means "every axis" (the attribute is left out), and one with
  ``noop_with_empty_axes`` and no axes is the Identity (opset 9 has no such attribute);
- ops opset 9 lacks (HardSwish 14, LayerNormalization 17, Gelu 20, Resize 10) have no
  oracle: ``OracleUnavailable`` naming the node.
"""
from __future__ import annotations

import numpy as np
from onnx import helper, numpy_helper

from zcspec.checks.errors import OracleUnavailable

REDUCTIONS = frozenset({"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"})
WITHOUT_OPSET9 = {"HardSwish": 14, "LayerNormalization": 17, "Gelu": 20, "Resize": 10}
HANDLED = frozenset({"Expand", "Tile", "Pad", *REDUCTIONS, *WITHOUT_OPSET9})


def _plain(node, drop=()) -> dict:
    return {k: v for k, v in node.attrs if not k.startswith("_") and k not in drop}


def _operand(node, key: str, extra_inits: list, values) -> str:
    name = f"{node.name}/{key}"
    extra_inits.append(numpy_helper.from_array(np.array(values, np.int64), name))
    return name


def _pad_attrs(node, rank: int) -> dict:
    at = _plain(node, drop=("axes",))
    axes = node.attr("axes")
    if axes is not None:
        axes, pads = [int(a) % rank for a in axes], [int(p) for p in node.attr("pads")]
        full = [0] * (2 * rank)
        for i, a in enumerate(axes):
            full[a], full[a + rank] = pads[i], pads[i + len(axes)]
        at["pads"] = full
    return at


def opset9_nodes(node, graph, extra_inits: list) -> list:
    """The opset-9 node(s) computing IR ``node`` (one of ``HANDLED``); OracleUnavailable when none can."""
    if node.op_type in WITHOUT_OPSET9:
        raise OracleUnavailable(f"node {node.name!r} is a {node.op_type}, an op from opset "
                                f"{WITHOUT_OPSET9[node.op_type]} on; the oracle evaluates opset 9")
    ins, outs = list(node.inputs), list(node.outputs)
    if node.op_type == "Expand":
        shape = _operand(node, "shape", extra_inits, graph.desc[outs[0]].shape)
        return [helper.make_node("Expand", [ins[0], shape], outs, name=node.name)]
    if node.op_type == "Tile":
        repeats = _operand(node, "repeats", extra_inits, node.attr("repeats"))
        return [helper.make_node("Tile", [ins[0], repeats], outs, name=node.name)]
    if node.op_type == "Pad":
        return [helper.make_node("Pad", ins, outs, name=node.name, **_pad_attrs(node, len(graph.desc[ins[0]].shape)))]
    axes = tuple(node.attr("axes", ()) or ())
    if not axes and int(node.attr("noop_with_empty_axes", 0)):
        return [helper.make_node("Identity", ins, outs, name=node.name)]
    at = _plain(node, drop=("noop_with_empty_axes", "axes"))
    if axes:
        at["axes"] = list(axes)
    return [helper.make_node(node.op_type, ins, outs, name=node.name, **at)]
