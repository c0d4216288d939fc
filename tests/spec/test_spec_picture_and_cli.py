"""The plan picture and the `zcspec spec` command."""
from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest

from zcspec.checks.cli.main import main
from zcspec.spec.errors import ObservationFormatError, SpecError
from zcspec.spec.examples import all_examples
from zcspec.spec.examples.build import plan
from zcspec.spec.observables import to_data
from zcspec.spec.picture import plan_svg, render_plan

SVG = "{http://www.w3.org/2000/svg}"


def _rects_with_titles(svg: str):
    root = ET.fromstring(svg)
    return [r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]


def test_one_rectangle_per_tensor_and_a_red_box_per_overlap(tmp_path):
    contract = to_data(all_examples()["LAYOUT-NO-OVERLAP"].violates)  # the plan contract as a dict
    path = render_plan(contract, str(tmp_path / "plan.svg"), title="t")
    with open(path, encoding="utf-8") as f:
        svg = f.read()
    titles = [r.find(f"{SVG}title").text for r in _rects_with_titles(svg)]
    assert sum(t.startswith(("a:", "b:", "c:")) for t in titles) == 3
    assert titles.count("a and c overlap") == 1
    assert "address in model memory" in svg and "legend" in svg


def test_picture_is_deterministic_and_stacks_zero_copy_after_the_feature_map():
    p = plan([("a", "feature_map", 0, 512, 0, 1), ("y", "zero_copy", 0, 512, 1, 1)], graph_outputs=("y",))
    assert plan_svg(p) == plan_svg(p)
    rects = {r.find(f"{SVG}title").text.split(":")[0]: float(r.get("y")) for r in _rects_with_titles(plan_svg(p))}
    assert rects["y"] < rects["a"]  # higher address is drawn higher up


def test_picture_of_a_large_plan_is_quick_and_complete():
    rows = [(f"t{i}", "feature_map", 512 * (i % 50), 512, i, i + 3) for i in range(400)]
    assert len(_rects_with_titles(plan_svg(plan(rows)))) == 400


def test_render_plan_wants_svg_and_a_wellformed_contract(tmp_path):
    with pytest.raises(SpecError, match=r"\.svg"):
        render_plan({}, str(tmp_path / "p.png"))
    with pytest.raises(ObservationFormatError, match="missing required key 'order'"):
        render_plan({}, str(tmp_path / "p.svg"))


def test_cli_check_observation_exit_codes(tmp_path, capsys):
    ex = all_examples()["MEM-ZC-NOMERGE"]
    good, bad, broken = tmp_path / "good.json", tmp_path / "bad.json", tmp_path / "broken.json"
    good.write_text(json.dumps(to_data(ex.satisfies)))
    bad.write_text(json.dumps(to_data(ex.violates)))
    broken.write_text(json.dumps({"order": [], "tensors": [{"name": "x"}]}))
    assert main(["spec", "--observation", str(good)]) == 0
    assert main(["spec", "--observation", str(bad)]) == 1
    assert "MEM-ZC-NOMERGE: block 0" in capsys.readouterr().out
    assert main(["spec", "--observation", str(broken)]) == 2
    assert "broken.json: tensors[0]: missing required key" in capsys.readouterr().err


def test_cli_render_and_check_round_trip(tmp_path, capsys):
    out, html = tmp_path / "SPEC.md", tmp_path / "SPEC.html"
    args = ["spec", "--out", str(out), "--html", str(html)]
    assert main(args + ["--check"]) == 1  # nothing written yet
    assert main(args) == 0
    assert main(args + ["--check"]) == 0
    assert os.path.exists(tmp_path / "spec" / "LAYOUT-NO-OVERLAP-violates.svg")
    out.write_text(out.read_text() + "edited\n")
    assert main(args + ["--check"]) == 1
    assert "stale:" in capsys.readouterr().out
