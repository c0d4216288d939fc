"""The opset-9 ONNX form of the production-model ops, for the oracle (``checks/oracle.py``).

The oracle exports IR graphs at opset 9, where the IR's attribute forms are mostly ONNX's own:
Clip's ``min``/``max``, Pad's ``pads``/``mode``/``value``, the reductions' ``axes`` and
``keepdims`` are opset-9 attributes. What differs goes back here:

- Expand's ``shape`` and Tile's ``repeats`` are inputs at opset 9 (initializers are added);
- Pad's opset-18 ``axes`` becomes full-rank ``pads`` (zeros on the other axes);
- an operand that decides only values and is known only at run time (an input the node's
  ``_value_inputs`` names) is written out: Clip's bound as Max / Min with that input (lower bound
  first, as Clip applies them), Pad's constant ``value`` as Where(Pad(ones) as bool, Pad(x, 0), value);
- a reduction's empty ``axes`` means "every axis" (the attribute is left out), and one with
  ``noop_with_empty_axes`` and no axes is the Identity (opset 9 has no such attribute);
- ops opset 9 lacks are written out in opset-9 arithmetic: HardSwish (14) as x * HardSigmoid(x)
  with alpha 1/6, beta 0.5; Gelu (20) as x / 2 * (1 + erf(x / sqrt 2)), or with ``approximate``
  ``tanh`` as x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))); LayerNormalization (17) as
  (x - mean) / sqrt(var + epsilon) * Scale + B over the axes from ``axis`` on (ReduceMean with
  keepdims), its ``Mean`` and ``InvStdDev`` outputs as that mean and 1 / sqrt(var + epsilon),
  cast to their declared type. Resize (10) has no oracle: ``OracleUnavailable`` naming the node;
- BatchNormalization (inference) is written out as (x - mean) / sqrt(var + epsilon) * scale + bias:
  onnx.reference 1.23 evaluates an opset-9 BatchNormalization with the batch's own statistics
  (its ``momentum`` default makes it take the training branch), and cannot evaluate ``spatial``;
  the statistics broadcast per channel (``spatial`` 1, reshaped to C x 1 x ...) or per activation
  (``spatial`` 0: C x D1 x ...). One with training-mode outputs has no oracle;
- GlobalMaxPool is written out as ReduceMax over the spatial axes with keepdims: onnx.reference 1.23's
  GlobalMaxPool reduces axes (rank - 2, rank - 1), right only for 4-d inputs (a 3-d one kept its channels'
  axis and lost the batch's).
"""
from __future__ import annotations

import numpy as np
from onnx import helper, numpy_helper

from zcspec.checks.errors import OracleUnavailable
from zcspec.impl.platform import dtypes

REDUCTIONS = frozenset({"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2"})
WITHOUT_OPSET9 = {"Resize": 10}
WRITTEN_OUT = frozenset({"HardSwish", "Gelu", "LayerNormalization"})   # ops after opset 9, in opset-9 arithmetic
REFERENCE_BUGS = frozenset({"GlobalMaxPool"})   # onnx.reference evaluates these wrong: written out in other ops
HANDLED = frozenset({"Expand", "Tile", "Pad", "Clip", "BatchNormalization", *REDUCTIONS, *WITHOUT_OPSET9,
                     *WRITTEN_OUT, *REFERENCE_BUGS})
VALUE_INPUTS = "_value_inputs"   # impl/platform/kernel_ops.py's node attribute, spelled here: no impl import


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
    if node.op_type == "BatchNormalization":
        return _batch_norm(node, graph, extra_inits)
    if node.op_type == "HardSwish":
        gate = f"{node.name}/oracle/gate"
        return [helper.make_node("HardSigmoid", ins, [gate], name=gate, alpha=1 / 6, beta=0.5),
                helper.make_node("Mul", [ins[0], gate], outs, name=node.name)]
    if node.op_type == "Gelu":
        return _gelu(node, graph, extra_inits)
    if node.op_type == "LayerNormalization":
        return _layer_norm(node, graph, extra_inits)
    if node.op_type == "GlobalMaxPool":
        rank = len(graph.desc[ins[0]].shape)
        return [helper.make_node("ReduceMax", ins, outs, name=node.name, axes=list(range(2, rank)), keepdims=1)]
    if node.op_type == "Clip":
        return _clip(node, ins, outs)
    if node.op_type == "Pad":
        return _pad(node, graph, ins, outs, extra_inits)
    axes = tuple(node.attr("axes", ()) or ())
    if not axes and int(node.attr("noop_with_empty_axes", 0)):
        return [helper.make_node("Identity", ins, outs, name=node.name)]
    at = _plain(node, drop=("noop_with_empty_axes", "axes"))
    if axes:
        at["axes"] = list(axes)
    return [helper.make_node(node.op_type, ins, outs, name=node.name, **at)]


