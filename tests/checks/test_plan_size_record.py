"""The plan-size record (checks/plan_size_record.py): verify holds the zoo's plans to their committed sizes."""
from __future__ import annotations

import json

from zcspec.checks import plan_size_record
from zcspec.checks.cli.conformance import _zoo_plan_sizes
from zcspec.checks.cli.main import main
from zcspec.checks.verify import VerifyConfig, verify
from zcspec.impl.compiler.memory.packing import search

DENSENET = "zoo:densenet121 [plan, compact]"


def test_the_record_is_the_planner_as_it_is():
    record = plan_size_record.load_record()
    assert _zoo_plan_sizes() == record
    assert len(record) > 40 and {label.rsplit("[", 1)[1] for label in record} == {"plan, ge]", "plan, compact]"}


def test_the_record_prints_as_committed(capsys):
    assert main(["conformance", "--plan-record"]) == 0
    assert capsys.readouterr().out == plan_size_record.RECORD.read_text(encoding="utf-8")


def test_a_size_is_judged_only_where_the_record_holds_the_case():
    record = {"m [plan, ge]": {"feature_map": 1024, "zero_copy": 512}}
    assert plan_size_record.differences("m [plan, ge]", {"feature_map": 1024, "zero_copy": 512}, record) is None
    assert plan_size_record.differences("other [plan, ge]", {"feature_map": 1}, record) is None
    why = plan_size_record.differences("m [plan, ge]", {"feature_map": 1536, "zero_copy": 512}, record)
    assert "feature_map 1536 bytes, recorded 1024 (+512)" in why and "zero_copy" not in why


def _densenet_compact(**config):
    return verify(VerifyConfig(models=("zoo:densenet121",), kinds=("plan",), strategies=("compact",), proofs=False,
                               examples=0, corpus=False, **config))


def test_a_search_budget_turned_down_fails_verify_through_the_record(monkeypatch):
    """A mutant of the packer's node budget (2000 + 40n turned into 2000 - 40n) keeps every plan safe, so no
    claim fails, while densenet121's compact feature map grows by about 5%."""
    assert _densenet_compact().errors == []
    monkeypatch.setattr(search, "default_budget", lambda n: int(max(200, min(2000 - 40 * n, 2e7 // max(n, 1)))))
    result = _densenet_compact()
    assert result.findings == []
    (label, message), = result.errors
    assert label == f"plan-size record {DENSENET}" and "feature_map" in message
    assert result.error_kinds == ["check"]
    # on another SoC the record says nothing
    assert _densenet_compact(soc="ascend310p").errors == []


def test_the_record_file_is_the_one_shipped_with_the_package():
    data = json.loads(plan_size_record.RECORD.read_text(encoding="utf-8"))
    assert data["soc"] == plan_size_record.SOC and data["plans"][DENSENET]["feature_map"] > 0
