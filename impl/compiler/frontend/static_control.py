"""Control flow that is static once the inputs are fixed: frozen inputs and ``If`` nodes with a constant condition.

A static IR has no branches at run time. Two model rewrites make a model with
control flow static, before the rest of the import sees it:

- ``freeze_inputs(model, values)``: the graph inputs named in ``values`` become
  initializers with those values (``--value sr=16000``: Silero VAD's sample
  rate). Each value is cast to the input's declared element type and must fit
  its declared shape.
- ``inline_if(model, output, name, take_then)``: the ``If`` node writing ``output``
  (its IR name is ``name``) is replaced by
  the nodes of the branch its (constant) condition selects. The branch's own
  tensors and initializers are renamed ``<if node>/<name>`` so they cannot clash
  with the outer graph's; an Identity carries each branch output to the If's
  output, so readers of the If keep their names. Outer-scope tensors the branch
  reads keep theirs.

- ``inline_constant_ifs(model)``: every top-level ``If`` whose condition is
  computed from initializers alone (a frozen input included) is evaluated with
  ONNX's reference implementation and inlined, repeatedly (nested Ifs too).
  This runs before shape inference, which cannot type the bodies of some
  exported branches (Silero VAD's).

``onnx_import`` then folds constants; an ``If`` whose condition folded to a
constant only after shape inference (a ``Shape`` of an input) is inlined and the
import starts over; one whose condition still depends on the data is refused,
naming the node and the inputs to freeze.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from zcspec.impl.compiler.frontend.errors import FrozenInputError


def _declared(value: onnx.ValueInfoProto) -> tuple[int, tuple[int | None, ...] | None]:
    t = value.type.tensor_type
    dims = None
    if t.HasField("shape"):
        dims = tuple(d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in t.shape.dim)
    return t.elem_type, dims


def freeze_inputs(model: onnx.ModelProto, values: Mapping[str, object]) -> onnx.ModelProto:
    """A copy of ``model`` whose inputs named in ``values`` are initializers holding those values."""
    if not values:
        return model
    inputs = {v.name: v for v in model.graph.input}
    initializers = {t.name for t in model.graph.initializer}
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for name, value in values.items():
        if name not in inputs or name in initializers:
            raise FrozenInputError(name, tuple(n for n in inputs if n not in initializers), "is not a graph input")
        elem, dims = _declared(inputs[name])
        array = np.asarray(value, dtype=helper.tensor_dtype_to_np_dtype(elem))
        if dims is not None and (len(dims) != array.ndim or any(d is not None and d != a
                                                                  for d, a in zip(dims, array.shape))):
            raise FrozenInputError(name, (), f"has shape {dims!r}; the value's shape is {array.shape!r}")
        out.graph.initializer.append(numpy_helper.from_array(array, name))
    keep = [v for v in out.graph.input if v.name not in values]
    del out.graph.input[:]
    out.graph.input.extend(keep)
    return out


def _branch_names(branch: onnx.GraphProto, prefix: str) -> dict[str, str]:
    """The branch's own tensors (its initializers and node outputs) -> their names in the outer graph."""
    own = [t.name for t in branch.initializer] + [o for n in branch.node for o in n.output if o]
    return {t: f"{prefix}/{t}" for t in own}


def _rename_reads(node: onnx.NodeProto, rename: Mapping[str, str]) -> None:
    """Rename what ``node`` reads, in place, also inside its own subgraphs (a nested If's branches read
    the enclosing branch's tensors by name), except names a subgraph defines itself."""
    node.input[:] = [rename.get(t, t) for t in node.input]
    for a in node.attribute:
        for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
            inner = {t.name for t in g.initializer} | {v.name for v in g.input}
            inner |= {o for n in g.node for o in n.output}
            visible = {k: v for k, v in rename.items() if k not in inner}
            for n in g.node:
                _rename_reads(n, visible)
            for o in g.output:
                if o.name in visible:
                    o.name = visible[o.name]


def _inlined(node: onnx.NodeProto, name: str, take_then: bool) -> tuple[list, list]:
    branch = next(helper.get_attribute_value(a) for a in node.attribute
                  if a.name == ("then_branch" if take_then else "else_branch"))
    rename = _branch_names(branch, name)
    nodes = []
    for n in branch.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(n)
        copy.name = f"{name}/{n.name}" if n.name else ""
        _rename_reads(copy, rename)
        copy.output[:] = [rename.get(t, t) for t in n.output]
        nodes.append(copy)
    inits = []
    for t in branch.initializer:
        copy = onnx.TensorProto()
        copy.CopyFrom(t)
        copy.name = rename[t.name]
        inits.append(copy)
    for out, result in zip(node.output, branch.output):
        nodes.append(helper.make_node("Identity", [rename.get(result.name, result.name)], [out],
                                      name=f"{name}/{out}"))
    return nodes, inits


def inline_if(model: onnx.ModelProto, output: str, name: str, take_then: bool) -> onnx.ModelProto:
    """A copy of ``model`` with the If node that writes ``output`` replaced by its chosen branch."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes = []
    for n in out.graph.node:
        if n.op_type == "If" and output in n.output:
            branch_nodes, inits = _inlined(n, name, take_then)
            nodes += branch_nodes
            out.graph.initializer.extend(inits)
        else:
            nodes.append(n)
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    return out


def _condition(model: onnx.ModelProto, tensor: str) -> bool | None:
    """The value of ``tensor`` when initializers alone determine it, else None."""
    inits = {t.name: t for t in model.graph.initializer}
    writer = {o: n for n in model.graph.node for o in n.output if o}
    needed, todo, leaves = [], [tensor], set()
    while todo:
        t = todo.pop()
        if t in inits:
            leaves.add(t)
        elif t in writer:
            node = writer[t]
            if node.op_type == "If" or any(a.type == onnx.AttributeProto.GRAPH for a in node.attribute):
                return None
            if node not in needed:
                needed.append(node)
                todo.extend(i for i in node.input if i)
        else:
            return None   # a graph input: the data decides
    order = [n for n in model.graph.node if n in needed]
    sub = helper.make_graph(order, "condition", [], [helper.make_tensor_value_info(tensor, 0, None)],
                            [inits[t] for t in sorted(leaves)])
    sub_model = helper.make_model(sub, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    try:
        value = ReferenceEvaluator(sub_model).run(None, {})[0]
    except Exception:  # the reference implementation cannot evaluate it: leave the If to the fold
        return None
    return bool(np.asarray(value).reshape(-1)[0])


def inline_constant_ifs(model: onnx.ModelProto, limit: int) -> onnx.ModelProto:
    """``model`` with every top-level If whose condition initializers decide replaced by its branch."""
    for _ in range(limit):
        for node in model.graph.node:
            if node.op_type == "If":
                take = _condition(model, node.input[0])
                if take is not None:
                    model = inline_if(model, node.output[0], node.name or node.output[0], take)
                    break
        else:
            return model
    return model
