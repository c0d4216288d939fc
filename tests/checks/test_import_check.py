"""Judging someone else's front end by the input-file claims (checks/import_check.py, docs/frontend.md)."""
from __future__ import annotations

import json

import onnx
import pytest
from onnx import TensorProto, helper

from zcspec.checks.cli.main import main
from zcspec.checks.import_check import crafted_files, judge_import
from zcspec.checks.input_file_observer import observe_input_file, outcome_of
from zcspec.checks.models import load_graph
from zcspec.spec.observables import codec


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[str]:
    return crafted_files(str(tmp_path_factory.mktemp("crafted")))


def _verdicts(files, importer) -> dict[str, tuple[str, ...]]:
    out = {}
    for path in files:
        report = judge_import(path, importer)
        if report is not None and report.violations:
            out[path.rsplit("/", 1)[-1]] = report.violated()
    return out


def test_zcspecs_own_front_end_breaks_no_claim_on_the_crafted_files(files):
    assert len(files) > 200 and {f.rsplit(".", 1)[-1] for f in files} == {"onnx", "json"}
    assert _verdicts(files, load_graph) == {}


def test_a_front_end_that_takes_everything_breaks_every_refusal_claim(files):
    verdicts = _verdicts(files, lambda path: None)
    broken = {claim for found in verdicts.values() for claim in found}
    assert broken == {"INPUT-ARITY-REFUSED", "INPUT-UNKNOWN-OP-REFUSED", "INPUT-CYCLE-REFUSED",
                      "INPUT-DANGLING-REFUSED", "INPUT-ONE-WRITER-REFUSED", "INPUT-STATIC-SHAPE-REFUSED",
                      "INPUT-FORMAT-REFUSED", "INPUT-RANDOM-REFUSED"}


def test_onnx_checker_as_a_static_front_end(files):
    """ONNX's own checker (full check) as the import of a static planner: it lets through ops of other
    domains, which it does not know, and its refusals of a dim that is not fixed name no tensor."""
    def checker(path):
        onnx.checker.check_model(onnx.load(path), full_check=True)

    verdicts = _verdicts([f for f in files if f.endswith(".onnx")], checker)
    assert verdicts["onnx_ml_op.onnx"] == ("INPUT-UNKNOWN-OP-REFUSED",)
    assert verdicts["non_standard_domain_never_folds.onnx"] == ("INPUT-UNKNOWN-OP-REFUSED",)
    assert verdicts["dynamic_dim_named.onnx"] == ("INPUT-REFUSAL-NAMES-FAULT",)
    assert "INPUT-ARITY-REFUSED" not in {c for found in verdicts.values() for c in found}


def test_only_the_named_refusals_are_refusals(tmp_path):
    path = str(tmp_path / "m.onnx")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    onnx.save(helper.make_model(helper.make_graph([helper.make_node("Relu", ["x", "x"], ["y"], name="r")], "g", [x],
                                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])), path)

    def crashes(_):
        raise KeyError("r")

    assert judge_import(path, crashes).ok   # a KeyError naming the node: a refusal by default
    with pytest.raises(KeyError):
        judge_import(path, crashes, refusals=(ValueError,))
    assert judge_import(path, lambda p: None).violated() == ("INPUT-ARITY-REFUSED",)


def test_an_input_file_observation_is_checked_from_the_command_line(tmp_path, files, capsys):
    """`zcspec spec --observation` tells an input-file observation by its keys and exits 1 on a violation."""
    path = next(f for f in files if f.endswith("onnx_ml_op.onnx"))
    obs = tmp_path / "obs.json"
    obs.write_text(codec.dumps(observe_input_file(path, outcome_of(None))))
    assert json.loads(obs.read_text())["format"] == "onnx"
    assert main(["spec", "--observation", str(obs)]) == 1
    assert "INPUT-UNKNOWN-OP-REFUSED" in capsys.readouterr().out
    obs.write_text(codec.dumps(observe_input_file(path, outcome_of(ValueError("node 'scale': ai.onnx.ml")))))
    assert main(["spec", "--observation", str(obs)]) == 0