def _value_inputs(node, ins: list) -> tuple[list, dict]:
    """The node's data inputs, and attribute name -> the input tensor of each run-time value operand."""
    names = tuple(node.attr(VALUE_INPUTS, ()) or ())
    cut = len(ins) - len(names)
    return ins[:cut], dict(zip(names, ins[cut:]))


def _clip(node, ins: list, outs: list) -> list:
    """Clip: opset 9's attribute form, with each run-time bound as Max (min) or Min (max) with its input."""
    (x,), late = _value_inputs(node, ins)
    if not late:
        return [helper.make_node("Clip", [x], outs, name=node.name, **_plain(node))]
    steps = []   # lower bound first, as Clip applies them (min above max gives max)
    for key, op in (("min", "Max"), ("max", "Min")):
        if key in late:
            steps.append((op, [late[key]], {}))
        elif node.attr(key) is not None:
            steps.append(("Clip", [], {key: node.attr(key)}))
    nodes, t = [], x
    for i, (op, extra, at) in enumerate(steps):
        out = outs[0] if i == len(steps) - 1 else f"{node.name}/oracle/{op.lower()}"
        nodes.append(helper.make_node(op, [t, *extra], [out], name=out, **at))
        t = out
    return nodes


def _pad(node, graph, ins: list, outs: list, extra_inits: list) -> list:
    """Pad in opset 9's attribute form; a run-time constant ``value`` fills the padding through Where."""
    (x,), late = _value_inputs(node, ins)
    at = _pad_attrs(node, len(graph.desc[x].shape))
    if "value" not in late or at.get("mode", "constant") != "constant":
        return [helper.make_node("Pad", [x], outs, name=node.name, **at)]
    prefix = f"{node.name}/oracle"
    ones, inside, padded = f"{prefix}/ones", f"{prefix}/inside", f"{prefix}/padded"
    extra_inits.append(numpy_helper.from_array(np.ones(graph.desc[x].shape, np.float32), ones))
    zero = {**at, "value": 0.0}
    return [helper.make_node("Pad", [ones], [f"{inside}_f"], name=f"{inside}_f", **zero),
            helper.make_node("Cast", [f"{inside}_f"], [inside], name=inside, to=9),   # 9: BOOL
            helper.make_node("Pad", [x], [padded], name=padded, **zero),
            helper.make_node("Where", [inside, padded, late["value"]], outs, name=node.name)]


def _batch_norm(node, graph, extra_inits: list) -> list:
    """Inference-mode BatchNormalization in opset-9 arithmetic (see the module docstring)."""
    if len(node.outputs) > 1:
        raise OracleUnavailable(f"node {node.name!r} is a BatchNormalization with training-mode outputs")
    if int(node.attr("training_mode", 0)):
        raise OracleUnavailable(f"node {node.name!r} is a BatchNormalization in training mode (the batch's statistics)")
    x, scale, bias, mean, var = node.inputs
    rank = len(graph.desc[x].shape)
    dt = dtypes.numpy_dtype(graph.desc[x].dtype)
    prefix = f"{node.name}/oracle"
    eps = f"{prefix}/epsilon"
    extra_inits.append(numpy_helper.from_array(np.array(node.attr("epsilon", 1e-5), dt), eps))
    params, nodes = {}, []
    for key, t in (("scale", scale), ("bias", bias), ("mean", mean), ("var", var)):
        if int(node.attr("spatial", 1)):   # per channel: C -> C x 1 x ... so it broadcasts along axis 1
            params[key] = f"{prefix}/{key}"
            shape = _operand(node, f"oracle/{key}_shape", extra_inits, [-1] + [1] * (rank - 2))
            nodes.append(helper.make_node("Reshape", [t, shape], [params[key]], name=params[key]))
        else:                             # per activation: C x D1 x ... broadcasts as it is
            params[key] = t
    nodes += [helper.make_node("Sub", [x, params["mean"]], [f"{prefix}/centred"], name=f"{prefix}/centred"),
              helper.make_node("Add", [params["var"], eps], [f"{prefix}/var_eps"], name=f"{prefix}/var_eps"),
              helper.make_node("Sqrt", [f"{prefix}/var_eps"], [f"{prefix}/std"], name=f"{prefix}/std"),
              helper.make_node("Div", [f"{prefix}/centred", f"{prefix}/std"], [f"{prefix}/normal"], name=f"{prefix}/normal"),
              helper.make_node("Mul", [f"{prefix}/normal", params["scale"]], [f"{prefix}/scaled"], name=f"{prefix}/scaled"),
              helper.make_node("Add", [f"{prefix}/scaled", params["bias"]], list(node.outputs), name=node.name)]
    return nodes


