"""Small ONNX models for front-end tests, built with onnx.helper (no front-end code involved).

``malformed(kind)`` returns a model broken in one way, with the culprit it must be reported as;
the CLI tests in tests/cli use the same models.
"""
from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
LIGHT_MODELS = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
                "shufflenet", "squeezenet", "vgg19", "zfnet512")


def light_path(name: str) -> str:
    return os.path.join(LIGHT, f"light_{name}.onnx")


def vi(name: str, shape, elem: int = F):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name: str, array) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(array), name)


def model(nodes, inputs, outputs, initializers=(), *, opset: int = 13, ir_version: int | None = None,
          name: str = "g") -> onnx.ModelProto:
    """A model over ``nodes``; inputs/outputs are value infos (or names, for untyped outputs)."""
    outputs = [vi(o, None, TensorProto.UNDEFINED) if isinstance(o, str) else o for o in outputs]
    graph = helper.make_graph(list(nodes), name, list(inputs), outputs, list(initializers))
    kwargs = {} if ir_version is None else {"ir_version": ir_version}
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **kwargs)


def save(m: onnx.ModelProto, folder, name: str) -> str:
    path = os.path.join(str(folder), name)
    onnx.save(m, path)
    return path


def malformed(kind: str) -> tuple[onnx.ModelProto, dict]:
    """A model with one defect and the fields the error must carry (node / tensor)."""
    x = vi("x", [1, 4])
    if kind == "cycle":
        nodes = [helper.make_node("Relu", ["x"], ["a"], name="head"),
                 helper.make_node("Add", ["a", "c"], ["b"], name="loop_add"),
                 helper.make_node("Relu", ["b"], ["c"], name="loop_relu"),
                 helper.make_node("Relu", ["c"], ["y"], name="tail")]
        return model(nodes, [x], ["y"]), {"node": "loop_add", "names": ("loop_add", "loop_relu")}
    if kind == "missing":
        nodes = [helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")]
        return model(nodes, [x], ["y"]), {"node": "adder", "tensor": "ghost"}
    if kind == "unknown_op":
        nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"),
                 helper.make_node("FrobnicateXYZ", ["a"], ["y"], name="frob")]
        return model(nodes, [x], ["y"]), {"node": "frob", "op_type": "FrobnicateXYZ"}
    if kind == "dynamic":
        nodes = [helper.make_node("Relu", ["x"], ["y"], name="r")]
        return model(nodes, [vi("x", ["batch", 4])], ["y"]), {"tensor": "x"}
    raise ValueError(kind)
