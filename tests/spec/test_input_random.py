"""INPUT-RANDOM-REFUSED: a front end that imports a random node fails verify through the claim.

Before it, only the front-end cases' expectations said that a random node must not import: a front end
that took a training-mode Dropout for the identity passed every claim. (The mutation run's
onnx_nodes.py:190 is not of this kind: without its refusal the Dropout is still refused, by the training-
mode limit, with another error class than the case expects.) The claim reads the file (op types, Dropout's is_test and ratio attributes, its
training_mode and ratio constants) and the import's outcome, never the front end's op limits."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

from zcspec.checks.input_file_observer import observe_input_file, outcome_of
from zcspec.impl.compiler.frontend import onnx_nodes
from zcspec.spec.registry import get
from tests.helpers.frontend_cases import run_cases

CLAIM = "INPUT-RANDOM-REFUSED"
RANDOM_CASES = ("dropout_training_default_ratio", "dropout_ratio_from_input", "random_never_folds")


def test_the_real_front_end_refuses_each_random_case_and_the_claim_is_exercised(monkeypatch):
    out = run_cases(monkeypatch, *RANDOM_CASES, "dropout_inference_mask_output")
    assert not out.errors, out.errors
    assert not any(CLAIM in ids for ids in out.findings.values()), out.findings


def test_a_front_end_that_takes_every_dropout_for_the_identity_fails_through_the_claim(monkeypatch):
    monkeypatch.setattr(onnx_nodes, "dropout_is_identity", lambda node, consts: True)
    out = run_cases(monkeypatch, "dropout_training_default_ratio", "dropout_ratio_from_input")
    for name in ("dropout_training_default_ratio", "dropout_ratio_from_input"):
        assert CLAIM in out.findings[f"front-end case {name}"], out.findings


def _dropout_file(tmp_path, opset: int, inputs, inits=(), **attributes) -> str:
    node = helper.make_node("Dropout", inputs, ["y"], name="drop", **attributes)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])], list(inits))
    path = tmp_path / f"dropout{opset}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return str(path)


def _init(name, value):
    return onnx.numpy_helper.from_array(np.array(value), name)


@pytest.mark.parametrize("opset, inputs, inits, attributes, random", [
    (6, ["x"], (), {}, True),                              # is_test defaults to 0: training mode, ratio 0.5
    (6, ["x"], (), {"is_test": 1}, False),
    (6, ["x"], (), {"ratio": 0.0}, False),                 # training mode dropping nothing
    (10, ["x"], (), {"ratio": 0.3}, False),                # opsets 7-11: no training mode
    (13, ["x"], (), {}, False),                            # training_mode omitted: false
    (13, ["x", "r", "m"], (_init("r", np.float32(0.2)), _init("m", False)), {}, False),
    (13, ["x", "r", "m"], (_init("r", np.float32(0.0)), _init("m", True)), {}, False),
    (13, ["x", "r", "m"], (_init("r", np.float32(0.2)), _init("m", True)), {}, True),
    (13, ["x", "", "m"], (_init("m", True),), {}, True),   # the ratio omitted: 0.5
])
def test_which_dropouts_are_random(tmp_path, opset, inputs, inits, attributes, random):
    obs = observe_input_file(_dropout_file(tmp_path, opset, inputs, inits, **attributes), outcome_of(None))
    assert bool(get(CLAIM).violations(obs)) is random
    assert get(CLAIM).exercised(obs) is random


def test_a_training_mode_known_only_at_run_time_is_random(tmp_path):
    path = _dropout_file(tmp_path, 13, ["x", "", "m"])
    model = onnx.load(path)
    model.graph.input.append(helper.make_tensor_value_info("m", onnx.TensorProto.BOOL, []))
    onnx.save(model, path)
    (v,) = get(CLAIM).violations(observe_input_file(path, outcome_of(None)))
    assert "training_mode 'm' is known only at run time" in v.message and v.values["names"] == ["drop"]
