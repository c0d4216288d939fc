"""The execution oracle: what a graph's outputs must be, computed without impl.

``oracle_outputs(graph, inputs)`` exports the IR graph to ONNX (opset 9, the
attribute forms the IR keeps) and runs onnx's reference evaluator: an
independent implementation of every op. zcspec-only ops map to their
meaning: a single-rank collective and a memcpy are identities, PhonyConcat is
a Concat, a Merge (the join of dynamic-batch branches) is the Identity of the
chosen branch's input (``batch``). Graphs with state (Variable), and a Merge with
no branch chosen, have no oracle (OracleUnavailable).
For the light models the reference outputs shipped beside each model (input
all ones) are the oracle instead (``light_reference``).
"""
from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from zcspec.checks import oracle_forms
from zcspec.checks.errors import OracleUnavailable
from zcspec.impl.compiler import ops
from zcspec.impl.compiler.ir import Graph
from zcspec.impl.platform import dtypes

OPSET = 9
_IDENTITY = {"MemcpyAsync", "MemcpyAddrAsync", "Dropout", "HcomAllReduce", "HcomAllGather", "HcomBroadcast"}


def _attrs(node) -> dict:
    return {k: v for k, v in node.attrs if not k.startswith("_") and not (node.op_type == "Reshape" and k == "shape")}


def _onnx_nodes(graph: Graph, extra_inits: list, batch: str | None) -> list:
    out = []
    for n in graph.nodes:
        info = ops.info(n.op_type)
        if info.kind in ("data", "netoutput"):
            continue
        if info.kind == "variable":
            raise OracleUnavailable(f"node {n.name!r} is a Variable: its value is runtime state")
        if n.op_type in _IDENTITY:
            out += [helper.make_node("Identity", [i], [o], name=f"{n.name}/{k}")
                    for k, (i, o) in enumerate(zip(n.inputs, n.outputs))]
        elif n.op_type == "Merge":
            out.append(helper.make_node("Identity", [_chosen(n, batch)], list(n.outputs), name=n.name))
        elif n.attr("_present_inputs") is not None:   # omitted optional inputs go back to their positions
            present = tuple(n.attr("_present_inputs"))
            inputs = [""] * (max(present) + 1)
            for i, t in zip(present, n.inputs):
                inputs[i] = t
            out.append(helper.make_node(n.op_type, inputs, list(n.outputs), name=n.name, **_attrs(n)))
        elif n.op_type == "Softmax" and int(n.attr("_opset", 0)) >= 13:
            out += _softmax_along_axis(n, len(graph.desc[n.inputs[0]].shape))
        elif n.op_type == "Softmax":
            out += _softmax_coerced(n, graph.desc[n.inputs[0]].shape, extra_inits)
        elif n.op_type in oracle_forms.HANDLED:
            out += oracle_forms.opset9_nodes(n, graph, extra_inits)
        elif n.op_type == "PhonyConcat":
            out.append(helper.make_node("Concat", list(n.inputs), list(n.outputs), name=n.name, axis=n.attr("axis", 0)))
        elif n.op_type == "Reshape":
            shape = f"{n.name}/shape"
            extra_inits.append(numpy_helper.from_array(np.array(graph.desc[n.outputs[0]].shape, np.int64), shape))
            out.append(helper.make_node("Reshape", [n.inputs[0], shape], list(n.outputs), name=n.name))
        else:
            out.append(helper.make_node(n.op_type, list(n.inputs), list(n.outputs), name=n.name, **_attrs(n)))
    return out


def _softmax_along_axis(n, rank: int) -> list:
    """An opset-13 Softmax (along ``axis``, default -1) at opset 9, which coerces to 2-D at ``axis``:
    the two agree when the axis is the last one, so the axis is moved there and back."""
    ax = int(n.attr("axis", -1)) % max(rank, 1)
    if ax == rank - 1:
        return [helper.make_node("Softmax", list(n.inputs), list(n.outputs), name=n.name, axis=ax)]
    perm = [i for i in range(rank) if i != ax] + [ax]
    last, done = f"{n.name}/axis_last", f"{n.name}/softmax"
    return [helper.make_node("Transpose", list(n.inputs), [last], name=f"{n.name}/to_last", perm=perm),
            helper.make_node("Softmax", [last], [done], name=n.name, axis=rank - 1),
            helper.make_node("Transpose", [done], list(n.outputs), name=f"{n.name}/back",
                             perm=[int(i) for i in np.argsort(perm)])]


