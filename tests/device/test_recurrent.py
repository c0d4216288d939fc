"""LSTM and GRU: ONNX models with omitted optional inputs, imported, compiled and run through both runtimes,
against onnxruntime (float32 to 1e-5)."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from zcspec.checks.oracle import oracle_outputs
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.frontend.errors import UnsupportedFeatureError
from zcspec.impl.compiler.frontend.onnx_import import from_model
from zcspec.impl.device import Device
from zcspec.impl.runtime.user_buffers import alloc_outputs, free_buffers, read_outputs, stage_inputs
from zcspec.impl.runtime.v1 import load
from zcspec.impl.runtime.v2.runner import run as run_v2
from tests.helpers.onnx_factory import init, model, vi

SEQ, BATCH, IN, HID = 5, 2, 4, 3


def _recurrent_model(op: str, direction: str, *, with_state: bool, **attrs):
    rng = np.random.default_rng(7)
    dirs = 2 if direction == "bidirectional" else 1
    gates = 4 if op == "LSTM" else 3
    w = init("W", rng.standard_normal((dirs, gates * HID, IN)).astype(np.float32) * 0.5)
    r = init("R", rng.standard_normal((dirs, gates * HID, HID)).astype(np.float32) * 0.5)
    b = init("B", rng.standard_normal((dirs, 2 * gates * HID)).astype(np.float32) * 0.1)
    inputs = [vi("X", [SEQ, BATCH, IN])]
    names = ["X", "W", "R", "B", ""]          # sequence_lens omitted, initial state after it
    if with_state:
        names += ["h0"] + (["c0"] if op == "LSTM" else [])
        inputs += [vi("h0", [dirs, BATCH, HID])] + ([vi("c0", [dirs, BATCH, HID])] if op == "LSTM" else [])
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, names, outputs, hidden_size=HID, direction=direction, **attrs)
    shapes = {"Y": [SEQ, dirs, BATCH, HID], "Y_h": [dirs, BATCH, HID], "Y_c": [dirs, BATCH, HID]}
    if attrs.get("layout"):   # batch first
        inputs = [vi("X", [BATCH, SEQ, IN])] + [vi(v.name, [BATCH, dirs, HID]) for v in inputs[1:]]
        shapes = {"Y": [BATCH, SEQ, dirs, HID], "Y_h": [BATCH, dirs, HID], "Y_c": [BATCH, dirs, HID]}
    return model([node], inputs, [vi(o, shapes[o]) for o in outputs], [w, r, b], opset=14), dirs


def _feeds(m):
    rng = np.random.default_rng(1)
    return {i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
            for i in m.graph.input}


def _ours(m, feeds) -> tuple[dict, dict]:
    compiled = build_model(from_model(m))
    dev = Device(compiled.soc)
    lm = load(dev, compiled)
    ins, outs = stage_inputs(dev, compiled, feeds), alloc_outputs(dev, compiled)
    lm.execute(ins, outs)
    got_v1 = read_outputs(dev, compiled, outs)
    free_buffers(dev, outs)
    outs = alloc_outputs(dev, compiled)
    run_v2(compiled, dev, ins, outs, zero_copy=True)
    return got_v1, read_outputs(dev, compiled, outs)


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("with_state", [True, False])
def test_recurrent_layers_match_onnxruntime(op, direction, with_state):
    m, _ = _recurrent_model(op, direction, with_state=with_state)
    feeds = _feeds(m)
    want = dict(zip([o.name for o in m.graph.output],
                    ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)))
    for got in _ours(m, feeds):
        for name, w in want.items():
            np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-5, err_msg=f"{op} {direction} {name}")


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
@pytest.mark.parametrize("layout", [0, 1])
def test_an_omitted_y_and_the_batch_first_layout(op, layout):
    """Y omitted, Y_h given (the IR names the omitted output itself). onnxruntime has no layout 1:
    the reference is ONNX's own implementation there."""
    m, _ = _recurrent_model(op, "bidirectional", with_state=True, layout=layout)
    del m.graph.output[0]
    m.graph.node[0].output[0] = ""
    feeds = _feeds(m)
    if layout:
        want = ReferenceEvaluator(m).run(None, feeds)
    else:
        want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for got in _ours(m, feeds):
        np.testing.assert_allclose(got["Y_h"], want[0], rtol=1e-5, atol=1e-5)


def test_gru_linear_before_reset_and_clip():
    m, _ = _recurrent_model("GRU", "forward", with_state=True, linear_before_reset=1, clip=0.5)
    feeds = _feeds(m)
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for got in _ours(m, feeds):
        np.testing.assert_allclose(got["Y"], want[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attrs, named", [({"activations": ["Tanh", "Tanh", "Tanh"]}, "activations"),
                                          ({"input_forget": 1}, "input_forget")])
def test_an_unsupported_attribute_is_refused_at_import_naming_it(attrs, named):
    m, _ = _recurrent_model("LSTM", "forward", with_state=False, **attrs)
    with pytest.raises(UnsupportedFeatureError, match=f"node 'LSTM_0': LSTM attribute {named}="):
        from_model(m)


def test_the_oracle_puts_omitted_inputs_back_in_their_positions():
    m, _ = _recurrent_model("LSTM", "bidirectional", with_state=True)
    feeds = _feeds(m)
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = oracle_outputs(from_model(m), feeds)
    np.testing.assert_allclose(got["Y_h"], want[1], rtol=1e-5, atol=1e-5)