def _constant(node, key: str, extra_inits: list, value, dt) -> str:
    """An initializer holding scalar ``value`` in numpy dtype ``dt``, named after ``node``."""
    name = f"{node.name}/oracle/{key}"
    extra_inits.append(numpy_helper.from_array(np.array(value, dt), name))
    return name


def _gelu(node, graph, extra_inits: list) -> list:
    """Gelu (opset 20) in opset-9 arithmetic: the erf form, or the tanh one (``approximate``)."""
    x, (y,) = node.inputs[0], node.outputs
    dt = dtypes.numpy_dtype(graph.desc[x].dtype)
    p = f"{node.name}/oracle"
    c = lambda key, value: _constant(node, key, extra_inits, value, dt)   # noqa: E731
    if node.attr("approximate", "none") == "tanh":
        nodes = [helper.make_node("Mul", [x, x], [f"{p}/x2"], name=f"{p}/x2"),
                 helper.make_node("Mul", [f"{p}/x2", x], [f"{p}/x3"], name=f"{p}/x3"),
                 helper.make_node("Mul", [f"{p}/x3", c("k", 0.044715)], [f"{p}/kx3"], name=f"{p}/kx3"),
                 helper.make_node("Add", [x, f"{p}/kx3"], [f"{p}/inner"], name=f"{p}/inner"),
                 helper.make_node("Mul", [f"{p}/inner", c("s", np.sqrt(2 / np.pi))], [f"{p}/arg"], name=f"{p}/arg"),
                 helper.make_node("Tanh", [f"{p}/arg"], [f"{p}/t"], name=f"{p}/t")]
    else:
        nodes = [helper.make_node("Mul", [x, c("s", 1 / np.sqrt(2))], [f"{p}/arg"], name=f"{p}/arg"),
                 helper.make_node("Erf", [f"{p}/arg"], [f"{p}/t"], name=f"{p}/t")]
    return nodes + [helper.make_node("Add", [f"{p}/t", c("one", 1.0)], [f"{p}/one_t"], name=f"{p}/one_t"),
                    helper.make_node("Mul", [x, f"{p}/one_t"], [f"{p}/x_one_t"], name=f"{p}/x_one_t"),
                    helper.make_node("Mul", [f"{p}/x_one_t", c("half", 0.5)], [y], name=node.name)]


def _layer_norm(node, graph, extra_inits: list) -> list:
    """LayerNormalization (opset 17) in opset-9 arithmetic (see the module docstring)."""
    x, scale, *bias = node.inputs
    rank = len(graph.desc[x].shape)
    axes = list(range(int(node.attr("axis", -1)) % rank, rank))
    dt = dtypes.numpy_dtype(graph.desc[x].dtype)
    p = f"{node.name}/oracle"
    eps = _constant(node, "epsilon", extra_inits, node.attr("epsilon", 1e-5), dt)
    y = node.outputs[0] if not bias else f"{p}/scaled"
    nodes = [helper.make_node("ReduceMean", [x], [f"{p}/mean"], name=f"{p}/mean", axes=axes, keepdims=1),
             helper.make_node("Sub", [x, f"{p}/mean"], [f"{p}/centred"], name=f"{p}/centred"),
             helper.make_node("Mul", [f"{p}/centred", f"{p}/centred"], [f"{p}/square"], name=f"{p}/square"),
             helper.make_node("ReduceMean", [f"{p}/square"], [f"{p}/var"], name=f"{p}/var", axes=axes, keepdims=1),
             helper.make_node("Add", [f"{p}/var", eps], [f"{p}/var_eps"], name=f"{p}/var_eps"),
             helper.make_node("Sqrt", [f"{p}/var_eps"], [f"{p}/std"], name=f"{p}/std"),
             helper.make_node("Div", [f"{p}/centred", f"{p}/std"], [f"{p}/normal"], name=f"{p}/normal"),
             helper.make_node("Mul", [f"{p}/normal", scale], [y], name=node.name if not bias else y)]
    if bias:
        nodes.append(helper.make_node("Add", [y, bias[0]], [node.outputs[0]], name=node.name))
    stats = [f"{p}/mean"]
    if len(node.outputs) > 2:
        nodes.append(helper.make_node("Reciprocal", [f"{p}/std"], [f"{p}/inv_std"], name=f"{p}/inv_std"))
        stats.append(f"{p}/inv_std")
    for stat, out in zip(stats, node.outputs[1:]):
        to = dtypes.get(graph.desc[out].dtype).onnx_id
        nodes.append(helper.make_node("Cast", [stat], [out], name=f"{out}/oracle", to=to))
    return nodes
