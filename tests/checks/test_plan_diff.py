"""``zcspec diff``: two plans of one program compared, a regression judged from the plans alone."""
from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET

import pytest

from zcspec.checks.cli.main import main
from zcspec.checks.plan_diff import diff_plans
from zcspec.spec.observables import plan_from_contract


def _tensor(name, offset, size, first, last, alias_of=None):
    return {"name": name, "region": "act", "offset": offset, "size": size, "aligned_size": size, "first": first,
            "last": last, "block": None, "zero_copy": False, "alias_of": alias_of}


# A donated update: the input's buffer is updated in place and is the output (a donation honoured).
DONATED = {
    "order": ["p", "update", "root"],
    "arenas": {"act": {"kind": "activations", "alignment": 1}, "io": {"kind": "user_io", "alignment": 1}},
    "regions": {"act": 256, "io": 1024},
    "tensors": [
        {**_tensor("param", 0, 1024, 0, 2), "region": "io"},
        _tensor("tmp", 0, 256, 1, 1),
        {**_tensor("out", 0, 1024, 1, 2, alias_of="param"), "region": "io"},
    ],
    "graph_inputs": ["param"], "graph_outputs": ["out"],
    "in_place": [{"step": 1, "tensor": "out", "writes": [{"lo": 0, "hi": 1024}], "reads": [{"lo": 0, "hi": 1024, "to": 0}]}],
}


def _not_donated() -> dict:
    """The next version: the output gets a full-size buffer of its own in the reused arena."""
    plan = copy.deepcopy(DONATED)
    plan["tensors"][2] = _tensor("out", 256, 1024, 1, 2)
    plan["regions"]["act"] = 1280
    del plan["in_place"]
    return plan


def test_a_lost_donation_is_memory_gained_an_alias_lost_and_a_regression():
    diff = diff_plans(plan_from_contract(DONATED), plan_from_contract(_not_donated()))
    assert (diff.old_reused, diff.new_reused, diff.growth) == (256, 1280, 5.0)
    assert [(t.name, t.old, t.new) for t in diff.tensors] == [("out", 0, 1024)]
    assert diff.aliases_lost == (("out", "param"),) and diff.aliases_gained == ()
    assert diff.in_place_lost == (("update", "out"),)
    assert not diff.ok and "grew from 256 to 1,280 bytes" in diff.regressions[0]
    assert [(a.name, a.old, a.new, a.new_lower_bound) for a in diff.arenas] == [("act", 256, 1280, 1280),
                                                                                ("io", 1024, 1024, None)]
    text = "\n".join(diff.lines())
    assert "out: 0 -> 1,024 (+1,024)" in text and "aliases lost: 1" in text and "REGRESSION" in text
    back = diff_plans(plan_from_contract(_not_donated()), plan_from_contract(DONATED))
    assert back.ok and back.aliases_gained == (("out", "param"),)


def test_the_threshold_and_claim_verdicts():
    old, new = plan_from_contract(DONATED), plan_from_contract(_not_donated())
    assert diff_plans(old, new, threshold=4.0).ok and not diff_plans(old, new, threshold=3.9).ok
    clobber = copy.deepcopy(DONATED)            # same arena size, but tmp and a new tensor share bytes at step 2
    clobber["tensors"][1]["last"] = 2
    clobber["tensors"].append(_tensor("late", 0, 256, 2, 2))
    diff = diff_plans(old, plan_from_contract(clobber))
    assert diff.claims == (("LAYOUT-NO-OVERLAP", "not exercised", "violated"), ("LAYOUT-LOWER-BOUND", "held", "violated"))
    assert diff.new_reused == diff.old_reused and len(diff.regressions) == 2
    with pytest.raises(ValueError, match="at least 0"):
        diff_plans(old, new, threshold=-0.1)


def test_the_command_line_exit_codes_json_and_picture(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(DONATED))
    b.write_text(json.dumps(_not_donated()))
    assert main(["diff", str(a), str(a)]) == 0
    assert main(["diff", str(a), str(b), "--picture", str(tmp_path / "d.svg")]) == 1
    assert main(["diff", str(b), str(a)]) == 0
    capsys.readouterr()
    assert main(["diff", str(a), str(b), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["growth"] == 5.0 and data["aliases_lost"] == [["out", "param"]]
    svg = ET.parse(tmp_path / "d.svg").getroot()          # well-formed, two pictures, one scale
    inner = [e for e in svg if e.tag.endswith("svg")]
    assert len(inner) == 2 and int(inner[1].get("height")) > int(inner[0].get("height"))
    (tmp_path / "bad.json").write_text(json.dumps({**DONATED, "regions": {"act": -1, "io": 1024}}))
    assert main(["diff", str(a), str(tmp_path / "bad.json")]) == 2
    with pytest.raises(SystemExit) as info:
        main(["diff", str(a), str(b), "--threshold", "-1"])
    assert info.value.code == 2
