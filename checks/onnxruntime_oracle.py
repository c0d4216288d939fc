"""onnxruntime as the oracle of an ONNX model file: the original file, run on the same inputs.

``zcspec verify MODEL.onnx`` judges both runtimes against what onnxruntime computes from the file the
user gave (not from zcspec's import of it), with the inputs frozen by ``--value`` fed as they were
frozen. onnxruntime is a test extra: without it, ``OracleUnavailable`` says so and the differential
run falls back to ``onnx.reference`` on the imported graph.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from zcspec.checks.errors import OracleUnavailable
from zcspec.impl.platform import dtypes


def onnxruntime_outputs(path: str, inputs: Mapping[str, np.ndarray], values: Mapping[str, object]) -> dict:
    """Output name -> array of the model file ``path`` run by onnxruntime on ``inputs`` plus ``values``."""
    try:
        import onnxruntime  # an optional dependency (the test extra): imported only when a file is judged
    except ImportError as e:
        raise OracleUnavailable(f"onnxruntime is not installed ({e}): pip install 'zcspec[test]'") from e
    try:
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        feeds = dict(inputs)
        declared = {i.name: i.type for i in session.get_inputs()}
        for name, value in values.items():
            dtype = np.int64 if "int64" in declared.get(name, "") else (
                np.int32 if "int32" in declared.get(name, "") else np.float32)
            feeds[name] = np.asarray(value, dtype)
        names = [o.name for o in session.get_outputs()]
        types = [o.type for o in session.get_outputs()]
        return {n: _as_declared(a, t) for n, a, t in zip(names, session.run(names, feeds), types)}
    except Exception as e:  # onnxruntime refuses the file or the feeds: no oracle, said why
        raise OracleUnavailable(f"onnxruntime cannot run {path!r}: {type(e).__name__}: {e}") from e


def _as_declared(array: np.ndarray, declared: str) -> np.ndarray:
    """``array`` as the element type ``declared`` ("tensor(float8e4m3fn)"): onnxruntime hands float8e4m3fn
    back as its raw bytes (uint8), which would differ from any correct output in dtype alone."""
    name = declared[len("tensor("):-1] if declared.startswith("tensor(") else ""
    name = {"float": "float32", "double": "float64"}.get(name, name)
    if name not in dtypes.DTYPES:
        return array
    want = np.dtype(dtypes.numpy_dtype(name))
    if array.dtype != want and array.dtype.kind in "ui" and array.dtype.itemsize == want.itemsize:
        return array.view(want)
    return array


def onnxruntime_node(op_type: str, inputs, n_outputs: int, attrs: Mapping[str, object], opset: int = 13) -> list:
    """The outputs onnxruntime computes for a one-node model of ``op_type`` (ONNX attributes ``attrs``) on
    ``inputs`` (arrays; None for a skipped optional input). OracleUnavailable when onnxruntime is missing;
    any exception onnxruntime raises (it refuses the node or its inputs) propagates."""
    try:
        import onnxruntime
        from onnx import helper
    except ImportError as e:
        raise OracleUnavailable(f"onnxruntime is not installed ({e}): pip install 'zcspec[test]'") from e
    names = [f"in{i}" if a is not None else "" for i, a in enumerate(inputs)]
    while names and not names[-1]:
        names.pop()
    outs = [f"out{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outs, **dict(attrs))
    graph = helper.make_graph(
        [node], "node", [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                         for n, a in zip(names, inputs) if a is not None],
        [helper.make_empty_tensor_value_info(o) for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 9)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 4
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(outs, {n: a for n, a in zip(names, inputs) if a is not None})