def _softmax_coerced(n, shape, extra_inits: list) -> list:
    """A Softmax of opsets 1-12 (coerce to 2-D at ``axis``, default 1), spelled so that no evaluator can
    read it with opset 13's meaning: onnx.reference (1.23) evaluates an opset-9 Softmax along the last
    axis, which gives all ones on a (1, 1000, 1, 1) classifier output. Flatten at ``axis``, Softmax on
    the last axis of the 2-D result (where both meanings agree), Reshape back."""
    rank = len(shape)
    ax = int(n.attr("axis", 1)) % max(rank, 1)
    if ax == rank - 1 or rank <= 1:
        return [helper.make_node("Softmax", list(n.inputs), list(n.outputs), name=n.name, axis=max(rank - 1, 0))]
    flat, done, back = f"{n.name}/flat", f"{n.name}/softmax", f"{n.name}/shape"
    extra_inits.append(numpy_helper.from_array(np.array(shape, np.int64), back))
    return [helper.make_node("Flatten", list(n.inputs), [flat], name=f"{n.name}/to_2d", axis=ax),
            helper.make_node("Softmax", [flat], [done], name=n.name, axis=1),
            helper.make_node("Reshape", [done, back], list(n.outputs), name=f"{n.name}/back")]


def _chosen(merge, batch: str | None) -> str:
    """The input of ``merge`` that branch ``batch`` feeds (its ``labels`` name each input's branch)."""
    labels = tuple(merge.attr("labels", ()))
    if batch not in labels:
        raise OracleUnavailable(f"Merge {merge.name!r} joins branches {list(labels)}, the oracle was asked for "
                                f"batch={batch!r}: choose one of them")
    return merge.inputs[labels.index(batch)]


def to_onnx(graph: Graph, batch: str | None = None) -> onnx.ModelProto:
    """``graph`` as an ONNX model; a Merge forwards the input of branch ``batch``."""
    def info(t):
        d = graph.desc[t]
        return helper.make_tensor_value_info(t, dtypes.get(d.dtype).onnx_id, list(d.shape))

    inits = [numpy_helper.from_array(w.array(graph.desc[w.name]), w.name) for w in graph.weights]
    nodes = _onnx_nodes(graph, inits, batch)
    outputs = list(dict.fromkeys(graph.outputs))
    g = helper.make_graph(nodes, graph.name, [info(t) for t in graph.inputs], [info(t) for t in outputs], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=7)


def oracle_outputs(graph: Graph, inputs: dict, *, batch: str | None = None) -> dict:
    """Output tensor name -> array, evaluated by onnx.reference on the exported graph (branch ``batch`` of a
    dynamic-batch graph).

    Only what the reference evaluator cannot do makes the oracle unavailable (an op or attribute form it
    lacks), besides the graphs :func:`to_onnx` declines (OracleUnavailable: state, no branch chosen). An
    export that fails otherwise (a weight whose bytes do not hold its tensor) raises: the graph is broken,
    and its outputs left unjudged would let it pass."""
    model = to_onnx(graph, batch)
    try:
        evaluator = ReferenceEvaluator(model)
        names = [o.name for o in model.graph.output]
        values = evaluator.run(names, {k: np.asarray(v) for k, v in inputs.items()})
    except OracleUnavailable:
        raise
    except Exception as e:  # the reference evaluator lacks an op or attribute form
        raise OracleUnavailable(f"onnx.reference cannot evaluate graph {graph.name!r}: {type(e).__name__}: {e}") from e
    return dict(zip(names, values))


def light_reference(name: str) -> dict:
    """The shipped reference output of light model ``name`` (input all ones), keyed by output name."""
    folder = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    model = onnx.load(os.path.join(folder, f"light_{name}.onnx"), load_external_data=False)
    tensor = onnx.load_tensor(os.path.join(folder, f"light_{name}_output_0.pb"))
    return {model.graph.output[0].name: numpy_helper.to_array(tensor)}
