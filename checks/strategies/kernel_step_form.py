"""The form of one oracle step (checks/device_probe_run.py runs it), and its output shapes from ONNX's shape
inference: the kernel step builders (kernel_steps, kernel_steps_spatial) describe a node, this makes it a step.

The output slots' shapes and dtypes come from onnx.shape_inference on the one-node model of the ONNX form
(every input with values a constant, so shapes that depend on values, Slice's or Tile's, resolve): what
ONNX defines, independent of the kernel and of onnxruntime, which the spec then holds the kernel to.
"""
from __future__ import annotations

import math
import random

import numpy as np
from onnx import helper, numpy_helper, shape_inference


def F(rng: random.Random, shape, lo: float = -3.0, hi: float = 3.0) -> list[float]:
    """Float values for a tensor of ``shape``: multiples of 1/8 in [lo, hi] (exact in float16 and up)."""
    return [rng.randint(math.ceil(lo * 8), math.floor(hi * 8)) / 8 for _ in range(math.prod(shape))]


def I(rng: random.Random, shape, lo: int, hi: int) -> list[int]:  # noqa: E743  (the pair F, I reads well)
    """Integer values in [lo, hi] for a tensor of ``shape``."""
    return [rng.randint(lo, hi) for _ in range(math.prod(shape))]


def omit(rng: random.Random, attrs: dict, **defaults) -> dict:
    """``attrs`` with each one that equals its ONNX default (``defaults``) left out half the time: the kernel
    must apply the default itself."""
    return {k: v for k, v in attrs.items() if k not in defaults or v != defaults[k] or rng.random() < 0.5}


def io(shape, dtype: str = "float32", values=None, *, index: int | None = None, onnx_only: bool = False) -> dict:
    """One input (or output) of a step: ``values`` the input's elements (flat), ``index`` its ONNX position,
    ``onnx_only`` for an ONNX operand the IR holds as an attribute (fed to onnxruntime alone)."""
    return {"shape": list(shape), "dtype": dtype, **({} if values is None else {"values": list(values)}),
            **({} if index is None else {"index": index}), **({"onnx_only": True} if onnx_only else {})}


def step(op: str, inputs: list[dict], attrs: dict, *, opset: int = 13, onnx_attrs: dict | None = None,
         outs: list[dict] | None = None, n_out: int = 1) -> dict:
    """An oracle step of ``op``: the kernel gets ``attrs`` (the IR form) and the inputs not ``onnx_only``;
    onnxruntime gets ``onnx_attrs`` (default: ``attrs`` without the IR's ``_`` ones) and every input.
    ``outs`` default to ONNX's shape inference of the node's ``n_out`` outputs."""
    given = {} if onnx_attrs is None else {"onnx_attrs": onnx_attrs}
    onnx_attrs = {k: v for k, v in (attrs if onnx_attrs is None else onnx_attrs).items() if not k.startswith("_")}
    if outs is None:
        outs = [io(shape, dtype) for shape, dtype in infer(op, inputs, n_out, onnx_attrs, opset)]
    return {"op": "oracle", "kernel": op, "inputs": inputs, "outs": outs, "attrs": attrs, **given, "opset": opset}


def infer(op: str, inputs: list[dict], n_out: int, onnx_attrs: dict, opset: int) -> list[tuple[list[int], str]]:
    """Each output's shape and dtype by ONNX's shape inference (ValueError when it cannot give them)."""
    positions = [x.get("index", k) for k, x in enumerate(inputs)]
    names = [""] * (max(positions) + 1 if positions else 0)
    graph_inputs, constants = [], []
    for p, x in zip(positions, inputs):
        names[p] = f"in{p}"
        dtype = np.dtype(x["dtype"])
        if "values" in x:
            constants.append(numpy_helper.from_array(np.asarray(x["values"]).astype(dtype).reshape(x["shape"]),
                                                     names[p]))
        else:
            graph_inputs.append(helper.make_tensor_value_info(names[p], helper.np_dtype_to_tensor_dtype(dtype),
                                                              x["shape"]))
    outs = [f"out{k}" for k in range(n_out)]
    node = helper.make_node(op, names, outs, **onnx_attrs)
    graph = helper.make_graph([node], "step", graph_inputs, [helper.make_empty_tensor_value_info(o) for o in outs],
                              constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 9)
    inferred = shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    found = {v.name: v.type.tensor_type for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    result = []
    for o in outs:
        t = found.get(o)
        if t is None or not t.HasField("shape") or not all(d.HasField("dim_value") for d in t.shape.dim):
            raise ValueError(f"ONNX shape inference gives no static shape for output {o} of {op} {onnx_attrs}")
        result.append(([d.dim_value for d in t.shape.dim], helper.tensor_dtype_to_np_dtype(t.elem_type).name))
    return result
