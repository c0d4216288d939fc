"""benchmarks/observation_fields.py: a field whose change some claim sees is told from one no claim reads."""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.observation_fields import field_paths, main, perturb, run  # noqa: E402
from zcspec.spec.observables import PlanObservation, to_data  # noqa: E402
from zcspec.spec.observables.plan import Block, PlacedTensor  # noqa: E402


def _plan(**kw) -> PlanObservation:
    a = PlacedTensor("a", "feature_map", 0, 512, 512, 0, 1, 0, False)
    b = PlacedTensor("b", "feature_map", 512, 512, 512, 1, 2, 1, False)
    blocks = (Block(0, "feature_map", 0, 512, False, ("a",)), Block(1, "feature_map", 512, 512, False, ("b",)))
    return PlanObservation(order=("n0", "n1", "n2"), tensors=(a, b), blocks=blocks, regions={"feature_map": 1024},
                           **kw)


def test_fields_are_named_down_to_their_leaves():
    names = {"".join(p if isinstance(p, str) else f"[{p}]" for p in path) for path, _ in field_paths(PlanObservation)}
    assert {"tensors[]offset", "blocks[]tensors[]", "regions{}"} <= names


def test_perturb_changes_every_leaf_or_one():
    data = to_data(_plan())
    path = ("tensors", "[]", "offset")
    assert [t["offset"] for t in perturb(data, path, int, None)["tensors"]] == [1, 1025]
    assert [t["offset"] for t in perturb(data, path, int, 1)["tensors"]] == [0, 513]
    assert data["tensors"][1]["offset"] == 512   # the original is left as it was


def test_a_seen_field_and_an_unseen_one(tmp_path):
    line = {"case": "two tensors", "observations": [to_data(_plan(naive=1024))]}
    (tmp_path / "zoo.jsonl").write_text(json.dumps(line) + "\n")
    crashes: dict = {}
    rows = {r["field"]: r for r in run(tmp_path, 4, 0, ["plan"], crashes)}
    # an offset moved onto the other tensor's bytes: LAYOUT-NO-OVERLAP and others see it
    assert rows["tensors[].offset"]["status"] == "seen"
    # `naive` (the arena without any reuse, a figure for reports) decides nothing any claim judges
    assert rows["naive"]["status"] == "unseen" and not crashes


def test_a_missing_folder_exits_2(tmp_path, capsys):
    assert main(["--artefacts", str(tmp_path / "none")]) == 2
    assert "not a folder" in capsys.readouterr().err
