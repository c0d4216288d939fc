"""``zcspec verify MODEL.onnx``: the model's dynamic dims fixed with --shape, inputs frozen with --value, both
runtimes judged against onnxruntime on the file itself, and what one model cannot reach listed, not failed."""
import numpy as np
from onnx import TensorProto, helper

from zcspec.checks.cli.main import main
from zcspec.checks.errors import OracleUnavailable
from zcspec.checks.execution import judge
from zcspec.checks.execution.differential import observe_differential
from zcspec.checks.onnxruntime_oracle import onnxruntime_outputs
from zcspec.impl.compiler.compile import build_model
from zcspec.impl.compiler.frontend.onnx_import import from_model
from tests.helpers.onnx_factory import init, model, save, vi


def _gated_model():
    """HardSwish (an opset-14 op) behind an If on a sample-rate input, the Silero VAD pattern."""
    branch = lambda op, name: helper.make_graph(  # noqa: E731
        [helper.make_node(op, ["x"], ["out"])], name, [], [vi("out", ["n", 4])])
    nodes = [helper.make_node("Equal", ["sr", "k16"], ["c"]),
             helper.make_node("If", ["c"], ["h"], then_branch=branch("HardSwish", "t"), else_branch=branch("Neg", "e")),
             helper.make_node("Relu", ["h"], ["y"])]
    inputs = [vi("x", ["n", 4]), vi("sr", [], TensorProto.INT64)]
    return model(nodes, inputs, [vi("y", ["n", 4])], [init("k16", np.array(16000, np.int64))], opset=14)


def test_the_oracle_is_onnxruntime_on_the_file(tmp_path):
    path = save(_gated_model(), tmp_path, "gated.onnx")
    x = np.linspace(-4, 4, 8, dtype=np.float32).reshape(2, 4)
    got = onnxruntime_outputs(path, {"x": x}, {"sr": 16000})["y"]
    np.testing.assert_allclose(got, np.maximum(x * np.clip(x / 6 + 0.5, 0, 1), 0), rtol=1e-6)


def test_verify_a_user_model_with_shape_and_value(tmp_path, capsys):
    path = save(_gated_model(), tmp_path, "gated.onnx")
    code = main(["verify", path, "--shape", "x=2x4", "--value", "sr=16000", "--examples", "0", "--quiet",
                 "--no-proofs"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "EXEC-ORACLE" in out and "not exercised by these models" in out


def test_the_differential_run_of_a_model_file_is_judged_by_onnxruntime(tmp_path, monkeypatch):
    path = save(_gated_model(), tmp_path, "gated.onnx")
    graph = from_model(_gated_model(), shapes={"x": (2, 4)}, values={"sr": 16000})
    compiled = build_model(graph)
    run = {"runtime": "differential", "zero_copy": True}

    def no_reference(*args, **kwargs):
        raise OracleUnavailable("onnx.reference stubbed out")

    # With onnx.reference on the imported graph out of the way: no oracle without the file, onnxruntime's with it.
    monkeypatch.setattr(judge, "oracle_outputs", no_reference)
    without = observe_differential(graph, compiled, run)
    with_file = observe_differential(graph, compiled, {**run, "onnx": path, "values": {"sr": 16000}})
    assert all(o.oracle_max_abs_diff is None for obs in without for o in obs.outputs)
    assert all(o.oracle_max_abs_diff is not None and o.oracle_max_abs_diff < 1e-6
               for obs in with_file for o in obs.outputs)


def test_verify_refuses_a_data_dependent_if_naming_the_input(tmp_path, capsys):
    path = save(_gated_model(), tmp_path, "gated.onnx")
    assert main(["verify", path, "--shape", "x=2x4", "--examples", "0", "--quiet"]) == 2
    assert "--value ('sr')" in capsys.readouterr().err
