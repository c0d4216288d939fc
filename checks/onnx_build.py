"""Small ONNX builders shared by the front-end case models (checks/frontend_models.py,
checks/frontend_legacy_models.py): a value info, a model at an opset, an initializer, a named node."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
B = TensorProto.BOOL


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(list(nodes), "case", list(inputs), list(outputs), list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def node(op, ins, outs, name, **attrs_):
    return helper.make_node(op, ins, outs, name=name, **attrs_)
