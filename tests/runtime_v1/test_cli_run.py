"""``zcspec run``: outputs written as .npy, --json counters of the execute call alone, exit code 2 on bad input."""
import json

import numpy as np

from zcspec.checks.cli.main import main
from zcspec.impl.compiler.builder import GraphBuilder
from zcspec.impl.compiler.graph_json import to_json
from zcspec.impl.compiler.model_file.encode import encode
from tests.helpers.runtime_v1 import mlp


def graph_file(tmp_path):
    b = GraphBuilder("cli")
    x = b.input("in/x", (2, 3))
    b.output(b.op("Neg", [b.op("Relu", [x], name="r")], name="out/neg"))
    path = tmp_path / "g.json"
    path.write_text(to_json(b.build()))
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_run_json_zero_copy_on_and_off(tmp_path, capsys):
    g = graph_file(tmp_path)
    x = tmp_path / "x.npy"
    np.save(x, np.array([[-1, 2, -3], [4, -5, 6]], np.float32))
    code, out, err = run(capsys, "run", g, "--json", "--input", f"in/x={x}", "--output-dir", tmp_path / "o")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["outputs"] == {"out/neg:0": {"shape": [2, 3], "dtype": "float32"}}
    c = doc["counters"]
    assert (c["h2d_bytes"], c["d2h_bytes"], c["d2d_bytes"], c["args_refreshed"]) == (0, 0, 0, 2)
    assert c["kernel_launches"] == 2
    got = np.load(tmp_path / "o" / "out_neg:0.npy")
    np.testing.assert_array_equal(got, -np.maximum(np.load(x), 0))
    code, out, _ = run(capsys, "run", g, "--json", "--no-zero-copy")
    c = json.loads(out)["counters"]
    assert (c["d2d_bytes"], c["args_refreshed"]) == (48, 0)


def test_run_compiled_model_file(tmp_path, capsys):
    path = tmp_path / "m.zcm"
    path.write_bytes(encode(mlp()))
    code, out, err = run(capsys, "run", path)
    assert code == 0, err
    assert "relu:0: float32[2, 3]" in out and "neg:0: float32[2, 3]" in out


def test_run_bad_input_exits_2_naming_it(tmp_path, capsys):
    g = graph_file(tmp_path)
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((3, 3), np.float32))
    code, _, err = run(capsys, "run", g, "--input", f"in/x={bad}")
    assert code == 2 and "in/x" in err and "[3, 3]" in err
    code, _, err = run(capsys, "run", g, "--input", f"nope={bad}")
    assert code == 2 and "'nope' is not a model input" in err
    code, _, err = run(capsys, "run", tmp_path / "missing.zcm")
    assert code == 2 and "missing.zcm" in err


def test_run_v2_counts_the_execute_call_alone(tmp_path, capsys):
    g = graph_file(tmp_path)
    for flag, d2d in (("", 0), ("--no-zero-copy", 24)):
        code, out, err = run(capsys, "run", g, "--runtime", "v2", "--json", *([flag] if flag else []),
                             "--output-dir", tmp_path / "v2")
        assert code == 0, err
        c = json.loads(out)["counters"]
        assert (c["h2d_bytes"], c["d2h_bytes"], c["d2d_bytes"], c["kernel_launches"]) == (0, 0, d2d, 2)
    np.testing.assert_array_equal(np.load(tmp_path / "v2" / "out_neg:0.npy"), -np.ones((2, 3), np.float32))
