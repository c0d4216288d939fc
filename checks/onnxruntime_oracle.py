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
        return dict(zip(names, session.run(names, feeds)))
    except Exception as e:  # onnxruntime refuses the file or the feeds: no oracle, said why
        raise OracleUnavailable(f"onnxruntime cannot run {path!r}: {type(e).__name__}: {e}") from e
