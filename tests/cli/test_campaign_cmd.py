"""``zcspec campaign``'s options reach the campaigns; a misapplied one exits 2."""
from __future__ import annotations

import pytest

from zcspec.checks.cli import campaign_cmd
from zcspec.checks.cli.main import main
from zcspec.checks.foreign.campaign_core import CampaignResult


def _record(calls):
    def campaign(python, **options):
        calls.append(options)
        return CampaignResult(programs=1, clean=1, hazards=0, refused=0, seconds=0.1, finding=None,
                              first_hazard=None, versions={"x": "1"})
    return campaign


@pytest.mark.parametrize("planner, module, expected", [
    ("executorch", "executorch_campaign", ({"higher_order": True}, {"higher_order": False})),
    ("tvm", "tvm_campaign", ({}, {"max_ifs": 0})),
])
def test_no_control_flow_reaches_the_campaign(monkeypatch, capsys, planner, module, expected):
    calls = []
    monkeypatch.setattr(getattr(campaign_cmd, module), "campaign", _record(calls))
    assert main(["campaign", planner, "--examples", "1"]) == 0
    assert main(["campaign", planner, "--examples", "1", "--no-control-flow"]) == 0
    for options, wanted in zip(calls, expected):
        assert {k: options[k] for k in ("higher_order", "max_ifs") if k in options} == wanted
    assert "1 programs" in capsys.readouterr().out


def test_no_control_flow_where_none_is_drawn_exits_2(capsys):
    assert main(["campaign", "litert", "--no-control-flow"]) == 2
    assert "--no-control-flow applies to executorch and tvm" in capsys.readouterr().err
