"""Bad models on the command line: exit code 2 and a message naming the culprit."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from zcspec.checks.cli.main import main
from zcspec.impl.compiler import graph_json
from zcspec.impl.compiler.builder import GraphBuilder
from tests.helpers.onnx_factory import light_path, malformed, save


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_errors_doc_examples_run():
    doc = Path(__file__).resolve().parents[2] / "docs" / "errors.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S)
    assert blocks
    for code in blocks:
        exec(compile(code, str(doc), "exec"), {})


def test_bad_input_from_the_platform_exits_2_like_any_other(tmp_path, capsys):
    """An unknown SoC profile is the platform's UnknownSocError (no longer a GraphError): still exit 2."""
    path = tmp_path / "g.json"
    b = GraphBuilder("g")
    b.output(b.op("Relu", [b.input("x", (4,))]))
    path.write_text(graph_json.to_json(b.build()))
    code, _, err = run(capsys, "plan", str(path), "--soc", "ascend9000")
    assert code == 2
    assert "unknown SoC profile 'ascend9000'" in err and "ascend910b" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["compile", "run"])
def test_a_graph_the_compiler_refuses_is_named_by_its_file(tmp_path, capsys, command):
    """A refusal at compile time (a set size, which no model file records) names the file, as one at reading
    does."""
    path = tmp_path / "sized.json"
    b = GraphBuilder("sized")
    b.output(b.op("Relu", [b.input("x", (4,))], name="relu"))
    g = {**json.loads(graph_json.to_json(b.build())), "version": 3}
    for t in g["tensors"]:
        if t["name"] == "relu:0":
            t["size"] = 64
    path.write_text(json.dumps(g))
    extra = ["-o", str(tmp_path / "m.zcm")] if command == "compile" else []
    code, _, err = run(capsys, command, str(path), *extra)
    assert code == 2 and f"{path}: tensor 'relu:0' has set size 64 bytes" in err, err


def test_truncated_onnx_file(tmp_path, capsys):
    path = tmp_path / "cut.onnx"
    path.write_bytes(open(light_path("bvlc_alexnet"), "rb").read()[:2000])
    code, _, err = run(capsys, "summary", str(path))
    assert code == 2
    assert str(path) in err and "truncated or corrupt" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("kind, culprits", [
    ("cycle", ["'loop_add'", "'loop_relu'", "cycle"]),
    ("missing", ["'adder'", "'ghost'"]),
    ("unknown_op", ["'frob'", "'FrobnicateXYZ'"]),
    ("dynamic", ["'x'", "--shape x=1x4"]),
])
def test_malformed_models(tmp_path, capsys, kind, culprits):
    m, _ = malformed(kind)
    path = save(m, tmp_path, f"{kind}.onnx")
    code, _, err = run(capsys, "summary", path)
    assert code == 2
    assert path in err
    for c in culprits:
        assert c in err


def test_shape_fixes_the_dynamic_model(tmp_path, capsys):
    m, _ = malformed("dynamic")
    path = save(m, tmp_path, "dynamic.onnx")
    code, out, _ = run(capsys, "summary", path, "--shape", "x=3x4", "--json")
    assert code == 0
    assert json.loads(out)["inputs"] == {"x": [3, 4]}


def test_shape_for_an_unknown_input(tmp_path, capsys):
    m, _ = malformed("dynamic")
    path = save(m, tmp_path, "dynamic.onnx")
    code, _, err = run(capsys, "summary", path, "--shape", "x=3x4", "--shape", "data=1x3")
    assert code == 2 and "'data'" in err and "'x'" in err


def test_zoo_model_summary(capsys):
    code, out, _ = run(capsys, "summary", "zoo:bvlc_alexnet", "--json")
    info = json.loads(out)
    assert code == 0 and info["ops"]["Conv"] == 5 and "ConstantOfShape" not in info["ops"]
