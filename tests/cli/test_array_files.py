"""``zcspec run --output-dir`` writes files numpy reads back, whatever the element type (issue 39).

numpy has no type string for ml_dtypes' types: ``np.save`` of a float8 array writes ``'<f1'``, which
``np.load`` refuses. Such outputs are written as raw items (unsigned integers of the item size) with
a JSON beside them naming the ONNX type; ``--input`` takes those raw items back."""
import json

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T, helper

from zcspec.checks.cli import array_files
from zcspec.checks.cli.main import main


def _model(tmp_path):
    """x (float32) -> Cast float8e4m3fn -> f8 and -> Cast int4 -> i4; e (float8 input) -> Cast float32 -> back."""
    nodes = [helper.make_node("Cast", ["x"], ["f8"], to=T.FLOAT8E4M3FN),
             helper.make_node("Cast", ["x"], ["i4"], to=T.INT4),
             helper.make_node("Cast", ["e"], ["back"], to=T.FLOAT)]
    g = helper.make_graph(nodes, "casts",
                          [helper.make_tensor_value_info("x", T.FLOAT, (2, 3)),
                           helper.make_tensor_value_info("e", T.FLOAT8E4M3FN, (4,))],
                          [helper.make_tensor_value_info("f8", T.FLOAT8E4M3FN, (2, 3)),
                           helper.make_tensor_value_info("i4", T.INT4, (2, 3)),
                           helper.make_tensor_value_info("back", T.FLOAT, (4,))])
    path = tmp_path / "casts.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)]), path)
    return path


def test_outputs_numpy_cannot_name_are_written_as_raw_items_numpy_loads(tmp_path, capsys):
    x = np.array([[-1.5, 0.25, 3.0], [7.0, -6.0, 0.0]], np.float32)
    np.save(tmp_path / "x.npy", x)
    e = np.array([0.5, -2.0, 448.0, 0.0], ml_dtypes.float8_e4m3fn)
    np.save(tmp_path / "e.npy", e.view(np.uint8))   # the raw items, as --output-dir writes them
    code = main(["run", str(_model(tmp_path)), "--input", f"x={tmp_path / 'x.npy'}",
                 "--input", f"e={tmp_path / 'e.npy'}", "--output-dir", str(tmp_path / "o")])
    out, err = capsys.readouterr()
    assert code == 0, err
    f8 = np.load(tmp_path / "o" / "f8.npy")   # np.load would raise on a '<f1' header
    assert f8.dtype == np.uint8 and f8.shape == (2, 3)
    assert json.loads((tmp_path / "o" / "f8.json").read_text()) == {
        "onnx_type": "float8e4m3fn", "stored_as": "uint8", "shape": [2, 3]}
    np.testing.assert_array_equal(f8.view(ml_dtypes.float8_e4m3fn).astype(np.float32),
                                  x.astype(ml_dtypes.float8_e4m3fn).astype(np.float32))
    i4 = np.load(tmp_path / "o" / "i4.npy")
    assert json.loads((tmp_path / "o" / "i4.json").read_text())["onnx_type"] == "int4"
    np.testing.assert_array_equal(i4.view(ml_dtypes.int4).astype(np.int8), [[-1, 0, 3], [7, -6, 0]])   # onnx.reference truncates
    back = np.load(tmp_path / "o" / "back.npy")   # float32: a plain .npy, no JSON beside it
    np.testing.assert_array_equal(back, e.astype(np.float32))
    assert not (tmp_path / "o" / "back.json").exists()


def test_an_input_of_the_wrong_raw_size_is_refused_naming_both_forms(tmp_path, capsys):
    np.save(tmp_path / "e.npy", np.zeros(4, np.uint16))
    code = main(["run", str(_model(tmp_path)), "--input", f"e={tmp_path / 'e.npy'}"])
    err = capsys.readouterr().err
    assert code == 2 and "'e'" in err and "float8e4m3fn[4]" in err and "raw items as uint8" in err


@pytest.mark.parametrize("dt", [np.float32, np.int64, np.bool_, np.float16, np.complex64])
def test_types_numpy_names_are_readable(dt):
    assert array_files.npy_readable(np.dtype(dt))


@pytest.mark.parametrize("dt", [ml_dtypes.float8_e4m3fn, ml_dtypes.bfloat16, ml_dtypes.int4, ml_dtypes.float4_e2m1fn])
def test_ml_dtypes_types_are_not(dt):
    assert not array_files.npy_readable(np.dtype(dt))
