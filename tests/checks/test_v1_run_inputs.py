"""Runtime v1 runs can feed all-ones inputs: ONNX's light zoo models are judged on those.

On standard normal inputs light squeezenet's logits reach about 6.8e9, where a float32 ulp is 512:
onnx.reference and onnxruntime then disagree by one ulp on some logits, and the softmax that follows
turns that into a difference of 0.001 (32 of 1000 classes at 0). No oracle can judge such a call, and
verify's caller-memory case for squeezenet (two calls, the second on fresh standard normal inputs)
reported EXEC-ORACLE on a correct runtime. On all-ones inputs onnx.reference on the graph still differs
from onnxruntime on the file by 0.03, so the zoo's runs name the file: onnxruntime is their oracle."""
from __future__ import annotations

import numpy as np
import pytest

from zcspec.checks.errors import ScenarioError
from zcspec.checks.execution import v1 as run_v1
from zcspec.checks.execution import v1_options
from zcspec.checks.execution.entries import entry
from zcspec.checks.verify import VerifyConfig
from zcspec.checks.verify_cases import zoo_cases
from zcspec.impl.device import Device

from tests.helpers.runtime_v2 import compiled, relu_neg_graph


def test_ones_inputs_are_all_ones_and_normal_ones_are_drawn():
    model = compiled(relu_neg_graph())
    for inputs, want_ones in (("ones", True), ("normal", False)):
        dev = Device(model.soc)
        held = run_v1._buffers(dev, entry(dev, {}), model, {"inputs": inputs}, np.random.default_rng(0))
        arrays = list(held.arrays.values())
        assert arrays and all(np.all(a == 1) == want_ones for a in arrays)


def test_a_bad_inputs_value_is_refused_naming_the_key():
    with pytest.raises(ScenarioError) as info:
        v1_options.options_of({"runtime": "v1", "inputs": "zeros"})
    assert info.value.key == "inputs" and "'zeros'" in str(info.value)


def test_verify_runs_the_zoo_models_caller_memory_loads_on_ones():
    cases = [(c, s) for c, s in zoo_cases(VerifyConfig(models=("zoo:squeezenet", "builtin:constants"),
                                                         proofs=False)) if "caller" in c]
    zoo = [s.runtime["runs"][0] for c, s in cases if c.startswith("zoo:")]
    builtin = [s.runtime["runs"][0] for c, s in cases if c.startswith("builtin:")]
    assert zoo and all(r.get("inputs") == "ones" and r["onnx"].endswith("light_squeezenet.onnx") for r in zoo)
    assert builtin and all("inputs" not in r and "onnx" not in r for r in builtin)
